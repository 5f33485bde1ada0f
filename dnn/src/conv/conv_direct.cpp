// Direct convolution for the two shapes where neither im2col nor Winograd pays:
//   pointwise (1x1 kernel, no padding): y_g = W_g * x_g straight from the input (the
//     input already is the GEMM's B operand: one taihu::gemm per image and group);
//     strided 1x1 gathers L2-sized pixel blocks and multiplies them with weights packed
//     once (gemm::PackedA, cached under WeightsHint::unchanged); backward-data and
//     backward-weights at stride 1.
//   first layers (groups 1, c <= 4, any kernel): a blocked direct kernel over 16 output
//     channels x 6 pixels on a zero-padded input (direct_kernels_<isa>.cpp); forward only
//     (a first layer needs no bottom diff; its weight gradient goes to another algorithm).
#include <algorithm>
#include <cstring>
#include <omp.h>
#include <vector>

#include "conv_algorithm.hpp"
#include "direct_kernels.hpp"
#include "im2col.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/gemm.hpp"
#include "taihu/gemm/packed.hpp"

namespace taihu::dnn::conv {

namespace {

using gemm::Layout;
using gemm::Trans;

bool pointwise(const ConvDesc& d) { return d.kh == 1 && d.kw == 1 && d.pad_h == 0 && d.pad_w == 0; }
bool first_layer(const ConvDesc& d) { return d.groups == 1 && d.c <= 4 && !pointwise(d); }
bool unit_stride(const ConvDesc& d) { return d.stride_h == 1 && d.stride_w == 1; }

DirectRowKernel row_kernel() {
  static const arch::ImplementationList<DirectRowKernel> list(
      "direct conv row kernel", {{"avx2_16x6", arch::Isa::avx2, &direct_row_avx2},
                                 {"generic_16x6", arch::Isa::generic, &direct_row_generic}});
  return list.chosen().impl;
}

class Direct final : public ConvAlgorithm {
 public:
  explicit Direct(const ConvDesc& d)
      : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), plane_(d.out_h() * d.out_w()),
        bwd_data_(d, make_direct) {}

  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) override {
    if (pointwise(d_)) {
      forward_pointwise(x, w, y, hint);
      add_bias(d_, bias, y);
    } else {
      forward_first_layer(x, w, bias, y, hint);  // adds the bias while storing
    }
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override {
    bwd_data_.run(dy, w, dx, hint);
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate) override {
    // Pointwise, stride 1: dW_g (+)= sum_n dy_ng * x_ng^T.
    for (index_t n = 0; n < d_.n; ++n)
      for (index_t g = 0; g < d_.groups; ++g)
        gemm::sgemm(Layout::row_major, Trans::no, Trans::yes, kg_, cg_, plane_, 1.0f,
                    dy + (n * d_.k + g * kg_) * plane_, plane_, x + (n * d_.c + g * cg_) * plane_,
                    plane_, (n == 0 && !accumulate) ? 0.0f : 1.0f, dw + g * kg_ * cg_, cg_);
    bias_gradient(d_, dy, dbias, accumulate);
  }

 private:
  void forward_pointwise(const float* x, const float* w, float* y, WeightsHint hint) {
    const int nt = arch::threads_for_call();
    if (unit_stride(d_)) {
      // Stride 1: one GEMM per image and group straight on x (the input already is the
      // B operand); images in parallel when there are enough, else gemm's own threads.
      const index_t items = d_.n * d_.groups;
      const bool outer = items >= nt && nt > 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (outer)
      for (index_t it = 0; it < items; ++it) {
        const index_t g = it % d_.groups, n = it / d_.groups;
        gemm::sgemm(Layout::row_major, Trans::no, Trans::no, kg_, plane_, cg_, 1.0f, w + g * kg_ * cg_,
                    cg_, x + (n * d_.c + g * cg_) * plane_, plane_, 0.0f,
                    y + (n * d_.k + g * kg_) * plane_, plane_);
      }
      return;
    }
    // Strided: gather L2-sized pixel blocks, multiply them with the pre-packed weights.
    if (hint == WeightsHint::changed || packed_.empty()) {
      packed_.clear();
      for (index_t g = 0; g < d_.groups; ++g)
        packed_.emplace_back(Layout::row_major, Trans::no, kg_, cg_, w + g * kg_ * cg_, cg_);
    }
    const index_t pb = std::min(plane_, std::max<index_t>(16, (192 * 1024 / 4) / cg_ / 16 * 16));
    const index_t blocks = (plane_ + pb - 1) / pb;
    if (bufs_.size() < static_cast<std::size_t>(cg_ * pb * nt))
      bufs_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(cg_ * pb * nt));
    const index_t items = d_.n * d_.groups * blocks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (index_t it = 0; it < items; ++it) {
      const index_t b = it % blocks, g = (it / blocks) % d_.groups, n = it / (blocks * d_.groups);
      const index_t p0 = b * pb, p1 = std::min(plane_, p0 + pb);
      float* buf = bufs_.data() + static_cast<std::size_t>(cg_ * pb) * omp_get_thread_num();
      im2col_pixels(d_, x + (n * d_.c + g * cg_) * d_.h * d_.w, buf, p1 - p0, p0, p1);
      gemm::gemm_packed(Layout::row_major, packed_[g], Trans::no, p1 - p0, 1.0f, buf, p1 - p0, 0.0f,
                        y + (n * d_.k + g * kg_) * plane_ + p0, plane_);
    }
  }

