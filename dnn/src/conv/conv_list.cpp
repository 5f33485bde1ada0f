// The ordered convolution implementation list (as oneDNN's cpu_convolution_list.cpp):
// every kernel family is one entry that accepts or declines (desc, direction, layout,
// ISA) and says whether it is profitable there (the measured heuristic, with the
// measurements in the comments). The list order is the preference: `automatic` takes a
// tuning record when one applies, else the first entry that supports the problem and
// is profitable. Also the Convolution object that runs each direction's entry (between
// reorders where the entry is not native to the requested layout), its timed selection
// and its saved choice. TAIHU_VERBOSE=1 logs every choice and one line per call.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <time.h>

#include "conv_algorithm.hpp"
#include "conv_direct_weight_lanes.hpp"
#include "conv_pointwise.hpp"
#include "conv_threads.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/layout.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace taihu::dnn {

namespace {

using Dir = ConvDirection;
constexpr Dir kDirections[] = {Dir::forward, Dir::backward_data, Dir::backward_weights};
constexpr ConvLayout kNchw{};
constexpr ConvLayout kBlocked{ActLayout::nchw8c, ActLayout::nchw8c};
constexpr ConvLayout kBlocked16{ActLayout::nchw16c, ActLayout::nchw16c};
constexpr ConvLayout kFirstLayerOut{ActLayout::nchw, ActLayout::nchw8c};

index_t cg_of(const ConvDesc& d) { return d.c / d.groups; }
index_t kg_of(const ConvDesc& d) { return d.k / d.groups; }
bool one_by_one(const ConvDesc& d) { return d.kh == 1 && d.kw == 1; }
bool strided(const ConvDesc& d) { return d.stride_h > 1 || d.stride_w > 1; }
// Winograd amortises its transforms only with enough channels each way.
bool wide(const ConvDesc& d) { return cg_of(d) >= 16 && kg_of(d) >= 16; }
// Backward-data as the forward pass of the transposed problem is a "full" convolution
// over dY padded by the kernel size: unpadded layers on small images (LeNet conv2:
// 12x12 from 8x8) would multiply mostly zeros, so they take GEMM + col2im, which does
// only the useful products; one or two output channels there (the layer's input
// channels, LeNet conv1) leave the 4-channel register tile mostly empty.
bool transposed_worthwhile(const ConvDesc& d) {
  const double waste = static_cast<double>(d.h * d.w) / static_cast<double>(d.out_h() * d.out_w());
  return waste <= 1.4 && cg_of(d) >= 3;
}

struct Entry {
  ConvAlgo algo;
  // Whether the entry computes (d, dir) for tensors in `layout`: NCHW entries accept
  // every layout (they run between reorders), native ones only theirs.
  bool (*supports)(const ConvDesc&, Dir, const ConvLayout&, arch::Isa);
  // Whether it runs on the layout's tensors as they are (no reorders).
  bool (*native)(const ConvDesc&, Dir, const ConvLayout&);
  // The measured heuristic: whether `automatic` takes it when it is the first
  // supporting entry.
  bool (*profitable)(const ConvDesc&, Dir);
  // The object, for tensors in `native_layout` (the entry's native non-NCHW layout, or
  // kNchw: the NCHW tensors or copies).
  std::unique_ptr<conv::ConvAlgorithm> (*make)(const ConvDesc&, const ConvLayout& native_layout);
  // Whether its forward applies the post-ops in its kernels (forward_fused) for tensors
  // in `layout` (the entry supporting forward there); null: never (a separate pass).
  bool (*fuses)(const ConvDesc&, const ConvLayout&, const ConvPostOps&) = nullptr;
};

bool nchw_native(const ConvDesc&, Dir, const ConvLayout& l) { return l == kNchw; }
bool always(const ConvDesc&, Dir) { return true; }

// The direct family's kernels apply bias, sum and ReLU as they store each tile (on the
// NCHW tensors, including the NCHW copies between reorders).
bool fuses_all(const ConvDesc&, const ConvLayout&, const ConvPostOps&) { return true; }

// --- pointwise_blocked: 1x1 stride-1 unpadded on nChw8c, every direction; on nChw16c
// with AVX-512 (its 16-lane kernels; below AVX-512 nChw16c runs NCHW entries between
// reorders) -------------------------------------------------------------------------
bool pointwise_blocked_supports(const ConvDesc& d, Dir, const ConvLayout& l, arch::Isa isa) {
  return (l == kBlocked || (l == kBlocked16 && isa == arch::Isa::avx512)) && d.groups == 1 &&
         conv::pointwise_shape(d);
}
bool native_always(const ConvDesc&, Dir, const ConvLayout&) { return true; }
// Its profitable() is `always`. (At AVX-512 it used to decline backward-weights with
// fewer than 128 pixels and >= 1 Mi weights, ResNet-50 res5 2048->512 7x7 at batch 1,
// for GEMM between reorders; the nChw16c input-lanes tile now beats that: 136.3-147.2
// vs 124.9-132.0 GFLOP/s, 0.81-0.88x oneDNN vs 0.77-0.84x, 1 thread,
// bench/results/2026-11-28-xeon-dnn-res4.md.)
std::unique_ptr<conv::ConvAlgorithm> make_pointwise_blocked(const ConvDesc& d, const ConvLayout& l) {
  return conv::make_pointwise_blocked(d, l == kBlocked16 ? 16 : 8);
}

// --- first_layer: <= 4 input channels per group, vectorised along output channels ----
bool first_layer_native(const ConvDesc& d, Dir dir, const ConvLayout& l) {
  return l == kFirstLayerOut && d.groups == 1 && dir != Dir::backward_data;
}
bool first_layer_supports(const ConvDesc& d, Dir dir, const ConvLayout& l, arch::Isa isa) {
  if (first_layer_native(d, dir, l) && conv::direct_first_layer_nchw8c(d, isa)) return true;
  return conv::direct_kernel_supports(conv::DirectKernel::first_layer, d, dir);
}
// Strided first layers: the pixel-vector tile's taps split into runs of 2-4 by the
// phase-split input measured 0.70x oneDNN on ResNet-50 conv1 and AlexNet conv1, this
// kernel 0.85-0.96x; stride 1 with whole 32-channel tiles (CIFAR-10 conv1, 3 -> 32):
// 0.74x vs 0.53x. (direct_first_layer() keeps LeNet conv1, 1 -> 20, in NCHW on the
// pixel tile: 1.0x vs 0.7-0.9x; at AVX2 its nChw8c output is native here, see
// direct_first_layer_nchw8c.) Backward-data (a layer narrowing to <= 4 channels): as direct's.
bool first_layer_profitable(const ConvDesc& d, Dir dir) {
  return dir != Dir::backward_data || transposed_worthwhile(d);
}
// Writing nChw8c in place, the tiles start from the bias: ReLU is a pass over each
// finished chunk while it is in cache; a sum is not fused there.
bool first_layer_fuses(const ConvDesc& d, const ConvLayout& l, const ConvPostOps& post) {
  return !(first_layer_native(d, Dir::forward, l) && l != kNchw && post.sum);
}
std::unique_ptr<conv::ConvAlgorithm> make_first_layer(const ConvDesc& d, const ConvLayout& l) {
  return l != kNchw ? conv::make_direct_nchw8c_out(d) : conv::make_direct_kernel(d, conv::DirectKernel::first_layer);
}

// --- direct_input_lanes: backward-weights of stride-1 undilated one-group layers, the
// 1x1 nChw16c input-lanes tile per kernel tap (conv_direct_input_lanes.cpp) ----------
bool direct_input_lanes_supports(const ConvDesc& d, Dir dir, const ConvLayout&, arch::Isa) {
  return conv::direct_input_lanes_supports(d, dir);
}
// Taken at AVX-512 (its 16-lane tile; the generic loops only keep it testable
// elsewhere) on 3x3 layers of >= 128 x 128 channels whose padded blocked x and dY fit
// in 1 MiB of L2 (every unit re-reads them). GFLOP/s at 1 thread, batch 1, against the entry taken before (2026-11-28,
// bench/results/2026-11-28-xeon-dnn-remaining.md): ResNet-50 res3 3x3 (28x28, 128)
// 163-165 vs winograd_4x4 86, res4 (14x14, 256) 137-146 vs direct 113-127, res5 (7x7,
// 512) 84-88 vs direct 68-71; res2 (56x56, 64: 1.6 MiB) 126-131 vs winograd_4x4 122,
// level: left to Winograd.
// On AMD (Zen 4: AVX-512 as 2 x 256 bits, bench/results/2026-11-28-zen4-dnn-bwdw2.md)
// F(4x4) wins where it has >= 48 tiles: res3 1 thread winograd_4x4 1.35-1.44x oneDNN
// against 0.95x here (2 threads, quiet: 1.07-1.18x against 0.83-0.93x); res4 / res5
// (fewer tiles) stay here.
bool direct_input_lanes_profitable(const ConvDesc& d, Dir dir) {
  if (dir != Dir::backward_weights || arch::active_isa() != arch::Isa::avx512) return false;
  if (d.kh != 3 || d.kw != 3 || cg_of(d) < 128 || kg_of(d) < 128) return false;  // (unmeasured elsewhere)
  const index_t tiles = d.n * ((d.out_h() + 3) / 4) * ((d.out_w() + 3) / 4);
  if (tiles >= 48 && arch::cpu_features().amd()) return false;
  const index_t xbytes = d.n * ((d.c + 15) / 16 * 16) * (d.h + 2 * d.pad_h) * (d.w + 2 * d.pad_w) * 4;
  const index_t ybytes = d.n * ((d.k + 15) / 16 * 16) * d.out_h() * d.out_w() * 4;
  return xbytes + ybytes <= (index_t{1} << 20);
}
std::unique_ptr<conv::ConvAlgorithm> make_direct_input_lanes(const ConvDesc& d, const ConvLayout&) {
  return conv::make_direct_input_lanes(d);
}

// --- direct_weight_lanes: forward and backward-data of stride-1 undilated one-group
// layers, output channels in the vector lanes (conv_direct_weight_lanes.cpp) ----------
bool direct_weight_lanes_supports(const ConvDesc& d, Dir dir, const ConvLayout&, arch::Isa) {
  return conv::direct_weight_lanes_supports(d, dir);
}
// Taken at AVX-512 (its 16-lane tile; the generic loops only keep it testable
// elsewhere) with 2 or more threads, forward and backward-data, on 3x3 layers with
// >= 256 x 256 channels and <= 64 output pixels in the batch (ResNet-50 res5 at batch
// 1: 9 MiB of weights for 49 pixels), ahead of winograd_2x2, which F(4x4) leaves them
// to: F(2x2)'s 16 transformed weight matrices (16 MiB at 512 x 512) are streamed per
// call, and two threads share the bandwidth. AMD EPYC Zen 4 (AVX-512 as 2 x 256 bits),
// 2026-11-28, GFLOP/s against oneDNN 2.6 in the same run, bench/results/2026-11-28-zen4-dnn-res5.md:
//   res5, 2 threads, three alternations: forward 196-207 (1.01-1.04x) vs winograd_2x2
//   153-155 (0.77-0.79x); backward-data 199-212 (0.97-1.04x) vs 132-144 (0.64-0.70x)
//   (another window: 211 / 210 vs 221 / 181).
//   res5, 1 thread: forward 105-108 (1.04-1.09x) vs winograd_2x2 109-123 (1.09-1.20x),
//   backward-data 102-108 (0.99-1.04x) vs 107-112 (1.02-1.12x): F(2x2) kept there.
//   res4 (14x14, 196 pixels): 110-111 (0.95x) vs 161-165 (1.41-1.44x) at 1 thread,
//   210 vs 305 at 2: F(2x2).
// Unmeasured on Intel (two 512-bit FMA pipes), where res5 forward read winograd_2x2
// 0.75x oneDNN at 1 thread (2026-11-28-xeon-dnn-res4.md): `conv_cputime
// --algo=direct_weight_lanes` there decides whether 1 thread belongs here too.
bool direct_weight_lanes_profitable(const ConvDesc& d, Dir dir) {
  if (dir == Dir::backward_weights || arch::active_isa() != arch::Isa::avx512 || arch::threads_for_call() < 2)
    return false;
  return d.kh == 3 && d.kw == 3 && cg_of(d) >= 256 && kg_of(d) >= 256 && d.n * d.out_h() * d.out_w() <= 64;
}
std::unique_ptr<conv::ConvAlgorithm> make_direct_weight_lanes(const ConvDesc& d, const ConvLayout&) {
  return conv::make_direct_weight_lanes(d);
}

// --- Winograd ------------------------------------------------------------------------
bool winograd_4x4_supports(const ConvDesc& d, Dir dir, const ConvLayout&, arch::Isa) {
  return conv::winograd_4x4_supports(d, dir);
}
bool winograd_2x2_supports(const ConvDesc& d, Dir dir, const ConvLayout&, arch::Isa) {
  return conv::winograd_2x2_supports(d, dir);
}
// F(4x4,3x3) with >= 16 channels each way: forward and backward-data on outputs of at
// least 6x6 (smaller ones leave most of a 4x4 tile's outputs unused: F(2x2) there).
// Backward-weights reduces over tiles: each alpha^2 GEMM is as deep as the tile count,
// so only images with >= 48 4x4 tiles pay for the transforms (F(2x2) and smaller images
// measured slower than one deep GEMM); at AVX-512 direct_input_lanes takes those it
// is profitable on (ResNet-50 res3 28x28: 163-165 vs 86 GFLOP/s).
// At AVX-512, forward and backward-data of layers with >= 256 x 256 channels and fewer
// than 48 tiles in the batch also take F(2x2) (the 36 transformed weight matrices of
// F(4x4), >= 9 MiB there, each serve only a few tiles): ResNet-50 res4 3x3 (14x14, 256,
// batch 1) F(2x2) 168.6 / 183.4 GFLOP/s vs F(4x4) 122.4 / 121.2, 1.13x / 1.20x oneDNN
// instead of 0.77x; res5 (7x7, 512) 99.4 / 91.0 vs 60.3 / 59.8, 0.82x / 0.74x instead of
// 0.48x / 0.51x; 1 thread, bench/results/2026-11-28-xeon-dnn-res4.md (res3 28x28 at
// 49 tiles and res2 stay with F(4x4), 1.06-1.09x; F(2x2) 4-5% faster, within noise).
// (With 2 threads direct_weight_lanes, earlier in the list, takes res5 forward and
// backward-data from F(2x2).)
bool winograd_4x4_profitable(const ConvDesc& d, Dir dir) {
  if (!wide(d)) return false;
  const index_t tiles = d.n * ((d.out_h() + 3) / 4) * ((d.out_w() + 3) / 4);
  if (dir == Dir::backward_weights)
    return tiles >= 48 && !(conv::direct_input_lanes_supports(d, dir) && direct_input_lanes_profitable(d, dir));
  if (arch::active_isa() == arch::Isa::avx512 && tiles < 48 && cg_of(d) * kg_of(d) >= 256 * 256) return false;
  return d.out_h() * d.out_w() >= 36;
}
// 5x5 stride 1: F(2x2,5x5) does 9 multiplies per output instead of 25. With >= 32
// channels each way it beats the direct kernel in every direction (AlexNet conv2
// 1.2-1.3x oneDNN vs 0.7x direct; CIFAR-10 conv2 1.0-1.06x forward and backward-data
// vs 0.65x, backward-weights 1.2x vs 0.96x); LeNet conv2 (20 input channels) stays
// direct (1.1-1.2x). 3x3 with >= 16 channels and a small output: F(2x2,3x3) forward and
// backward-data.
// Backward-weights at AVX-512 on AMD: 3x3 layers with >= 256 x 256 channels that F(4x4)
// leaves (< 48 4x4 tiles) but with >= 48 2x2 tiles, ahead of direct_input_lanes:
// ResNet-50 res4 (14x14, batch 1) on Zen 4 105.8-112.3 GFLOP/s vs 99.7-100.0 at 1 thread
// (bench/results/2026-11-28-zen4-dnn-winograd.md); at 2 threads, since the xi split
// writes dU with its first GEMM and the dw scatter prefetches, 253.2-265.5 vs 198.1-201.8,
// 1.21x vs 0.95x oneDNN 2.6 in the same run (bench/results/2026-11-29-zen4-dnn-winograd3.md).
// res5 (7x7, 16 2x2 tiles) stays direct (84.7 vs 44.4). Intel unmeasured.
// The same at AVX2 (no input-lanes kernel there: direct was the alternative): res4 on
// Zen 3, GFLOP/s F(2x2) vs direct, bench/results/2026-11-29-zen3-dnn-small-3x3.md:
// 1 thread (5 alternations) 64.5-71.6 vs 43.9-64.3, 1.07-1.35x vs 0.92-1.06x oneDNN;
// 2 threads (3) 87.8-106.0 vs 70.0-81.6, 0.86-0.90x vs 0.70-0.73x. Intel unmeasured.
bool winograd_2x2_profitable(const ConvDesc& d, Dir dir) {
  if (d.kh == 5 && d.kw == 5 && cg_of(d) >= 32 && kg_of(d) >= 32) return true;
  const arch::Isa isa = arch::active_isa();
  if (dir == Dir::backward_weights && d.kh == 3 && d.kw == 3 && cg_of(d) >= 256 && kg_of(d) >= 256 &&
      (isa == arch::Isa::avx2 || (isa == arch::Isa::avx512 && arch::cpu_features().amd()))) {
    const index_t t4 = d.n * ((d.out_h() + 3) / 4) * ((d.out_w() + 3) / 4);
    const index_t t2 = d.n * ((d.out_h() + 1) / 2) * ((d.out_w() + 1) / 2);
    return t4 < 48 && t2 >= 48;
  }
  return dir != Dir::backward_weights && wide(d) && d.kh == 3;
}
std::unique_ptr<conv::ConvAlgorithm> make_winograd_4x4(const ConvDesc& d, const ConvLayout&) { return conv::make_winograd_4x4(d); }
std::unique_ptr<conv::ConvAlgorithm> make_winograd_2x2(const ConvDesc& d, const ConvLayout&) { return conv::make_winograd_2x2(d); }

// --- the direct kernels on NCHW --------------------------------------------------------
template <conv::DirectKernel K>
bool direct_supports(const ConvDesc& d, Dir dir, const ConvLayout&, arch::Isa) {
  return conv::direct_kernel_supports(K, d, dir);
}
template <conv::DirectKernel K>
std::unique_ptr<conv::ConvAlgorithm> make_direct(const ConvDesc& d, const ConvLayout&) {
  return conv::make_direct_kernel(d, K);
}
// 1x1 stride 1: x in L1-sized strips, 4 x 24 register tiles, no B panel; backward-data
// is the same on W^T (ResNet-50 1x1, 1 thread, cold caches: forward 81 vs 63-73 GFLOP/s
// for GEMM, backward-data 67-69 vs 49-67 for GEMM with pre-packed W^T).
// Backward-weights (dW = dY X^T on the pointwise tile) only for wide narrowing layers
// (ResNet's res4/res5, >= 512 input channels per group: 0.4-0.6x -> 0.75-0.85x oneDNN);
// below that direct's transposing kernel wins, and widening layers take GEMM.
// On AVX-512 every 1x1 stride-1 backward-weights on NCHW takes GEMM (sgemm N,T per
// image), see gemm_for_1x1_weights.
bool pointwise_profitable(const ConvDesc& d, Dir dir) {
  if (dir != Dir::backward_weights) return true;
  return kg_of(d) <= cg_of(d) && cg_of(d) >= 512 && arch::active_isa() != arch::Isa::avx512;
}
// AVX-512, NCHW, 1 thread, batch 1, GFLOP/s pointwise / direct / GEMM, two passes
// (bench/results/2026-11-28-xeon-dnn-1x1-bwdw.md): 512->128 28x28 79-69 / 103-126 /
// 114-94, 1024->256 14x14 79-75 / 99-105 / 155-103, 2048->512 7x7 72-64 / 70-62 /
// 133-109, 256->64 56x56 69-64 / 93-104 / 104-110: GEMM ahead or level everywhere.
bool gemm_for_1x1_weights(const ConvDesc& d, Dir dir) {
  return dir == Dir::backward_weights && conv::pointwise_shape(d) && arch::active_isa() == arch::Isa::avx512;
}
// Strided 1x1 (ResNet-50's downsampling shortcuts): the pointwise kernel on the
// subsampled input (0.82-0.92x oneDNN vs 0.71-0.74x for implicit GEMM at 28x28 and at
// batch 32), except on tiny outputs with more than 4 input channels (7x7, batch 1:
// 0.70-0.73x vs 0.79-0.81x for implicit GEMM).
bool pointwise_strided_profitable(const ConvDesc& d, Dir) {
  return d.n * d.out_h() * d.out_w() >= 256 || cg_of(d) <= 4;
}
// Backward-weights of wide 3x3 layers on a few output pixels (ResNet-50 res5 at batch 1:
// 512 x 512 channels, 49 pixels) at AVX2, where no lanes kernel runs: explicit GEMM
// (im2col, one sgemm per image) measured ahead of direct, whose tiles reduce over only
// 49 pixels per dw element. Zen 3, GFLOP/s GEMM vs direct,
// three alternations (bench/results/2026-11-29-zen3-dnn-small-3x3.md): 1 thread
// 44.6-51.5 vs 27.4-41.1 (0.94-1.10x vs 0.68-0.76x oneDNN), 2 threads 70.7-85.0 vs
// 44.4-48.2 (0.82-1.08x vs 0.55-0.63x). Intel unmeasured.
bool gemm_for_small_3x3_weights(const ConvDesc& d, Dir dir) {
  return dir == Dir::backward_weights && arch::active_isa() == arch::Isa::avx2 && d.kh == 3 && d.kw == 3 &&
         cg_of(d) >= 256 && kg_of(d) >= 256 && d.n * d.out_h() * d.out_w() <= 64;
}
// Forward: every layer that is not strided with > 4 input channels (ResNet-50's 3x3 s2
// downsampling: the phase-split input cuts the taps into short runs, 0.3-0.5x oneDNN;
// implicit GEMM 0.78-0.83x). Backward-data: see transposed_worthwhile. Backward-weights
// (dY^T vectors x input broadcasts, no column matrix): except widening 1x1 layers
// (GEMM on the tensors: ResNet-50 64 -> 256, 1 thread: 71-77 GFLOP/s vs 57-71 on the
// exchanged problem; narrowing 256 -> 64: 56 vs 49 for GEMM) and strided 1x1 ones (a
// short reduction over a small output plane for a large dw: 0.4-0.5x oneDNN on
// 512 -> 2048 s2 and 256 -> 512 s2, GEMM on the subsampled input 0.83-1.08x); at
// AVX-512 no 1x1 stride-1 layer (gemm_for_1x1_weights), at AVX2 no wide 3x3 layer on
// a few pixels (gemm_for_small_3x3_weights).
bool direct_profitable(const ConvDesc& d, Dir dir) {
  switch (dir) {
    case Dir::forward: return !(strided(d) && cg_of(d) > 4);
    case Dir::backward_data: return transposed_worthwhile(d);
    case Dir::backward_weights:
      return !(conv::pointwise_shape(d) && kg_of(d) > cg_of(d)) && !(one_by_one(d) && strided(d)) &&
             !gemm_for_1x1_weights(d, dir) && !gemm_for_small_3x3_weights(d, dir);
  }
  return false;
}

// --- GEMM ----------------------------------------------------------------------------
bool implicit_gemm_supports(const ConvDesc& d, Dir dir, const ConvLayout&, arch::Isa) {
  return conv::implicit_gemm_supports(d, dir);
}
// Strided layers past the first, forward: packs the strided windows once per panel
// (see direct_profitable).
bool implicit_gemm_profitable(const ConvDesc& d, Dir dir) {
  return dir == Dir::forward && strided(d) && cg_of(d) > 4;
}
std::unique_ptr<conv::ConvAlgorithm> make_implicit_gemm(const ConvDesc& d, const ConvLayout&) { return conv::make_implicit_gemm(d); }
bool supports_all(const ConvDesc&, Dir, const ConvLayout&, arch::Isa) { return true; }
std::unique_ptr<conv::ConvAlgorithm> make_explicit_gemm(const ConvDesc& d, const ConvLayout&) { return conv::make_explicit_gemm(d); }
// Minibatch: Caffe's small images at training batch sizes (LeNet, CIFAR-10 quick).
// GFLOP/s at 1 thread, minibatch vs the entry taken otherwise, LeNet at batch 64,
// CIFAR-10 quick at 100, AVX-512 Xeon; 2026-11-28 (AVX-512 minibatch kernels,
// bench/results/2026-11-28-xeon-dnn-minibatch.md) and 2026-11-27 (AVX2 kernels,
// ...-dnn-winograd.md):
//   - forward on the implicit geometry (stride 1, unpadded, one group, output width a
//     multiple of 8) with several input channels, <= 24x24 outputs and <= 500 weight
//     columns: LeNet conv2 100.2-103.8 vs direct 84.2-86.2 (96.1 vs 83.5). One input
//     channel (LeNet conv1) stays with direct: 56.5-70.2 vs 60.1-62.6, within noise;
//   - backward-data with 8-pixel output rows (col2im in registers): LeNet conv2
//     115.6-133.2 vs explicit GEMM 81.9-92.2 (111.6 vs 83.3); or 3-4 input channels at
//     stride 1, where direct's transposed problem has 3-4 output channels: CIFAR-10
//     conv1 58.1-80.1 vs direct 29.6-44.2 (57.0 vs 36.1);
//   - backward-weights of one-input-channel implicit layers: LeNet conv1 56.7-65.6 vs
//     direct 45.2-48.2 (39.3 vs 35.8).
// Slower everywhere else measured (CIFAR-10 conv2/conv3: Winograd 117-190 vs 70-95;
// conv1 forward and backward-weights: first_layer/direct; LeNet conv2 backward-weights:
// direct 88.9-111.4 vs 72-91). Not measured below batch 16: off there. bench_caffe
// with this rule alone (TAIHU_CAFFE_CONV_TUNE=0, 1 thread): LeNet +10-22%, CIFAR-10
// quick +2-4% (its trained layers are not the rule's; conv1's backward-data is not run).
bool minibatch_implicit_geometry(const ConvDesc& d) {
  return d.groups == 1 && !strided(d) && d.pad_h == 0 && d.pad_w == 0 && d.dil_h == 1 && d.dil_w == 1 &&
         d.out_w() % 8 == 0;
}
// Below batch 16 (LeNet at batch 1; AMD EPYC Zen 4, GFLOP/s minibatch vs the entry
// taken otherwise, 1 thread / 2 threads, bench/results/2026-11-28-zen4-dnn-lenet.md):
// conv1 forward 23.2 vs direct 18.8 (26.1 vs 20.8), conv1 backward-weights 22.6 vs
// direct 16.0 (26.0 vs 11.8), conv2 backward-data 37.8 vs explicit GEMM 32.1, and at
// 2 threads with 1 image (minibatch on one thread, explicit GEMM threading its col2im;
// conv_cputime with every thread flushing, bench/results/2026-11-29-zen4-dnn-method.md)
// 59.6-65.4 vs 42.6-47.1. conv2 forward and backward-weights stay direct (50.8 vs 51.8,
// 24.9 vs 44.9). Not measured on Intel below batch 16: AMD only.
bool minibatch_small_batch(const ConvDesc& d, Dir dir) {
  if (!arch::cpu_features().amd() || arch::active_isa() < arch::Isa::avx2 ||
      !minibatch_implicit_geometry(d))
    return false;
  if (dir == Dir::backward_data) return d.out_w() == 8 && d.w <= 16;
  return cg_of(d) == 1;  // forward, backward-weights
}
bool minibatch_profitable(const ConvDesc& d, Dir dir) {
  if (d.n < 16) return minibatch_small_batch(d, dir);
  switch (dir) {
    case Dir::forward:
      return minibatch_implicit_geometry(d) && cg_of(d) > 1 && d.out_h() * d.out_w() <= 576 &&
             cg_of(d) * d.kh * d.kw <= 500;
    case Dir::backward_data:
      return (minibatch_implicit_geometry(d) && d.out_w() == 8 && d.w <= 16) ||
             (d.groups == 1 && !strided(d) && cg_of(d) >= 3 && cg_of(d) <= 4);
    case Dir::backward_weights: return minibatch_implicit_geometry(d) && cg_of(d) == 1;
  }
  return false;
}
std::unique_ptr<conv::ConvAlgorithm> make_minibatch(const ConvDesc& d, const ConvLayout&) { return conv::make_minibatch(d); }
std::unique_ptr<conv::ConvAlgorithm> make_reference(const ConvDesc& d, const ConvLayout&) { return conv::make_reference(d); }

// The list. Native blocked entries first (no reorders), then by arithmetic cost and
// kernel speed; explicit GEMM takes whatever is left; the reference is last.
const std::vector<Entry>& entries() {
  using K = conv::DirectKernel;
  static const std::vector<Entry> list = {
      {ConvAlgo::pointwise_blocked, pointwise_blocked_supports, native_always, always, make_pointwise_blocked},
      {ConvAlgo::first_layer, first_layer_supports, first_layer_native, first_layer_profitable, make_first_layer,
       first_layer_fuses},
      {ConvAlgo::direct_weight_lanes, direct_weight_lanes_supports, nchw_native, direct_weight_lanes_profitable,
       make_direct_weight_lanes},
      {ConvAlgo::winograd_4x4, winograd_4x4_supports, nchw_native, winograd_4x4_profitable, make_winograd_4x4},
      {ConvAlgo::winograd_2x2, winograd_2x2_supports, nchw_native, winograd_2x2_profitable, make_winograd_2x2},
      {ConvAlgo::pointwise, direct_supports<K::pointwise>, nchw_native, pointwise_profitable, make_direct<K::pointwise>,
       fuses_all},
      {ConvAlgo::pointwise_strided, direct_supports<K::pointwise_strided>, nchw_native, pointwise_strided_profitable,
       make_direct<K::pointwise_strided>, fuses_all},
      {ConvAlgo::minibatch, supports_all, nchw_native, minibatch_profitable, make_minibatch},
      {ConvAlgo::direct_input_lanes, direct_input_lanes_supports, nchw_native, direct_input_lanes_profitable,
       make_direct_input_lanes},
      {ConvAlgo::direct, direct_supports<K::pixel>, nchw_native, direct_profitable, make_direct<K::pixel>, fuses_all},
      {ConvAlgo::implicit_gemm, implicit_gemm_supports, nchw_native, implicit_gemm_profitable, make_implicit_gemm},
      {ConvAlgo::explicit_gemm, supports_all, nchw_native, always, make_explicit_gemm},
      {ConvAlgo::reference, supports_all, nchw_native, always, make_reference},
  };
  return list;
}

const Entry& entry_of(ConvAlgo a) {
  for (const auto& e : entries())
    if (e.algo == a) return e;
  throw Error(std::string("taihu: conv: no implementation entry for ") + to_string(a));
}

bool entry_supports(const Entry& e, const ConvDesc& d, Dir dir, const ConvLayout& layout) {
  return e.supports(d, dir, layout, arch::active_isa());
}

// A tuning record's algorithm as an entry: format 1 named the direct kernels "direct".
ConvAlgo record_entry(const TuningRecord& r, const ConvDesc& d, Dir dir) {
  const ConvAlgo a = parse_conv_algo(r.algo);
  if (r.format < 2 && a == ConvAlgo::direct) return conv_direct_family_entry(d, dir);
  return a;
}

const Entry& choose(const ConvDesc& d, ConvAlgo requested, Dir dir, const ConvLayout& layout) {
  const std::string key = d.str();
  if (requested != ConvAlgo::automatic) {
    const Entry& e = entry_of(requested);
    if (entry_supports(e, d, dir, layout)) {
      arch::log_verbose("conv: %s %s %s -> %s (requested)", key.c_str(), to_string(dir), to_string(layout).c_str(),
                        to_string(requested));
      return e;
    }
    if (std::none_of(std::begin(kDirections), std::end(kDirections),
                     [&](Dir other) { return entry_supports(e, d, other, layout); }))
      throw Error(std::string("taihu: conv: algorithm ") + to_string(requested) + " does not support problem " + key +
                  (layout == kNchw ? "" : " in layout " + to_string(layout)));
    // A direction the requested entry lacks (e.g. direct's forward of a 1x1 layer, the
    // pointwise entry's): the automatic choice.
  }
  // Tuning records time NCHW tensors: they steer NCHW layouts only.
  const char* isa = arch::isa_name(arch::active_isa());
  const int threads = arch::threads_for_call();
  if (layout == kNchw)
    if (auto rec = tuning_records_from_env().best("conv2d", key, to_string(dir), isa, threads)) {
      const ConvAlgo a = record_entry(*rec, d, dir);
      if (a != ConvAlgo::automatic && entry_supports(entry_of(a), d, dir, layout)) {
        arch::log_verbose("conv: %s %s -> %s (tuning record, %s %d threads, %.3g s)", key.c_str(), to_string(dir),
                          to_string(a), isa, threads, rec->median_s);
        return entry_of(a);
      }
    }
  for (const Entry& e : entries())
    if (entry_supports(e, d, dir, layout) && e.profitable(d, dir)) {
      arch::log_verbose("conv: %s %s %s -> %s (first supporting, profitable entry%s)", key.c_str(), to_string(dir),
                        to_string(layout).c_str(), to_string(e.algo),
                        requested != ConvAlgo::automatic ? "; the requested one lacks this direction" : "");
      return e;
    }
  throw Error("taihu: conv: no implementation for " + key);  // unreachable: the reference takes all
}

void require(const void* p, const char* routine, const char* name) {
  if (p == nullptr) throw Error(std::string("taihu: conv ") + routine + ": " + name + " is null");
}

}  // namespace

