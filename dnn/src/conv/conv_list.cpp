// The ordered convolution implementation list (fastest family first, reference last),
// the `automatic` choice (tuning record, then heuristic) and the Convolution object
// that runs the chosen algorithm per direction. TAIHU_VERBOSE=1 logs every choice.
#include <array>
#include <map>
#include <string>

#include "conv_algorithm.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/layout.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace taihu::dnn {

namespace {

struct Entry {
  ConvAlgo algo;
  conv::SupportsFn supports;
  conv::MakeFn make;
};

// The ordered implementation list: winograd (cheapest arithmetic) first, the
// reference last. The heuristic below picks among the supporting entries.
const std::array<Entry, 6>& entries() {
  static const std::array<Entry, 6> list = {{
      {ConvAlgo::winograd_4x4, conv::winograd_4x4_supports, conv::make_winograd_4x4},
      {ConvAlgo::winograd_2x2, conv::winograd_2x2_supports, conv::make_winograd_2x2},
      {ConvAlgo::direct, conv::direct_supports, conv::make_direct},
      {ConvAlgo::implicit_gemm, conv::implicit_gemm_supports, conv::make_implicit_gemm},
      {ConvAlgo::explicit_gemm, conv::explicit_gemm_supports, conv::make_explicit_gemm},
      {ConvAlgo::reference, conv::reference_supports, conv::make_reference},
  }};
  return list;
}

const Entry& entry_of(ConvAlgo a) {
  for (const auto& e : entries())
    if (e.algo == a) return e;
  throw Error(std::string("taihu: conv: no implementation entry for ") + to_string(a));
}

// Heuristic (measured on Zen 3 AVX2, see dnn/README.md): Winograd for 3x3 and 5x5
// stride-1 layers with enough channels to amortise the transforms (F(4x4) unless the output is
// tiny; for backward-weights by tile count), the direct kernel for other forward and
// stride-1 backward-data passes (1x1 layers: its pointwise kernel) and for
// backward-weights except widening 1x1 layers (GEMM on the tensors), im2col + GEMM for
// the rest.
ConvAlgo heuristic(const ConvDesc& d, ConvDirection dir, std::string& why) {
  const index_t cg = d.c / d.groups, kg = d.k / d.groups;
  const bool big_enough = cg >= 16 && kg >= 16;
  const bool pointwise = d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 &&
                         d.pad_w == 0 && d.dil_h == 1 && d.dil_w == 1;
  // 5x5 stride 1: Winograd F(2x2,5x5) does 9 multiplies per output instead of 25.
  // With >= 32 channels each way it beats the direct kernel in every direction
  // (AlexNet conv2 1.2-1.3x oneDNN vs 0.7x direct; CIFAR-10 conv2 1.0-1.06x forward and
  // backward-data vs 0.65x, backward-weights 1.2x vs 0.96x). LeNet conv2 (20 input
  // channels) stays direct (1.1-1.2x).
  const bool five = d.kh == 5 && d.kw == 5 && cg >= 32 && kg >= 32;
  if (five && conv_supports(ConvAlgo::winograd_2x2, d, dir)) {
    why = "5x5 stride 1, >= 32 channels: F(2x2,5x5)";
    return ConvAlgo::winograd_2x2;
  }
  if (dir == ConvDirection::backward_weights) {
    // Backward-weights reduces over tiles: each alpha^2 GEMM is as deep as the tile
    // count, so only images with enough 4x4 tiles pay for the transforms (F(2x2) and
    // smaller images measured slower than one deep GEMM).
    const index_t tiles = d.n * ((d.out_h() + 3) / 4) * ((d.out_w() + 3) / 4);
    if (big_enough && tiles >= 48 && conv_supports(ConvAlgo::winograd_4x4, d, dir)) {
      why = "3x3 stride 1, >= 16 channels, >= 48 4x4 tiles";
      return ConvAlgo::winograd_4x4;
    }
    // 1x1: dW = dY X^T. The direct kernel (dY^T vectors x input broadcasts) measured
    // faster than GEMM on the tensors when the layer narrows (ResNet-50 256 -> 64:
    // 56 vs 49 GFLOP/s), slower when it widens, even on the exchanged problem that it
    // runs then (64 -> 256, 1 thread: 57-71 vs 71-77; 2 threads: 85-110 vs 100-118).
    if (pointwise && kg > cg) {
      why = "1x1 stride 1, widening: GEMM on the tensors in place";
      return ConvAlgo::explicit_gemm;
    }
    // Strided 1x1 (ResNet-50's downsampling shortcuts): a short reduction over a small
    // output plane for a large dw; the direct tiles' dw updates dominate (0.4-0.5x
    // oneDNN on 512 -> 2048 s2 and 256 -> 512 s2), GEMM on the subsampled input
    // measured 0.83-1.08x.
    if (d.kh == 1 && d.kw == 1 && (d.stride_h > 1 || d.stride_w > 1) && conv_supports(ConvAlgo::explicit_gemm, d, dir)) {
      why = "1x1 strided: GEMM on the subsampled input";
      return ConvAlgo::explicit_gemm;
    }
    why = "direct kernel, no column matrix";
    return ConvAlgo::direct;
  }
  if (big_enough && d.out_h() * d.out_w() >= 36 && conv_supports(ConvAlgo::winograd_4x4, d, dir)) {
    why = "3x3 stride 1, >= 16 channels, output >= 6x6";
    return ConvAlgo::winograd_4x4;
  }
  if (big_enough && d.kh == 3 && conv_supports(ConvAlgo::winograd_2x2, d, dir)) {
    why = "3x3 stride 1, >= 16 channels, small output";
    return ConvAlgo::winograd_2x2;
  }
  if (pointwise) {
    // 1x1: the direct algorithm's pointwise kernel (x in L1-sized strips, 4 x 24
    // register tiles, no B panel); backward-data is the same on W^T (ResNet-50 1x1,
    // 1 thread, cold caches: forward 81 vs 63-73 GFLOP/s for GEMM, backward-data 67-69
    // vs 49-67 for GEMM with pre-packed W^T).
    why = "1x1 stride 1: pointwise direct kernel";
    return ConvAlgo::direct;
  }
  // Backward-data runs as the forward pass of the transposed problem, a "full"
  // convolution over dY padded by the kernel size: unpadded layers on small images
  // (LeNet conv2: 12x12 from 8x8) would multiply mostly zeros, so they take GEMM +
  // col2im, which does only the useful products.
  // Its output channels are the layer's input channels: one or two (LeNet conv1) leave
  // the 4-channel register tile mostly empty.
  // Strided 1x1 (ResNet-50's downsampling shortcuts): the direct algorithm runs its
  // pointwise kernel on the subsampled input (0.82-0.92x oneDNN vs 0.71-0.74x for
  // implicit GEMM at 28x28 and at batch 32), except on tiny outputs (7x7, batch 1:
  // 0.70-0.73x vs 0.79-0.81x).
  if (dir == ConvDirection::forward && d.kh == 1 && d.kw == 1 && d.pad_h == 0 && d.pad_w == 0 &&
      d.n * d.out_h() * d.out_w() >= 256) {
    why = "1x1 strided: subsampled input, pointwise direct kernel";
    return ConvAlgo::direct;
  }
  // Strided layers past the first (ResNet-50's 3x3 s2 and 1x1 s2 downsampling): the
  // direct kernel's phase-split input cuts its taps into short runs (0.3-0.5x oneDNN);
  // implicit GEMM packs the strided windows once per panel (0.78-0.83x).
  if (dir == ConvDirection::forward && (d.stride_h > 1 || d.stride_w > 1) && cg > 4 &&
      conv_supports(ConvAlgo::implicit_gemm, d, dir)) {
    why = "strided, > 4 input channels: implicit GEMM";
    return ConvAlgo::implicit_gemm;
  }
  const double transposed_waste = static_cast<double>(d.h * d.w) / static_cast<double>(d.out_h() * d.out_w());
  if (conv_supports(ConvAlgo::direct, d, dir) &&
      (dir == ConvDirection::forward || (transposed_waste <= 1.4 && cg >= 3))) {
    why = "not a Winograd shape: register-blocked direct kernel";
    return ConvAlgo::direct;
  }
  why = "strided, unpadded small-image or 1-2 channel backward-data: GEMM + col2im";
  return ConvAlgo::explicit_gemm;
}

ConvAlgo choose(const ConvDesc& d, ConvAlgo requested, ConvDirection dir) {
  const std::string key = d.str();
  if (requested != ConvAlgo::automatic) {
    if (conv_supports(requested, d, dir)) {
      arch::log_verbose("conv: %s %s -> %s (requested)", key.c_str(), to_string(dir), to_string(requested));
      return requested;
    }
    if (dir == ConvDirection::forward)
      throw Error(std::string("taihu: conv: algorithm ") + to_string(requested) +
                  " does not support problem " + key);
    // A backward direction the requested algorithm lacks: fall through to automatic.
  }
  const char* isa = arch::isa_name(arch::active_isa());
  const int threads = arch::threads_for_call();
  if (auto rec = tuning_records_from_env().best("conv2d", key, to_string(dir), isa, threads)) {
    const ConvAlgo a = parse_conv_algo(rec->algo);
    if (a != ConvAlgo::automatic && conv_supports(a, d, dir)) {
      arch::log_verbose("conv: %s %s -> %s (tuning record, %s %d threads, %.3g s)", key.c_str(),
                        to_string(dir), to_string(a), isa, threads, rec->median_s);
      return a;
    }
  }
  std::string why;
  const ConvAlgo a = heuristic(d, dir, why);
  arch::log_verbose("conv: %s %s -> %s (heuristic: %s%s)", key.c_str(), to_string(dir), to_string(a),
                    why.c_str(), requested != ConvAlgo::automatic ? "; requested algorithm lacks this direction" : "");
  return a;
}

void require(const void* p, const char* routine, const char* name) {
  if (p == nullptr) throw Error(std::string("taihu: conv ") + routine + ": " + name + " is null");
}

}  // namespace