  void forward_first_layer(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) {
    const index_t kb = (d_.k + 15) / 16, rs = d_.kh * d_.kw;
    if (hint == WeightsHint::changed || wblk_.empty()) {  // [kb][c][kh][kw][16]
      wblk_.assign(static_cast<std::size_t>(kb * d_.c * rs * 16), 0.0f);
      for (index_t k = 0; k < d_.k; ++k)
        for (index_t c = 0; c < d_.c; ++c)
          for (index_t p = 0; p < rs; ++p)
            wblk_[static_cast<std::size_t>((((k / 16) * d_.c + c) * rs + p) * 16 + k % 16)] =
                w[(k * d_.c + c) * rs + p];
    }
    const index_t hp = d_.h + 2 * d_.pad_h, wp = d_.w + 2 * d_.pad_w, oh = d_.out_h(), ow = d_.out_w();
    const int nt = arch::threads_for_call();
    xpad_.assign(static_cast<std::size_t>(d_.n * d_.c * hp * wp), 0.0f);
    rows_.resize(static_cast<std::size_t>(ow * 16 * nt));
    const DirectRowKernel kernel = row_kernel();
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
#pragma omp for schedule(static)
      for (index_t nc = 0; nc < d_.n * d_.c; ++nc)
        for (index_t iy = 0; iy < d_.h; ++iy)
          std::memcpy(xpad_.data() + (nc * hp + iy + d_.pad_h) * wp + d_.pad_w,
                      x + (nc * d_.h + iy) * d_.w, sizeof(float) * d_.w);
      float* out = rows_.data() + static_cast<std::size_t>(ow * 16) * omp_get_thread_num();
#pragma omp for schedule(static)
      for (index_t it = 0; it < d_.n * kb * oh; ++it) {
        const index_t oy = it % oh, b = (it / oh) % kb, n = it / (oh * kb);
        DirectRowArgs a{xpad_.data() + (n * d_.c * hp + oy * d_.stride_h) * wp, d_.c, d_.kh, d_.kw,
                        hp * wp, wp, d_.stride_w, d_.dil_h, d_.dil_w,
                        wblk_.data() + b * d_.c * rs * 16, ow, out};
        kernel(a);
        for (index_t l = 0; l < 16 && b * 16 + l < d_.k; ++l) {
          float* yr = y + ((n * d_.k + b * 16 + l) * oh + oy) * ow;
          const float bv = bias ? bias[b * 16 + l] : 0.0f;
          for (index_t ox = 0; ox < ow; ++ox) yr[ox] = out[ox * 16 + l] + bv;
        }
      }
    }
  }

  ConvDesc d_;
  index_t kg_, cg_, plane_;
  std::vector<gemm::PackedA<float>> packed_;
  arch::AlignedBuffer<float> bufs_;
  std::vector<float> wblk_, xpad_, rows_;
  TransposedBackwardData bwd_data_;
};

}  // namespace

bool direct_supports(const ConvDesc& d, ConvDirection dir) {
  if (dir == ConvDirection::forward) return pointwise(d) || first_layer(d);
  return pointwise(d) && unit_stride(d);
}
std::unique_ptr<ConvAlgorithm> make_direct(const ConvDesc& d) { return std::make_unique<Direct>(d); }

}  // namespace taihu::dnn::conv