bool conv_fuses_post_ops(ConvAlgo algo, const ConvDesc& d, const ConvPostOps& post, ConvLayout layout) {
  if (algo == ConvAlgo::automatic) return false;
  const Entry& e = entry_of(algo);
  return e.fuses && entry_supports(e, d, Dir::forward, layout) && e.fuses(d, layout, post);
}

bool conv_supports(ConvAlgo algo, const ConvDesc& d, ConvDirection dir) {
  if (algo == ConvAlgo::automatic) return true;
  return entry_supports(entry_of(algo), d, dir, kNchw);
}

std::vector<ConvAlgo> conv_candidates(const ConvDesc& d, ConvDirection dir) {
  std::vector<ConvAlgo> out;
  for (const auto& e : entries())
    if (entry_supports(e, d, dir, kNchw)) out.push_back(e.algo);
  return out;
}

ConvAlgo conv_direct_family_entry(const ConvDesc& d, ConvDirection dir) {
  using K = conv::DirectKernel;
  switch (dir) {
    case Dir::forward:
      if (conv::direct_kernel_supports(K::pointwise, d, dir)) return ConvAlgo::pointwise;
      if (conv::direct_kernel_supports(K::pointwise_strided, d, dir)) return ConvAlgo::pointwise_strided;
      if (conv::direct_kernel_supports(K::first_layer, d, dir)) return ConvAlgo::first_layer;
      return ConvAlgo::direct;
    case Dir::backward_data:
      if (conv::direct_kernel_supports(K::pointwise, d, dir)) return ConvAlgo::pointwise;
      if (conv::direct_kernel_supports(K::first_layer, d, dir)) return ConvAlgo::first_layer;
      if (conv::direct_kernel_supports(K::pixel, d, dir)) return ConvAlgo::direct;
      return ConvAlgo::automatic;
    case Dir::backward_weights:
      return conv::pointwise_shape(d) && pointwise_profitable(d, dir) ? ConvAlgo::pointwise : ConvAlgo::direct;
  }
  return ConvAlgo::automatic;
}

