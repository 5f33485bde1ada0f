// 1x1 stride-1 unpadded convolution (groups 1) on nChw8c activations, and on nChw16c with
// AVX-512, every direction (pointwise_blocked_kernels.hpp has the register tiles; the
// figures below are nChw8c's, nChw16c's in the Geometry). Weights stay OIHW for the
// caller and are packed once per weight version (WeightsHint::unchanged reuses them).
//   forward: Y = W X per image: work items are (image, pixel chunk) with the chunk's
//     input (all channels) <= 128 KiB (512 KiB when the weights outgrow L2), so it
//     stays in L2 while every 32-channel output group sweeps it; the reduction is
//     blocked by 128 channels (one group's packed weights, 16 KiB, stay in L1); the
//     first group's tiles prefetch the input two tiles ahead (the chunk's first sweep
//     reads it from memory) and every run of tiles prefetches the next run's weights
//     into L2; tiles of 4 output blocks x 3 pixels write the nChw8c
//     output in place, starting from the bias. Weights packed
//     [group of 4 output blocks][input channel][32].
//   backward-data: the same on W^T (dX = W^T dY), weights packed likewise from W^T.
//     Threads split the items, or the packed output groups when the weights outweigh
//     the input (each thread then streams only its share of them; see run()).
//   backward-weights: dW = dY X^T reduced over every image's pixels in chunks of up to
//     256 (128 on AMD when K > C): tiles of 32 output channels (dY vectors) x 3 input
//     channels (x broadcast) in blocks of 48 input channels (96 on AMD for chunks of
//     <= 64 pixels), accumulated
//     in a tile-major buffer [k / 32][c][32] (the first pass's tiles start from zero)
//     whose blocks an 8x8-transposing store adds to dw (OIHW) right after their last
//     pass, the dw lines prefetched meanwhile; a single-pass layer (one image, one
//     chunk) accumulates in a per-thread unit-sized block instead (stays in L1).
//     Threads own disjoint ranges of tiles (no reduction between threads; deterministic).
//     nChw16c (AVX-512) instead takes oneDNN's input-lanes form (backward_weights_x):
//     tiles of 48 input channels (x vectors) x 8 output channels (dY broadcasts; on AMD
//     planes of <= 256 pixels 16 x 16, see wide_bwdw_x()) kept in registers over a
//     whole pixel chunk (256 pixels; whole planes on AMD) and written straight into the
//     dw rows (on AMD each tile also prefetches its x and dY lines 4
//     pixels ahead into L1, and a thread's first tile on a dY block the next block's
//     run into L2: Zen 4 56x56 64 -> 256 at 2 threads +6% in the A/B; and a dw of 1 MiB
//     or more written in one pass goes out through streaming stores); 14x14
//     1024 -> 256 at 1 thread 145-148 -> 172-184 GFLOP/s in the A/B (flushed),
//     the other ResNet-50 1x1 layers level or up to 9% faster
//     (bench/results/2026-11-28-xeon-dnn-res4.md).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "conv_pointwise.hpp"
#include "pointwise_blocked_kernels.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/layout.hpp"