bool conv_supports(ConvAlgo algo, const ConvDesc& d, ConvDirection dir) {
  if (algo == ConvAlgo::automatic) return true;
  return entry_of(algo).supports(d, dir);
}

std::vector<ConvAlgo> conv_candidates(const ConvDesc& d, ConvDirection dir) {
  std::vector<ConvAlgo> out;
  for (const auto& e : entries())
    if (e.supports(d, dir)) out.push_back(e.algo);
  return out;
}

const char* to_string(ActLayout layout) {
  switch (layout) {
    case ActLayout::nchw: return "nchw";
    case ActLayout::nchw8c: return "nChw8c";
  }
  return "?";
}

std::string to_string(const ConvLayout& layout) {
  if (layout.src == layout.dst) return to_string(layout.src);
  return std::string(to_string(layout.src)) + "->" + to_string(layout.dst);
}

ActLayout parse_act_layout(const std::string& name) {
  if (name == "nchw" || name == "NCHW") return ActLayout::nchw;
  if (name == "nChw8c" || name == "nchw8c") return ActLayout::nchw8c;
  throw Error("taihu: conv: unknown activation layout '" + name + "' (expected nchw or nChw8c)");
}

ConvLayout parse_conv_layout(const std::string& name) {
  const auto arrow = name.find("->");
  if (arrow == std::string::npos) {
    const ActLayout l = parse_act_layout(name);
    return {l, l};
  }
  return {parse_act_layout(name.substr(0, arrow)), parse_act_layout(name.substr(arrow + 2))};
}