const char* to_string(ActLayout layout) {
  switch (layout) {
    case ActLayout::nchw: return "nchw";
    case ActLayout::nchw8c: return "nChw8c";
    case ActLayout::nchw16c: return "nChw16c";
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
  if (name == "nChw16c" || name == "nchw16c") return ActLayout::nchw16c;
  throw Error("taihu: conv: unknown activation layout '" + name + "' (expected nchw, nChw8c or nChw16c)");
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
  return layout == ActLayout::nchw8c    ? nchw8c_elements(d.n, c, h, w)
         : layout == ActLayout::nchw16c ? nchw16c_elements(d.n, c, h, w)
                                        : d.n * c * h * w;
}

void reorder_nchw_to_layout(const float* src, float* dst, ActLayout layout, index_t n, index_t c, index_t h,
                            index_t w) {
  switch (layout) {
    case ActLayout::nchw: std::copy(src, src + n * c * h * w, dst); return;
    case ActLayout::nchw8c: return reorder_nchw_to_nchw8c(src, dst, n, c, h, w);
    case ActLayout::nchw16c: return reorder_nchw_to_nchw16c(src, dst, n, c, h, w);
  }
  throw Error("taihu: reorder_nchw_to_layout: layout " + std::to_string(static_cast<int>(layout)) +
              " is not an ActLayout");
}

void reorder_layout_to_nchw(const float* src, float* dst, ActLayout layout, index_t n, index_t c, index_t h,
                            index_t w) {
  switch (layout) {
    case ActLayout::nchw: std::copy(src, src + n * c * h * w, dst); return;
    case ActLayout::nchw8c: return reorder_nchw8c_to_nchw(src, dst, n, c, h, w);
    case ActLayout::nchw16c: return reorder_nchw16c_to_nchw(src, dst, n, c, h, w);
  }
  throw Error("taihu: reorder_layout_to_nchw: layout " + std::to_string(static_cast<int>(layout)) +
              " is not an ActLayout");
}

ConvLayout preferred_layout(const ConvDesc& d) { return preferred_layout(d, arch::active_isa()); }

ConvLayout preferred_layout(const ConvDesc& d, arch::Isa isa) {
  // The first layout some entry runs forward natively at `isa` (NCHW entries are native
  // to NCHW only); the blocked layout whose block is the ISA's vector first.
  for (const ConvLayout& l : {kBlocked16, kBlocked, kFirstLayerOut}) {
    if (l == kBlocked16 && isa != arch::Isa::avx512) continue;
    for (const Entry& e : entries())
      if (e.native != nchw_native && e.supports(d, Dir::forward, l, isa) && e.native(d, Dir::forward, l)) return l;
  }
  return {};
}

namespace {

void check_layout(ActLayout l, const char* which) {
  if (l != ActLayout::nchw && l != ActLayout::nchw8c && l != ActLayout::nchw16c)
    throw Error(std::string("taihu: conv: layout.") + which + " = " + std::to_string(static_cast<int>(l)) +
                " is not an ActLayout (nchw, nChw8c or nChw16c)");
}

// NCHW <-> the caller's layout around an NCHW entry (a no-op for NCHW).
struct Reorderer {
  index_t n, c, h, w;
  ActLayout layout;
  std::vector<float> buf;
  bool blocked() const { return layout != ActLayout::nchw; }
  // The caller's tensor as NCHW.
  const float* in(const float* p) {
    if (!blocked()) return p;
    buf.resize(static_cast<std::size_t>(n * c * h * w));
    reorder_layout_to_nchw(p, buf.data(), layout, n, c, h, w);
    return buf.data();
  }
  // Where the NCHW entry writes an output of this shape, holding the caller's p (a
  // sum post-op's input).
  float* out_with(float* p) {
    if (!blocked()) return p;
    buf.resize(static_cast<std::size_t>(n * c * h * w));
    reorder_layout_to_nchw(p, buf.data(), layout, n, c, h, w);
    return buf.data();
  }
  // Where the NCHW entry writes an output of this shape.
  float* out(float* p) {
    if (!blocked()) return p;
    buf.resize(static_cast<std::size_t>(n * c * h * w));
    return buf.data();
  }
  void finish(float* p) {
    if (blocked()) reorder_nchw_to_layout(buf.data(), p, layout, n, c, h, w);
  }
};

// Seconds for timing candidates: this thread's CPU time at one thread (time another
// process takes the core away does not count), else wall time.
double timing_clock(int threads) {
  timespec t{};
  clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

struct Convolution::Impl {
  ConvDesc desc;
  ConvLayout layout;
  std::array<const Entry*, 3> entry{};
  std::map<std::pair<ConvAlgo, bool>, std::unique_ptr<conv::ConvAlgorithm>> instances;
  Reorderer src, dst;
  std::vector<float> scratch_dy, scratch_dx, scratch_dw, scratch_db;  // choose_by_timing
  std::vector<TuningRecord> timings;                                 // and what it measured
  std::vector<float> post_sum;  // unfused sum post-op: y as it was on entry

  bool native(const Entry& e, Dir dir) const { return layout == kNchw || e.native(desc, dir, layout); }
  // The entry's object: on the blocked tensors (blocked) or on NCHW ones.
  conv::ConvAlgorithm& instance(const Entry& e, bool blocked) {
    auto& p = instances[{e.algo, blocked}];
    if (!p) p = e.make(desc, blocked ? layout : kNchw);
    return *p;
  }

  // One call of `dir` on entry e with the caller's tensors (in `layout`).
  void run(const Entry& e, Dir dir, const float* a, const float* b, const float* bias, float* out, float* out2,
           WeightsHint hint, bool accumulate) {
    const bool nat = native(e, dir);
    conv::ConvAlgorithm& alg = instance(e, nat && layout != kNchw);
    switch (dir) {
      case Dir::forward:  // a = x, b = w, out = y
        if (nat) return alg.forward(a, b, bias, out, hint);
        alg.forward(src.in(a), b, bias, dst.out(out), hint);
        return dst.finish(out);
      case Dir::backward_data:  // a = dy, b = w, out = dx
        if (nat) return alg.backward_data(a, b, out, hint);
        alg.backward_data(dst.in(a), b, src.out(out), hint);
        return src.finish(out);
      case Dir::backward_weights:  // a = x, b = dy, out = dw, out2 = dbias
        if (nat) return alg.backward_weights(a, b, out, out2, accumulate);
        return alg.backward_weights(src.in(a), dst.in(b), out, out2, accumulate);
    }
  }

  bool fuses(const Entry& e, const ConvPostOps& post) const { return e.fuses && e.fuses(desc, layout, post); }

  // Forward on entry e followed by the post-ops: inside its kernels where it fuses
  // them, else a pass over y (the caller's layout: nChw8c's zero lanes stay zero).
  void run_forward_post(const Entry& e, const float* x, const float* w, const float* bias, float* y,
                        WeightsHint hint, const ConvPostOps& post) {
    if (fuses(e, post)) {
      const bool nat = native(e, Dir::forward);
      conv::ConvAlgorithm& alg = instance(e, nat && layout != kNchw);
      if (nat) return alg.forward_fused(x, w, bias, y, hint, post);
      alg.forward_fused(src.in(x), w, bias, post.sum ? dst.out_with(y) : dst.out(y), hint, post);
      return dst.finish(y);
    }
    const auto count = static_cast<std::size_t>(conv_tensor_elements(desc, true, layout.dst));
    if (post.sum) post_sum.assign(y, y + count);
    run(e, Dir::forward, x, w, bias, y, nullptr, hint, false);
    conv::apply_post_ops(post, post_sum.data(), y, static_cast<index_t>(count));
  }

  // run() on this direction's entry (forward: with `post`); with TAIHU_VERBOSE the
  // oneDNN-style line.
  void execute(Dir dir, const float* a, const float* b, const float* bias, float* out, float* out2,
               WeightsHint hint, bool accumulate, const ConvPostOps& post = {}) {
    const Entry& e = *entry[static_cast<int>(dir)];
    const conv::CallThreads call_threads(desc);
    auto go = [&] {
      if (post.any()) return run_forward_post(e, a, b, bias, out, hint, post);
      run(e, dir, a, b, bias, out, out2, hint, accumulate);
    };
    if (!arch::verbose_enabled()) return go();
    const auto t0 = std::chrono::steady_clock::now();
    go();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string entry_name = to_string(e.algo);
    if (post.any())
      entry_name += std::string(fuses(e, post) ? "+" : "+pass:") + (post.sum ? "sum" : "") +
                    (post.sum && post.relu ? "+" : "") + (post.relu ? "relu" : "");
    std::fprintf(stderr, "taihu_verbose,exec,conv,%s,%s,%s,%s,%.4f\n", entry_name.c_str(), to_string(dir),
                 to_string(layout).c_str(), desc.str().c_str(), ms);
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
  const conv::CallThreads call_threads(d);  // choose for the thread count the calls will run on
  for (Dir dir : kDirections) {
    const Entry& e = choose(d, algo, dir, layout);
    impl_->entry[static_cast<int>(dir)] = &e;
    if (!impl_->native(e, dir))
      arch::log_verbose("conv: %s %s: %s tensors reordered to NCHW around %s", d.str().c_str(), to_string(dir),
                        to_string(layout).c_str(), to_string(e.algo));
  }
}

Convolution::~Convolution() = default;
Convolution::Convolution(Convolution&&) noexcept = default;
Convolution& Convolution::operator=(Convolution&&) noexcept = default;

const ConvDesc& Convolution::desc() const { return impl_->desc; }
ConvAlgo Convolution::algorithm() const { return algorithm(Dir::forward); }
ConvAlgo Convolution::algorithm(ConvDirection dir) const { return impl_->entry[static_cast<int>(dir)]->algo; }
ConvLayout Convolution::layout() const { return impl_->layout; }
bool Convolution::layout_native(ConvDirection dir) const {
  return impl_->native(*impl_->entry[static_cast<int>(dir)], dir);
}

void Convolution::forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) {
  require(x, "forward", "x");
  require(w, "forward", "w");
  require(y, "forward", "y");
  impl_->execute(Dir::forward, x, w, bias, y, nullptr, hint, false);
}

void Convolution::forward(const float* x, const float* w, const float* bias, float* y, const ConvPostOps& post,
                          WeightsHint hint) {
  require(x, "forward", "x");
  require(w, "forward", "w");
  require(y, "forward", "y");
  impl_->execute(Dir::forward, x, w, bias, y, nullptr, hint, false, post);
}

bool Convolution::fuses_post_ops(const ConvPostOps& post) const {
  return impl_->fuses(*impl_->entry[static_cast<int>(Dir::forward)], post);
}

void Convolution::backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) {
  require(dy, "backward_data", "dy");
  require(w, "backward_data", "w");
  require(dx, "backward_data", "dx");
  impl_->execute(Dir::backward_data, dy, w, nullptr, dx, nullptr, hint, false);
}

void Convolution::backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) {
  require(x, "backward_weights", "x");
  require(dy, "backward_weights", "dy");
  require(dw, "backward_weights", "dw");
  impl_->execute(Dir::backward_weights, x, dy, nullptr, dw, dbias, WeightsHint::changed, accumulate);
}

void Convolution::choose_by_timing(ConvDirection dir, const float* x, const float* w, const float* bias, float* y,
                                   const ConvAgreement& agree, int rounds) {
  Impl& I = *impl_;
  const ConvDesc& d = I.desc;
  require(w, "choose_by_timing", "w");
  if (dir != Dir::backward_data) require(x, "choose_by_timing", "x");
  if (dir == Dir::forward) require(y, "choose_by_timing", "y");
  if (rounds < 1) throw Error("taihu: conv choose_by_timing: rounds = " + std::to_string(rounds) + " must be >= 1");
  const conv::CallThreads call_threads(d);
  std::vector<const Entry*> cands;
  for (const Entry& e : entries())
    if (e.algo != ConvAlgo::reference && entry_supports(e, d, dir, I.layout)) cands.push_back(&e);
  const auto xs = static_cast<std::size_t>(conv_tensor_elements(d, false, I.layout.src));
  const auto ys = static_cast<std::size_t>(conv_tensor_elements(d, true, I.layout.dst));
  if (dir != Dir::forward) {
    I.scratch_dy.assign(ys, 0.01f);
    if (I.layout.dst != ActLayout::nchw)  // lanes past k stay zero in the blocked layouts
      reorder_nchw_to_layout(std::vector<float>(static_cast<std::size_t>(d.n * d.k * d.out_h() * d.out_w()), 0.01f).data(),
                             I.scratch_dy.data(), I.layout.dst, d.n, d.k, d.out_h(), d.out_w());
    I.scratch_dx.resize(xs);
    I.scratch_dw.resize(static_cast<std::size_t>(d.k * (d.c / d.groups) * d.kh * d.kw));
    I.scratch_db.resize(static_cast<std::size_t>(d.k));
  }
  const int threads = arch::threads_for_call();
  std::vector<double> best(cands.size(), 1e30);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const double t0 = timing_clock(threads);
      if (dir == Dir::forward)
        I.run(*cands[i], dir, x, w, bias, y, nullptr, WeightsHint::changed, false);
      else if (dir == Dir::backward_data)
        I.run(*cands[i], dir, I.scratch_dy.data(), w, nullptr, I.scratch_dx.data(), nullptr, WeightsHint::changed,
              false);
      else
        I.run(*cands[i], dir, x, I.scratch_dy.data(), nullptr, I.scratch_dw.data(), I.scratch_db.data(),
              WeightsHint::changed, false);
      best[i] = std::min(best[i], timing_clock(threads) - t0);
    }
  if (agree) agree(best);
  std::size_t win = 0;
  std::string report;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    char t[64];
    std::snprintf(t, sizeof t, " %s=%.4fms", to_string(cands[i]->algo), best[i] * 1e3);
    report += t;
    if (best[i] < best[win]) win = i;
  }
  I.entry[static_cast<int>(dir)] = cands[win];
  if (I.layout == kNchw)
    for (std::size_t i = 0; i < cands.size(); ++i)
      I.timings.push_back(conv_tuning_record(d, dir, arch::isa_name(arch::active_isa()), threads, cands[i]->algo,
                                             std::max(best[i], 1e-9)));
  // The losers' workspaces go (the winner's stays warm).
  for (auto it = I.instances.begin(); it != I.instances.end();)
    if (std::none_of(I.entry.begin(), I.entry.end(), [&](const Entry* e) { return e->algo == it->first.first; }))
      it = I.instances.erase(it);
    else
      ++it;
  arch::log_verbose("conv: %s %s timed:%s -> %s", d.str().c_str(), to_string(dir), report.c_str(),
                    to_string(cands[win]->algo));
}

