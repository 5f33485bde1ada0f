// oneDNN convolution anchor (see onednn_conv_anchor.hpp).
#include "onednn_conv_anchor.hpp"

#include <random>
#include <vector>

#ifdef TAIHU_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "onednn_conv_shape.hpp"
#endif

namespace taihu::bench {

#ifdef TAIHU_HAVE_ONEDNN
using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct OnednnConv::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  std::string impl, layout;
  bool ok = false;
};

namespace {
// A 4-D activation desc's layout: plain NCHW / NHWC by strides, or the inner blocks.
std::string layout_name(const memory::desc& md) {
  const auto& b = md.data.format_desc.blocking;
  if (md.data.format_kind != dnnl_blocked) return "other";
  if (b.inner_nblks == 0) {
    if (b.strides[1] >= b.strides[2] && b.strides[2] >= b.strides[3]) return "nchw";
    if (b.strides[1] == 1) return "nhwc";
    return "strided";
  }
  if (b.inner_nblks == 1 && b.inner_idxs[0] == 1) return "nChw" + std::to_string(b.inner_blks[0]) + "c";
  std::string s = "blocked:";
  for (int i = 0; i < b.inner_nblks; ++i) s += std::to_string(b.inner_blks[i]) + "abcd"[b.inner_idxs[i]];
  return s;
}
std::string layout_pair(const memory::desc& src, const memory::desc& dst) {
  const std::string a = layout_name(src), b = layout_name(dst);
  return a == b ? a : a + "->" + b;
}

memory filled(const memory::desc& want, const memory::desc& user, dnnl::engine& eng,
              dnnl::stream& s, unsigned seed) {
  memory u(user, eng);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto* p = static_cast<float*>(u.get_data_handle());
  for (std::size_t i = 0; i < user.get_size() / sizeof(float); ++i) p[i] = dist(rng);
  memory m(want, eng);
  dnnl::reorder(u, m).execute(s, u, m);
  s.wait();
  return m;
}
}  // namespace

OnednnConv::OnednnConv(const dnn::ConvDesc& d, dnn::ConvDirection dir, const std::string& algo)
    : impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  const dnnl::algorithm a = algo == "direct"     ? dnnl::algorithm::convolution_direct
                            : algo == "winograd" ? dnnl::algorithm::convolution_winograd
                                                 : dnnl::algorithm::convolution_auto;
  const OnednnConvShape shape = onednn_conv_shape(d);
  const memory::dims &src = shape.src, &dst = shape.dst, &bias = shape.bias, &wei = shape.wei,
                     &strides = shape.strides, &dil = shape.dilation, &pad_l = shape.pad_l,
                     &pad_r = shape.pad_r;
  const tag wtag = shape.grouped ? tag::goihw : tag::oihw;
  const memory::desc src_any(src, dt::f32, tag::any), dst_any(dst, dt::f32, tag::any),
      wei_any(wei, dt::f32, tag::any), bias_md(bias, dt::f32, tag::x);
  const memory::desc src_user(src, dt::f32, tag::nchw), dst_user(dst, dt::f32, tag::nchw),
      wei_user(wei, dt::f32, wtag);
  try {
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, a, src_any, wei_any,
                                       bias_md, dst_any, strides, dil, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc fpd(fd, I.eng);
    if (dir == dnn::ConvDirection::forward) {
      I.prim = dnnl::convolution_forward(fpd);
      I.impl = fpd.impl_info_str();
      I.layout = layout_pair(fpd.src_desc(), fpd.dst_desc());
      I.args = {{DNNL_ARG_SRC, filled(fpd.src_desc(), src_user, I.eng, I.strm, 1)},
                {DNNL_ARG_WEIGHTS, filled(fpd.weights_desc(), wei_user, I.eng, I.strm, 2)},
                {DNNL_ARG_BIAS, filled(fpd.bias_desc(), bias_md, I.eng, I.strm, 3)},
                {DNNL_ARG_DST, memory(fpd.dst_desc(), I.eng)}};
    } else if (dir == dnn::ConvDirection::backward_data) {
      dnnl::convolution_backward_data::desc bd(a, src_any, wei_any, dst_any, strides, dil, pad_l, pad_r);
      dnnl::convolution_backward_data::primitive_desc bpd(bd, I.eng, fpd);
      I.prim = dnnl::convolution_backward_data(bpd);
      I.impl = bpd.impl_info_str();
      I.layout = layout_pair(bpd.diff_src_desc(), bpd.diff_dst_desc());
      I.args = {{DNNL_ARG_DIFF_DST, filled(bpd.diff_dst_desc(), dst_user, I.eng, I.strm, 4)},
                {DNNL_ARG_WEIGHTS, filled(bpd.weights_desc(), wei_user, I.eng, I.strm, 2)},
                {DNNL_ARG_DIFF_SRC, memory(bpd.diff_src_desc(), I.eng)}};
    } else {
      dnnl::convolution_backward_weights::desc wd(a, src_any, wei_any, bias_md, dst_any, strides,
                                                  dil, pad_l, pad_r);
      dnnl::convolution_backward_weights::primitive_desc wpd(wd, I.eng, fpd);
      I.prim = dnnl::convolution_backward_weights(wpd);
      I.impl = wpd.impl_info_str();
      I.layout = layout_pair(wpd.src_desc(), wpd.diff_dst_desc());
      I.args = {{DNNL_ARG_SRC, filled(wpd.src_desc(), src_user, I.eng, I.strm, 1)},
                {DNNL_ARG_DIFF_DST, filled(wpd.diff_dst_desc(), dst_user, I.eng, I.strm, 4)},
                {DNNL_ARG_DIFF_WEIGHTS, memory(wpd.diff_weights_desc(), I.eng)},
                {DNNL_ARG_DIFF_BIAS, memory(wpd.diff_bias_desc(), I.eng)}};
    }
    I.ok = true;
  } catch (const dnnl::error&) {
    I.ok = false;  // this algorithm is not offered for the problem on this CPU
  }
}

OnednnConv::~OnednnConv() = default;
bool OnednnConv::available() const { return impl_->ok; }
std::string OnednnConv::implementation() const { return impl_->impl; }
std::string OnednnConv::layout() const { return impl_->layout; }
void OnednnConv::run() {
  impl_->prim.execute(impl_->strm, impl_->args);
  impl_->strm.wait();
}
#else
struct OnednnConv::Impl {};
OnednnConv::OnednnConv(const dnn::ConvDesc&, dnn::ConvDirection, const std::string&) {}
OnednnConv::~OnednnConv() = default;
bool OnednnConv::available() const { return false; }
std::string OnednnConv::implementation() const { return "oneDNN not built in"; }
std::string OnednnConv::layout() const { return ""; }
void OnednnConv::run() {}
#endif

}  // namespace taihu::bench