index_t conv_tensor_elements(const ConvDesc& d, bool dst, ActLayout layout) {
  const index_t c = dst ? d.k : d.c, h = dst ? d.out_h() : d.h, w = dst ? d.out_w() : d.w;
  return layout == ActLayout::nchw8c ? nchw8c_elements(d.n, c, h, w) : d.n * c * h * w;
}

ConvLayout preferred_layout(const ConvDesc& d) {
  const ConvLayout blocked{ActLayout::nchw8c, ActLayout::nchw8c};
  if (conv::blocked_native(d, ConvDirection::forward, blocked)) return blocked;
  const ConvLayout first{ActLayout::nchw, ActLayout::nchw8c};
  if (conv::blocked_native(d, ConvDirection::forward, first)) return first;
  return {};
}

namespace {

void check_layout(ActLayout l, const char* which) {
  if (l != ActLayout::nchw && l != ActLayout::nchw8c)
    throw Error(std::string("taihu: conv: layout.") + which + " = " + std::to_string(static_cast<int>(l)) +
                " is not an ActLayout (nchw or nChw8c)");
}

// NCHW <-> the caller's layout around an NCHW algorithm (a no-op for NCHW).
struct Reorderer {
  index_t n, c, h, w;
  ActLayout layout;
  std::vector<float> buf;
  bool blocked() const { return layout == ActLayout::nchw8c; }
  // The caller's tensor as NCHW.
  const float* in(const float* p) {
    if (!blocked()) return p;
    buf.resize(static_cast<std::size_t>(n * c * h * w));
    reorder_nchw8c_to_nchw(p, buf.data(), n, c, h, w);
    return buf.data();
  }
  // Where the NCHW algorithm writes an output of this shape.
  float* out(float* p) {
    if (!blocked()) return p;
    buf.resize(static_cast<std::size_t>(n * c * h * w));
    return buf.data();
  }
  void finish(float* p) {
    if (blocked()) reorder_nchw_to_nchw8c(buf.data(), p, n, c, h, w);
  }
};

}  // namespace