namespace taihu::dnn::conv {

namespace {

struct PwbKernels {
  PwbFwdKernel fwd;
  PwbBwdwKernel bwdw;
  PwbDwStoreKernel dw_store;
  PwbBwdwXKernel bwdw_x;  // nChw16c: the input-lanes backward-weights tile (else null)
  PwbBwdwXKernel bwdw_x16 = nullptr;  // nChw16c: its 1 x 16 form (see wide_bwdw_x())
  PwbBiasSumsKernel bias_sums = nullptr;  // nChw16c: a dY block's bias-gradient sums
};

const PwbKernels& pwb8_kernels() {
  static const arch::ImplementationList<PwbKernels> list(
      "1x1 nChw8c conv kernels",
      {{"avx2_4x3", arch::Isa::avx2, {&pwb_fwd_avx2, &pwb_bwdw_avx2, &pwb_dw_store_avx2, nullptr}},
       {"generic",
        arch::Isa::generic,
        {&pwb_fwd_generic, &pwb_bwdw_generic, &pwb_dw_store_generic, nullptr}}});
  return list.chosen().impl;
}

// (conv_list.cpp offers nChw16c natively only at TAIHU_ISA=avx512; the generic loops
// keep the list complete.) AMD (Zen 4) takes the inline-assembly forward tile: GCC 12's
// allocation of the intrinsics tile moves ~200 zmm copies and spills per run; Zen 4 1
// and 2 threads +0-1.5% best in the A/B (bench/results/2026-11-28-zen4-dnn-1x1.md).
// Intel keeps the intrinsics tile (not measured with the assembly one).
const PwbKernels& pwb16_kernels() {
  static const bool amd = arch::cpu_features().amd();
  static const arch::ImplementationList<PwbKernels> list(
      "1x1 nChw16c conv kernels",
      {{amd ? "avx512_4x6_asm" : "avx512_4x6",
        arch::Isa::avx512,
        {amd ? &pwb16_fwd_avx512_asm : &pwb16_fwd_avx512, nullptr, nullptr, &pwb16_bwdw_x_avx512, &pwb16_bwdw_x16_avx512,
         &pwb16_bias_sums_avx512}},
       {"generic",
        arch::Isa::generic,
        {&pwb16_fwd_generic, nullptr, nullptr, &pwb16_bwdw_x_generic, &pwb16_bwdw_x_generic, &pwb16_bias_sums_generic}}});
  return list.chosen().impl;
}

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

constexpr index_t kChunkBytes = 128 * 1024;  // a chunk's input, all channels (L2)

// The tiles' shape per block width B.
struct Geometry {
  index_t B;         // lanes per channel block (8: nChw8c, 16: nChw16c)
  index_t blocks;    // output blocks per tile (a packed group: blocks * B channels)
  index_t pixels;    // pixels per forward tile (chunks are multiples of it)
  index_t cols;      // input channels per backward-weights tile (nChw8c)
  // Input blocks per reduction block: nChw8c 128 channels, a group's packed weights 16
  // KiB of L1 (256 channels measured 5-10% slower on 256 -> 64 forward and 64 -> 256
  // backward-data: 32 KiB fills L1; 64 and 128 channels measured alike).
  index_t reduce_blocks;
  index_t bwdw_pixels;  // backward-weights pixel chunk target (a group's dY <= 32 KiB; nChw8c)
  index_t bwdw_cblk;    // backward-weights input channels per work unit (nChw8c)
  const PwbKernels& k;  // (nChw16c: bwdw_x for backward-weights, not bwdw / dw_store)
  index_t group() const { return blocks * B; }
};

Geometry geometry(int block) {
  if (block == 16) return {16, kPwb16Blocks, kPwb16Pixels, 0, 4, 0, 0, pwb16_kernels()};
  return {8, kPwbBlocks, kPwbPixels, kPwbCols, 16, 256, 48, pwb8_kernels()};
}

class PointwiseBlocked final : public ConvAlgorithm {
 public:
  PointwiseBlocked(const ConvDesc& d, int block)
      : d_(d), g_(geometry(block)), B_(g_.B), G_(g_.group()), plane_(d.h * d.w), cb_(ceil_div(d.c, B_)),
        kb_(ceil_div(d.k, B_)) {
    arch::log_verbose("conv: %s pointwise_blocked nChw%dc: forward / backward-data tiles %dx%d, backward-weights %s",
                      d.str().c_str(), block, static_cast<int>(g_.blocks * B_), static_cast<int>(g_.pixels),
                      !g_.k.bwdw_x ? "output-lanes tile with accumulator"
                      : wide_bwdw_x(ceil_div(plane_, ceil_div(plane_, bwdw_x_chunk())))
                          ? "input-lanes tile 16x16 (x vectors x dY broadcasts, into dw)"
                          : "input-lanes tile 48x8 (x vectors x dY broadcasts, into dw)");
  }

  void forward(const float* x, const float* w, const float* bias, float* y,
               WeightsHint hint) override {
    if (hint == WeightsHint::changed || wfwd_.size() == 0) pack(w, false, wfwd_);
    if (bias) {
      if (bias8_.size() == 0)
        bias8_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(kb_ * B_));
      std::fill(bias8_.data(), bias8_.data() + bias8_.size(), 0.0f);
      std::copy(bias, bias + d_.k, bias8_.data());
    }
    run(x, cb_, wfwd_.data(), kb_, bias ? bias8_.data() : nullptr, y);
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override {
    if (hint == WeightsHint::changed || wbwd_.size() == 0) pack(w, true, wbwd_);
    run(dy, kb_, wbwd_.data(), cb_, nullptr, dx);
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate) override {
    if (g_.k.bwdw_x) {
      backward_weights_x(x, dy, dw, dbias, accumulate);
      return;
    }
    backward_weights_acc(x, dy, dw, accumulate);
    if (dbias) bias_gradient(dy, dbias, accumulate);
  }