const std::vector<TuningRecord>& Convolution::timing_records() const { return impl_->timings; }

std::string Convolution::choice() const {
  std::string s;
  for (Dir dir : kDirections) {
    if (!s.empty()) s += ',';
    s += std::string(to_string(dir)) + "=" + to_string(algorithm(dir));
  }
  return s;
}

void Convolution::set_choice(const std::string& text) {
  Impl& I = *impl_;
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parts.size() != 3)
    throw Error("taihu: conv: choice \"" + text + "\" does not name three directions (" + choice() + ")");
  std::array<const Entry*, 3> chosen{};
  for (int i = 0; i < 3; ++i) {
    const Dir dir = kDirections[i];
    std::string name = parts[static_cast<std::size_t>(i)];
    const auto eq = name.find('=');
    const bool legacy = eq == std::string::npos;  // caffe_port's "<fwd>,<bwd_data>,<bwd_weights>"
    if (!legacy) {
      if (name.substr(0, eq) != to_string(dir))
        throw Error("taihu: conv: choice \"" + text + "\": expected " + to_string(dir) + "= in position " +
                    std::to_string(i + 1));
      name = name.substr(eq + 1);
    }
    ConvAlgo a;
    try {
      a = parse_conv_algo(name);
    } catch (const Error& e) {
      throw Error("taihu: conv: choice \"" + text + "\": " + e.what());
    }
    if (legacy && a == ConvAlgo::direct) a = conv_direct_family_entry(I.desc, dir);
    if (a == ConvAlgo::automatic || !entry_supports(entry_of(a), I.desc, dir, I.layout))
      throw Error("taihu: conv: choice \"" + text + "\": " + name + " does not support " + to_string(dir) + " of " +
                  I.desc.str());
    chosen[static_cast<std::size_t>(i)] = &entry_of(a);
  }
  I.entry = chosen;
  arch::log_verbose("conv: %s choice set: %s", I.desc.str().c_str(), choice().c_str());
}

}  // namespace taihu::dnn