struct Convolution::Impl {
  ConvDesc desc;
  ConvLayout layout;
  std::array<ConvAlgo, 3> algo{};
  std::array<bool, 3> blocked_native{};  // runs on the blocked tensors as they are
  std::map<ConvAlgo, std::unique_ptr<conv::ConvAlgorithm>> instances;
  std::unique_ptr<conv::ConvAlgorithm> blocked;
  Reorderer src, dst;

  bool native(ConvDirection dir) const {
    return layout == ConvLayout{} || blocked_native[static_cast<int>(dir)];
  }
  conv::ConvAlgorithm& instance(ConvDirection dir) {
    if (blocked_native[static_cast<int>(dir)]) {
      if (!blocked) blocked = conv::make_blocked(desc, layout);
      return *blocked;
    }
    const ConvAlgo a = algo[static_cast<int>(dir)];
    auto& p = instances[a];
    if (!p) p = entry_of(a).make(desc);
    return *p;
  }
};

Convolution::Convolution(const ConvDesc& d, ConvAlgo algo) : Convolution(d, algo, ConvLayout{}) {}

Convolution::Convolution(const ConvDesc& d, ConvAlgo algo, ConvLayout layout) : impl_(std::make_unique<Impl>()) {
  d.validate();
  check_layout(layout.src, "src");
  check_layout(layout.dst, "dst");
  impl_->desc = d;
  impl_->layout = layout;
  impl_->src = {d.n, d.c, d.h, d.w, layout.src, {}};
  impl_->dst = {d.n, d.k, d.out_h(), d.out_w(), layout.dst, {}};
  const std::string key = d.str();
  for (ConvDirection dir :
       {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights}) {
    const int i = static_cast<int>(dir);
    if (layout != ConvLayout{} && (algo == ConvAlgo::automatic || algo == ConvAlgo::direct) &&
        conv::blocked_native(d, dir, layout)) {
      impl_->algo[i] = ConvAlgo::direct;
      impl_->blocked_native[i] = true;
      arch::log_verbose("conv: %s %s -> direct (%s native kernel)", key.c_str(), to_string(dir),
                        to_string(layout).c_str());
      continue;
    }
    impl_->algo[i] = choose(d, algo, dir);
    if (layout != ConvLayout{})
      arch::log_verbose("conv: %s %s: %s tensors reordered to NCHW around %s", key.c_str(), to_string(dir),
                        to_string(layout).c_str(), to_string(impl_->algo[i]));
  }
}

Convolution::~Convolution() = default;
Convolution::Convolution(Convolution&&) noexcept = default;
Convolution& Convolution::operator=(Convolution&&) noexcept = default;

const ConvDesc& Convolution::desc() const { return impl_->desc; }
ConvAlgo Convolution::algorithm() const { return algorithm(ConvDirection::forward); }
ConvAlgo Convolution::algorithm(ConvDirection dir) const { return impl_->algo[static_cast<int>(dir)]; }
ConvLayout Convolution::layout() const { return impl_->layout; }
bool Convolution::layout_native(ConvDirection dir) const { return impl_->native(dir); }

void Convolution::forward(const float* x, const float* w, const float* bias, float* y,
                          WeightsHint hint) {
  require(x, "forward", "x");
  require(w, "forward", "w");
  require(y, "forward", "y");
  Impl& I = *impl_;
  if (I.native(ConvDirection::forward)) {
    I.instance(ConvDirection::forward).forward(x, w, bias, y, hint);
    return;
  }
  I.instance(ConvDirection::forward).forward(I.src.in(x), w, bias, I.dst.out(y), hint);
  I.dst.finish(y);
}

void Convolution::backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) {
  require(dy, "backward_data", "dy");
  require(w, "backward_data", "w");
  require(dx, "backward_data", "dx");
  Impl& I = *impl_;
  if (I.native(ConvDirection::backward_data)) {
    I.instance(ConvDirection::backward_data).backward_data(dy, w, dx, hint);
    return;
  }
  I.instance(ConvDirection::backward_data).backward_data(I.dst.in(dy), w, I.src.out(dx), hint);
  I.src.finish(dx);
}

void Convolution::backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                                   bool accumulate) {
  require(x, "backward_weights", "x");
  require(dy, "backward_weights", "dy");
  require(dw, "backward_weights", "dw");
  Impl& I = *impl_;
  if (I.native(ConvDirection::backward_weights)) {
    I.instance(ConvDirection::backward_weights).backward_weights(x, dy, dw, dbias, accumulate);
    return;
  }
  I.instance(ConvDirection::backward_weights).backward_weights(I.src.in(x), I.dst.in(dy), dw, dbias, accumulate);
}

}  // namespace taihu::dnn