 private:
  // Backward-weights pixel chunk target (nChw16c). Intel (Xeon family 6 model 167): 256;
  // 128, 196 and 400 measured alike or slower. AMD Zen 4 (family 25 model 17, 32 KiB L1,
  // 1 MiB L2, AVX-512 as 2 x 256 bits): whole planes up to 4096 pixels, each tile's dw
  // loaded and stored once per image; 1 thread, GFLOP/s 256 -> 4096 in two A/B passes
  // (bench/results/2026-11-28-zen4-dnn-bwdw2.md): 64 -> 256 56x56 74-77 -> 80-85,
  // 256 -> 64 56x56 90-91 -> 101-103, 512 -> 128 28x28 97-99 -> 104-105; 2 threads
  // 256 -> 64 151 -> 168-169, 512 -> 128 167 -> 180-185; 128 and 64 slower.
  static index_t bwdw_x_chunk() { return amd() ? 4096 : 256; }

  static bool amd() {
    static const bool is_amd = arch::cpu_features().amd();
    return is_amd;
  }

  // Input-lanes form (nChw16c): the input blocks split evenly into groups of at most
  // kPwb16XVecs (16 blocks = 4 x 3 + 2 x 2, not 5 x 3 + 1: a 1-block tile of 8 rows does
  // 8 FMAs per 9 loads), or, on AMD's small planes, groups of one block for the 1 x 16
  // tile (wide_bwdw_x); work units are (tile of kPwb16XRows (8) output channels, or
  // kPwb16XWideRows (16) for the wide tile, group), in that order: consecutive tiles
  // write the same dw rows (8 pages of an OIHW dw, not 8 new ones per tile: 14x14
  // 1024 -> 256 +6-10% over group-major in the A/B) while dY's block stays in L1 and the
  // groups' x chunks come from L2. A thread owns a contiguous
  // range of units, so disjoint dw tiles (deterministic, no reduction). Per image and
  // pixel chunk (<= 256 pixels, evenly split; 128, 196 and 400 measured alike or
  // slower), the tiles add into dw (the first pass overwrites unless accumulating): a
  // single-chunk layer (14x14) writes each dw tile once.
  // The bias gradient rides along: the unit that starts a dY block's first tile (output
  // tile at the block's first channel, group 0) first sums that block's chunk
  // (PwbBiasSumsKernel, into per-channel doubles), so dY is read once, on every thread,
  // mostly from cache (a separate single-thread pass over dY cost 178 us of 56x56
  // 64 -> 256's ~720 at 2 threads on Zen 4; bench/results/2026-11-29-zen4-dnn-1x1-4.md).
  // Each block is summed by one thread in pixel order whatever the thread count:
  // 1 and 2 threads agree bitwise.
  void backward_weights_x(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) {
    const index_t chunks = ceil_div(plane_, bwdw_x_chunk()), chunk = ceil_div(plane_, chunks), xs = plane_ * B_;
    const bool wide = wide_bwdw_x(chunk);
    const index_t C = d_.c, K = d_.k, B = B_, NK = wide ? kPwb16XWideRows : kPwb16XRows;
    const index_t groups = wide ? cb_ : ceil_div(cb_, kPwb16XVecs), units = ceil_div(K, NK) * groups;
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), units));
    const PwbBwdwXKernel kernel = wide ? g_.k.bwdw_x16 : g_.k.bwdw_x;
    if (dbias) {
      if (bias_sums_.size() != static_cast<std::size_t>(kb_ * B)) bias_sums_.assign(static_cast<std::size_t>(kb_ * B), 0.0);
      std::fill(bias_sums_.begin(), bias_sums_.end(), 0.0);
    }
    double* const sums = bias_sums_.data();
    ops::run_team(nt, [&] {
      index_t u0 = 0, u1 = units;
      split_range(units, omp_get_thread_num(), omp_get_num_threads(), u0, u1);
      PwbBwdwXArgs a{};
      a.x_bstride = xs;
      a.ldw = C;
      a.prefetch_ahead = pwb_bwdw_x_prefetch_ahead();
      const bool stream = d_.n == 1 && chunks == 1 && pwb_bwdw_x_streams(dw, K, C, accumulate);  // one pass
      // The unit's input blocks [v0, v1) and first output channel.
      const auto unit = [&](index_t u, index_t& v0, index_t& v1) {
        split_range(cb_, static_cast<int>(u % groups), static_cast<int>(groups), v0, v1);
        return u / groups * NK;
      };
      for (index_t n = 0; n < d_.n; ++n)
        for (index_t ch = 0; ch < chunks; ++ch) {
          const index_t p0 = ch * chunk;
          a.pixels = std::min(plane_, p0 + chunk) - p0;
          a.accumulate = accumulate || n > 0 || ch > 0;
          for (index_t u = u0; u < u1; ++u) {
            index_t v0 = 0, v1 = 0;
            const index_t k0 = unit(u, v0, v1);
            if (dbias && k0 % B == 0 && u % groups == 0)
              g_.k.bias_sums(dy + (n * kb_ + k0 / B) * xs + p0 * B, a.pixels, sums + k0);
            a.vecs = static_cast<int>(v1 - v0);
            a.last_lanes = static_cast<int>(std::min(B, C - (v1 - 1) * B));
            a.x = x + (n * cb_ + v0) * xs + p0 * B;
            a.rows = static_cast<int>(std::min(NK, K - k0));
            a.dy = dy + (n * kb_ + k0 / B) * xs + p0 * B + k0 % B;
            a.dw = dw + k0 * C + v0 * B;
            a.next_dw = nullptr;
            // AMD: a thread's first unit on a dY block pulls the next block's run into L2
            // (the later units on this block find theirs there; see the top).
            a.next_dy = nullptr;
            if (amd() && k0 / B + 1 < kb_ && (u == u0 || (u - 1) / groups * NK / B != k0 / B))
              a.next_dy = dy + (n * kb_ + k0 / B + 1) * xs + p0 * B;
            if (u + 1 < u1 && !stream) {
              index_t w0 = 0, w1 = 0;
              const index_t k1 = unit(u + 1, w0, w1);
              a.next_dw = dw + k1 * C + w0 * B;
            }
            a.stream = stream;
            kernel(a);
          }
        }
      if (stream) _mm_sfence();
    });
    if (dbias)
      for (index_t k = 0; k < K; ++k)
        dbias[k] = accumulate ? dbias[k] + static_cast<float>(sums[k]) : static_cast<float>(sums[k]);
  }

  // AMD, pixel chunks of at most 256: the 1 x 16 tile (one input block x a whole dY
  // block; groups of one block) instead of 3 x 8. Per FMA it fills a quarter fewer L1
  // lines (each x line feeds 16 FMAs, not 8; each dY line all 16 lanes, not 8), and at
  // <= 256 pixels a unit's x and dY blocks (128 B a pixel) fit L1 together. Zen 4,
  // interleaved A/B, best GFLOP/s, 1 thread: 14x14 1024 -> 256 107.1-107.5 ->
  // 111.2-111.8, 7x7 2048 -> 512 101.3-102.1 -> 104.5-105.3, 256 -> 1024 and
  // 512 -> 2048 +3%; 2 threads +1.5-3%; on 28x28 and 56x56 planes it was level or up to 3%
  // slower (256 -> 64), so they keep 3 x 8 (bench/results/2026-11-29-zen4-dnn-1x1-3.md).
  // Intel keeps 3 x 8 (not measured).
  bool wide_bwdw_x(index_t chunk) const {
    return amd() && chunk <= 256;
  }

  // The output-lanes form with the tile-major accumulator (nChw8c), see the top.
  void backward_weights_acc(const float* x, const float* dy, float* dw, bool accumulate) {
    const index_t C = d_.c, K = d_.k, kgroups = ceil_div(kb_, g_.blocks), B = B_, G = G_;
    const PwbBwdwKernel kernel = g_.k.bwdw;
    const PwbDwStoreKernel store = g_.k.dw_store;
    // Pixel chunks of up to 256, evenly split (196 = 4 x 49, not 3 x 64 + 4), and input
    // channels in blocks of 48 (16 tiles of 3): the block's tiles sweep one 32-channel
    // group of dY (<= 32 KiB) and the block's x (<= 48 KiB) from L1/L2; work units are
    // (32-channel output group, channel block), output groups outer when dY is the larger
    // operand, so threads' ranges hold equal shares of channels (the last channel block
    // may be short: 64 = 48 + 16; 64 -> 256 at 2 threads 76 -> 87 GFLOP/s). (Chunks of 64 and 96 measured 0-10% slower in
    // the A/B, channel blocks of 24 and 96 alike.) The first pass's tiles start from zero
    // and the last pass stores its unit's block (6 KiB, still in L1) to dw right away,
    // so a single-pass layer (N = 1, one chunk) never moves the accumulator through L2.
    // AMD, chunks of at most 64 pixels (7x7 planes): channel blocks of twice that (96
    // channels, the block's x 18 KiB of L1), half as many passes over dY. Zen 3 (AVX2)
    // 2048 -> 512 7x7 against the library before it, alternating processes: 1 thread
    // 40.4-45.5 -> 46.6-55.3 GFLOP/s (0.70-0.79x -> 0.83-0.92x oneDNN 2.6), 2 threads
    // 57.4-66.6 -> 64.7-73.2 (0.61-0.77x -> 0.79-0.81x); longer chunks keep 48 (1024 -> 256
    // 14x14 measured slower with 96; bench/results/2026-11-29-zen3-dnn-1x1.md). Intel
    // keeps 48 (not measured).
    // AMD, output groups outer (K > C) on planes of several chunks: chunks of half that
    // (128), so a unit's 32-channel dY chunk (16 KiB) stays in L1 across its tiles. Zen 3
    // 64 -> 256 56x56 in alternating processes, 1 thread 34.2-48.1 -> 39.5-45.3 GFLOP/s
    // (median 39.1 -> 42.8, ratio to oneDNN median 0.96x -> 1.09x), 2 threads 49.7-53.5 ->
    // 52.7-69.9; 128 -> 512 28x28 ratio median 0.93x -> 1.00x (1 thread), 0.88x -> 0.94x
    // (2 threads); 256 -> 64 (channels outer) measured slower with 64, so it keeps 256.
    // Chunks only split each dw element's sum over pixels, in order: bitwise as 256.
    const index_t pixels = g_.bwdw_pixels;
    const index_t target = amd() && K > C && plane_ > pixels ? pixels / 2 : pixels;
    const index_t tile_cols = g_.cols;
    const index_t chunks = ceil_div(plane_, target), chunk = ceil_div(plane_, chunks);
    const index_t cblk = amd() && chunk <= 64 ? 2 * g_.bwdw_cblk : g_.bwdw_cblk;
    const index_t cblocks = ceil_div(C, cblk), units = cblocks * kgroups;
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), units));
    const index_t xs = plane_ * B;
    // Work units run the larger operand once: channel blocks outer when x has more
    // channels than dY (the block's x stays in L1/L2 while the groups' dY, smaller,
    // comes from L2; 1024 -> 256 +2%, 512 -> 128 +6% in the A/B), output groups outer
    // otherwise (256 -> 1024: channel blocks outer measured 6% slower).
    const bool channels_outer = C > K;
    // One pass (one image, one chunk): each unit's sums go from its tiles to dw at once,
    // so a thread reuses one unit-sized block (<= 12 KiB, stays in L1) instead of the
    // whole [kgroups][C][G] buffer, whose lines (4 MiB on 7x7 2048 -> 512) would be
    // written out to memory after the store: Zen 3 2048 -> 512 7x7 1 thread
    // 41.7-42.4 -> 46.8-52.0 GFLOP/s in the A/B (bench/results/2026-11-29-zen3-dnn-1x1-bwdw.md).
    // Same tiles, same order: bitwise as the whole buffer.
    const bool one_pass = d_.n == 1 && chunks == 1;
    const auto acc_size = static_cast<std::size_t>(one_pass ? nt * cblk * G : kgroups * C * G);
    if (dwacc_.size() < acc_size) dwacc_ = arch::AlignedBuffer<float>(acc_size);
    ops::run_team(nt, [&] {
      // This thread's block (one pass) or the whole buffer, and a unit's block in it.
      float* const acc_base = dwacc_.data() + (one_pass ? omp_get_thread_num() * cblk * G : 0);
      const auto unit_acc = [&](index_t kg, index_t c) {
        return one_pass ? acc_base + (c % cblk) * G : acc_base + (kg * C + c) * G;
      };
      index_t u0 = 0, u1 = units;
      split_range(units, omp_get_thread_num(), omp_get_num_threads(), u0, u1);
      PwbBwdwArgs a{};
      a.dy_bstride = xs;
      a.x_bstride = xs;
      a.acc_cstride = G;
      for (index_t n = 0; n < d_.n; ++n)
        for (index_t ch = 0; ch < chunks; ++ch) {
          const index_t p0 = ch * chunk;
          const bool last = n == d_.n - 1 && ch == chunks - 1;
          a.pixels = std::min(plane_, p0 + chunk) - p0;
          a.x = x + n * cb_ * xs + p0 * B;
          a.zero_init = n == 0 && ch == 0;
          for (index_t u = u0; u < u1; ++u) {
            const index_t kg = channels_outer ? u % kgroups : u / cblocks;
            const index_t cbk = channels_outer ? u / kgroups : u % cblocks;
            a.nb = static_cast<int>(std::min<index_t>(g_.blocks, kb_ - kg * g_.blocks));
            a.dy = dy + (n * kb_ + kg * g_.blocks) * xs + p0 * B;
            const index_t c_begin = cbk * cblk, c_end = std::min(C, (cbk + 1) * cblk);
            // The last pass pulls the unit's dw lines into L1, a few rows per tile (the
            // store then writes cached lines; 14x14 1024<->256: +4-9% in the A/B).
            const index_t rows = std::min<index_t>(G, K - kg * G), cols = c_end - c_begin;
            float* dw_unit = dw + kg * G * C + c_begin;
            const index_t pf_rows = ceil_div(rows, ceil_div(cols, tile_cols));
            index_t pf_row = last ? 0 : rows;
            for (index_t c0 = c_begin; c0 < c_end; c0 += tile_cols) {
              for (index_t r = 0; r < pf_rows && pf_row < rows; ++r, ++pf_row) {
                const float* row = dw_unit + pf_row * C;
                for (index_t off = 0; off < cols; off += 16) __builtin_prefetch(row + off, 1, 3);
                __builtin_prefetch(row + cols - 1, 1, 3);
              }
              a.c0 = c0;
              a.cols = static_cast<int>(std::min<index_t>(tile_cols, c_end - c0));
              a.acc = unit_acc(kg, c0);
              kernel(a);
            }
            // dw (+)= the unit's block of the tile-major accumulator, 8x8 blocks transposed.
            if (last) store(unit_acc(kg, c_begin), G, rows, cols, dw_unit, C, accumulate);
          }
        }
    });
  }

  // db (+)= sum over images and pixels of dY, per lane in double.
  void bias_gradient(const float* dy, float* dbias, bool accumulate) const {
    const index_t K = d_.k, B = B_, xs = plane_ * B;
    for (index_t b = 0; b < kb_; ++b) {
      double s[16] = {};
      for (index_t n = 0; n < d_.n; ++n) {
        const float* v = dy + (n * kb_ + b) * xs;
        for (index_t p = 0; p < plane_; ++p)
          for (index_t l = 0; l < B; ++l) s[l] += v[p * B + l];
      }
      for (index_t l = 0; l < B && b * B + l < K; ++l)
        dbias[b * B + l] = accumulate ? dbias[b * B + l] + static_cast<float>(s[l]) : static_cast<float>(s[l]);
    }
  }

  // [group of `blocks` output blocks][input channel (padded)][nb * B]: W (rows k,
  // columns c) or W^T (rows c, columns k), zero past the real channels.
  void pack(const float* w, bool transposed, arch::AlignedBuffer<float>& out) const {
    const index_t rows = transposed ? d_.c : d_.k, cols = transposed ? d_.k : d_.c;
    const index_t rblocks = ceil_div(rows, B_), cpad = ceil_div(cols, B_) * B_;
    const index_t groups = ceil_div(rblocks, g_.blocks);
    const auto size = static_cast<std::size_t>(groups * cpad * G_);
    if (out.size() != size) out = arch::AlignedBuffer<float>(size);
    std::fill(out.data(), out.data() + size, 0.0f);
    for (index_t r = 0; r < rows; ++r) {
      const index_t q = r / G_, nb = std::min<index_t>(g_.blocks, rblocks - q * g_.blocks);
      float* dst = out.data() + q * cpad * G_ + r % G_;
      for (index_t c = 0; c < cols; ++c)
        dst[c * nb * B_] = transposed ? w[c * d_.c + r] : w[r * d_.c + c];
    }
  }

  // out (out_blocks blocks) = packed (x, in_blocks blocks) [+ bias8], per image.
  // Threads split either the pixels (work items (image, pixel chunk), every thread
  // streaming all the packed weights) or the packed groups of output channels (each
  // thread its own share of the weights over every pixel, reading all the input):
  // whichever reads fewer bytes per thread. ResNet's 14x14 1024 <-> 256 layers at batch
  // 1 (1 MiB of weights, 196-784 KiB of input) split the groups: at 2 threads forward
  // and backward-data 0.73-0.86x -> 0.83-1.15x oneDNN 2.6
  // (bench/results/2026-11-28-xeon-dnn-remaining.md). The groups' split changes no
  // output's summation order: 1 and 2 threads agree bitwise.
  void run(const float* x, index_t in_blocks, const float* packed, index_t out_blocks,
           const float* bias8, float* y) {
    const int nt = arch::threads_for_call();
    const index_t B = B_, NB = g_.blocks, TP = g_.pixels;
    const index_t cpad = in_blocks * B, groups = ceil_div(out_blocks, NB);
    const index_t wbytes = cpad * out_blocks * B * 4, in_bytes = d_.n * cpad * plane_ * 4;
    const bool split_groups =
        nt > 1 && groups >= nt && wbytes / nt + in_bytes < wbytes + in_bytes / nt;
    // Every chunk streams the (thread's) packed weights: when they outgrow L2 (ResNet's
    // 14x14 1024 <-> 256 layers: 1 MiB) chunks of 512 KiB of input, not 128 (+5-10%
    // there in the A/B; 128 KiB measured better on 56x56 and 28x28 layers with small
    // weights).
    const index_t wthread = split_groups ? wbytes / nt : wbytes;
    const index_t target = std::clamp<index_t>(
        (wthread > 256 * 1024 ? 4 : 1) * kChunkBytes / (cpad * 4), 24, 768);
    // Chunks split the plane evenly (196 = 2 x 98, not 126 + 70), in multiples of the
    // tile's pixels; splitting pixels with 2+ threads, at least 4 items per thread.
    index_t chunks = ceil_div(plane_, target);
    if (nt > 1 && !split_groups)
      while (d_.n * chunks < 4 * nt && ceil_div(plane_, chunks + 1) >= 24) ++chunks;
    const index_t chunk = ceil_div(ceil_div(plane_, chunks), TP) * TP;
    chunks = ceil_div(plane_, chunk);
    const index_t items = d_.n * chunks;
    if (split_groups) {
      ops::run_team(nt, [&] {
        index_t q0 = 0, q1 = groups;
        split_range(groups, omp_get_thread_num(), omp_get_num_threads(), q0, q1);
        for (index_t it = 0; it < items; ++it) run_item(x, in_blocks, packed, out_blocks, bias8, y, it, chunks, chunk, q0, q1);
      });
      return;
    }
    ops::parallel_for_dynamic(nt, items, [&](index_t it) { run_item(x, in_blocks, packed, out_blocks, bias8, y, it, chunks, chunk, 0, groups); });
  }

  // Input blocks per reduction pass of run_item: the Geometry's, except that AMD
  // nChw16c reduces up to twice that (8 blocks, 128 channels, a group's packed weights
  // 32 KiB) in one pass instead of two that store and reload every output tile between
  // them: Zen 4 512 -> 128 28x28 backward-data (8 input blocks) 1 thread +1-3%, 2
  // threads +0-1% best and median in the A/B, 128 -> 512 forward level to +1%
  // (bench/results/2026-11-29-zen4-dnn-1x1-2.md). Intel keeps two passes (not measured).
  index_t reduce_blocks(index_t in_blocks) const {
    return B_ == 16 && amd() && in_blocks <= 2 * g_.reduce_blocks ? in_blocks : g_.reduce_blocks;
  }

  // One work item of run(): image it / chunks, pixel chunk it % chunks, packed groups [q0, q1).
  void run_item(const float* x, index_t in_blocks, const float* packed, index_t out_blocks, const float* bias8,
                float* y, index_t it, index_t chunks, index_t chunk, index_t q0, index_t q1) const {
    const index_t B = B_, G = G_, NB = g_.blocks, R = reduce_blocks(in_blocks), cpad = in_blocks * B, xs = plane_ * B;
    const index_t n = it / chunks, p0 = it % chunks * chunk;
    const PwbFwdKernel kernel = g_.k.fwd;
    PwbFwdArgs a{};
    a.x_bstride = xs;
    a.y_bstride = xs;
    a.pixels = std::min(plane_, p0 + chunk) - p0;
    for (index_t r0 = 0; r0 < in_blocks; r0 += R) {
      a.cblocks = std::min(R, in_blocks - r0);
      a.x = x + (n * in_blocks + r0) * xs + p0 * B;
      a.accumulate = r0 > 0;
      for (index_t q = q0; q < q1; ++q) {
        a.nb = static_cast<int>(std::min<index_t>(NB, out_blocks - q * NB));
        a.w = packed + q * cpad * G + r0 * B * a.nb * B;
        a.y = y + (n * out_blocks + q * NB) * xs + p0 * B;
        a.bias = r0 == 0 && bias8 ? bias8 + q * G : nullptr;
        a.prefetch_x = q == q0;
        // The next (group, reduction block)'s weights are pulled into L2 over this
        // run's tiles: 14x14 1024 <-> 256 (1 MiB of weights, each 16 KiB block read
        // once per chunk, cold) +2-6% median forward and backward-data in the A/B;
        // layers whose weights stay in L2 unchanged (-1..+4%).
        const index_t q2 = q + 1 < q1 ? q + 1 : q0, r2 = q + 1 < q1 ? r0 : r0 + R;
        a.next_w = nullptr;
        if (r2 < in_blocks) {
          const index_t nb2 = std::min<index_t>(NB, out_blocks - q2 * NB);
          a.next_w = packed + q2 * cpad * G + r2 * B * nb2 * B;
          a.next_w_floats = std::min(R, in_blocks - r2) * B * nb2 * B;
        }
        kernel(a);
      }
    }
  }

  ConvDesc d_;
  Geometry g_;
  index_t B_, G_;  // lanes per block, output channels per packed group
  index_t plane_, cb_, kb_;
  arch::AlignedBuffer<float> wfwd_, wbwd_, bias8_, dwacc_;
  std::vector<double> bias_sums_;  // backward_weights_x's bias sums (nChw16c)
};

}  // namespace

// AMD (Zen 4): x and dY lines 4 pixels ahead into L1 (with the 1x1 path's next-dY L2
// prefetch: 56x56 64 -> 256 at 2 threads +6% in the A/B, see the top); Intel none.
std::int64_t pwb_bwdw_x_prefetch_ahead() {
  static const std::int64_t ahead = arch::cpu_features().amd() ? 4 : 0;
  return ahead;
}

// AMD, a dw of 1 MiB and more overwritten in one pass: streaming stores, no write
// prefetch (the read-for-ownership of a cold dw costs as much as writing it). Zen 4
// 2048 -> 512 7x7 1 thread +2-3%, 2 threads +6-12%, 1024 -> 256 +1-4% in the A/B; dw of
// 64-256 KiB level or -1% (kept cached for the caller). Needs whole 16-float blocks per
// row and 64-byte aligned rows (bench/results/2026-11-28-zen4-dnn-1x1.md).
bool pwb_bwdw_x_streams(const float* dw, std::int64_t k, std::int64_t cols, bool accumulate) {
  static const bool amd = arch::cpu_features().amd();
  return amd && !accumulate && cols % 16 == 0 && k * cols * 4 >= (std::int64_t{1} << 20) &&
         reinterpret_cast<std::uintptr_t>(dw) % 64 == 0;
}

std::unique_ptr<ConvAlgorithm> make_pointwise_blocked(const ConvDesc& d, int block) {
  return std::make_unique<PointwiseBlocked>(d, block);
}

}  // namespace taihu::dnn::conv
