// direct_input_lanes: backward-weights of stride-1 undilated convolutions (one group,
// kernels larger than 1x1) in oneDNN's input-lanes form, the 1x1 nChw16c tile
// (pointwise_blocked_kernels.hpp, PwbBwdwXArgs) once per kernel tap:
//   dW[k][c][tap] = sum over images and output pixels of dY[k][p] X[c][p + tap's offset].
// x is copied once per call into a zero-padded 16-channel-blocked plane
// ([n][c / 16][padded row][padded column][16]; in one pass on AVX-512), so a tap's input
// pixels for an output row are consecutive vectors (the tile runs over the output rows:
// PwbBwdwXArgs::runs), and dY into nChw16c (broadcast per output channel).
// Work units are (tile of 8 output channels, group of 2-3 input blocks), output-tile-
// major as the 1x1 path: per unit each tap's 8 x (32-48) tile stays in registers over
// every image and output row and lands in a per-thread [tap][8][48] buffer (L1), which is
// then written into the unit's 8 OIHW dw rows (each a contiguous run of channels x taps;
// input_lanes_kernels.hpp's TapStoreKernel, streaming where the 1x1 path streams).
// Threads own contiguous ranges of units (disjoint dw: deterministic, no reduction).
// Row bands: when an image's blocked copies outgrow L2 (ResNet-50 res2, 56x56 x 64:
// 1.6 MiB, re-read by every unit), the output rows are taken in bands of a few rows,
// every unit of the thread passing over one band (its x rows plus the kernel's halo and
// its dY rows, ~256 KiB: L2-resident across the units) before the next; each unit then
// keeps its own [tap][8][48] buffer across the bands and writes its dw rows after the
// last. Every (unit, tap) still sums images, rows and pixels in the same order, so the
// banded dw is bitwise the unbanded one. TAIHU_INPUT_LANES_BAND_ROWS=n forces n rows
// per band (0: never band; tests and A/B runs). Measured on Zen 4 only (1 MiB L2, 32 MiB
// L3): res2 level banded or not (bands of 3 / 6 / 14 rows 103 / 103 / 104-106 GFLOP/s,
// unbanded 100-106, 1 thread), res4 slower in bands of 3-6 rows (84-91 vs 99-104), so
// only images over 1 MiB band (bench/results/2026-11-28-zen4-dnn-bwdw2.md); `automatic`
// leaves res2 to Winograd.
// Column form (small images: AMD, <= 64 output pixels in the batch, ResNet-50 res5 at
// batch 1; TAIHU_INPUT_LANES_COLS=1 / 0 forces it): x's columns (c * taps + t, the OIHW
// dw row order) are built once per call, 16 to a block (input_lanes_kernels.hpp's
// ColBuildKernel), and dW = dY x Xcol^T runs as the
// 1x1 input-lanes tile over C * taps channels and every pixel of every image, stored
// straight into the dw rows (no per-tap calls over short rows, no tap interleave of dw).
// Forward and backward-data are not this entry's (supports() declines them).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "input_lanes_kernels.hpp"
#include "pointwise_blocked_kernels.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/layout.hpp"

namespace taihu::dnn::conv {

namespace {

constexpr index_t kB = 16;  // lanes per channel block

struct InputLanesKernels {
  PwbBwdwXKernel tile;
  TapStoreKernel store;
  ColBuildKernel col_build;
  PadBlockKernel pad;  // nullptr: reorder into nChw16c, then copy rows into the planes
};

const InputLanesKernels& input_lanes_kernels() {
  static const arch::ImplementationList<InputLanesKernels> list(
      "direct input-lanes backward-weights kernels",
      {{"avx512_48x8", arch::Isa::avx512,
        {&pwb16_bwdw_x_avx512, &tap_store_avx512, &col_build_avx512, &pad_block_avx512}},
       {"generic", arch::Isa::generic, {&pwb16_bwdw_x_generic, &tap_store_generic, &col_build_generic, nullptr}}});
  return list.chosen().impl;
}

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

class DirectInputLanes final : public ConvAlgorithm {
 public:
  explicit DirectInputLanes(const ConvDesc& d)
      : d_(d), oh_(d.out_h()), ow_(d.out_w()), hp_(d.h + 2 * d.pad_h), wp_(d.w + 2 * d.pad_w),
        taps_(d.kh * d.kw), cb_(ceil_div(d.c, kB)), kb_(ceil_div(d.k, kB)) {
    band_rows_ = oh_;
    // Column form on AMD for batches of <= 64 output pixels (ResNet-50 res5 at batch 1:
    // per-tap calls over 7-pixel rows and the dw interleave cost more than building the
    // 0.9 MiB of columns). Zen 4, A/B in one process, 1 thread: res5 80.8 -> 93.3 GFLOP/s,
    // res4 (196 pixels, 1.8 MiB of columns) 99.3 -> 94.1: not there
    // (bench/results/2026-11-29-zen4-dnn-lanes.md). Intel unmeasured.
    cols_auto_ = arch::cpu_features().amd() && d.n * oh_ * ow_ <= 64;
    const char* env = std::getenv("TAIHU_INPUT_LANES_BAND_ROWS");
    if (env != nullptr && *env != '\0') {
      const long v = std::strtol(env, nullptr, 10);
      if (v > 0) band_rows_ = std::min<index_t>(oh_, v);
      return;
    }
    // Automatic: band once an image's padded x + dY copies exceed 1 MiB (the entry's
    // L2 budget, conv_list.cpp), ~256 KiB per band, at least 2 rows.
    const index_t row_bytes = (cb_ * wp_ + kb_ * ow_) * kB * 4;
    const index_t image_bytes = cb_ * hp_ * wp_ * kB * 4 + kb_ * oh_ * ow_ * kB * 4;
    if (image_bytes > (index_t{1} << 20))
      band_rows_ = std::min(oh_, std::max<index_t>(2, (index_t{256} << 10) / row_bytes - (d.kh - 1)));
  }

  void forward(const float*, const float*, const float*, float*, WeightsHint) override {
    throw Error("taihu: conv: direct_input_lanes computes backward-weights only (" + d_.str() + ")");
  }
  void backward_data(const float*, const float*, float*, WeightsHint) override {
    throw Error("taihu: conv: direct_input_lanes computes backward-weights only (" + d_.str() + ")");
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) override {
    if (use_cols()) {
      backward_weights_cols(x, dy, dw, accumulate);
      bias_gradient(d_, dy, dbias, accumulate);
      return;
    }
    const index_t C = d_.c, K = d_.k, N = d_.n, NK = kPwb16XRows;
    const index_t xplane = hp_ * wp_ * kB, yplane = oh_ * ow_ * kB;
    ensure_copies();
    const index_t groups = ceil_div(cb_, kPwb16XVecs), units = ceil_div(K, NK) * groups;
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), units));
    const index_t ldb = kPwb16XVecs * kB;  // the unit buffer's row: [tap][8][48]
    const auto buf_floats = static_cast<std::size_t>(taps_ * NK * ldb);
    const index_t bands = ceil_div(oh_, band_rows_);
    // Unbanded: one buffer per thread, reused unit after unit. Banded: one per unit
    // (each thread's units' buffers consecutive).
    const auto nbufs = static_cast<std::size_t>(bands > 1 ? units : nt);
    if (buf_.size() < buf_floats * nbufs) buf_ = arch::AlignedBuffer<float>(buf_floats * nbufs);
    const PwbBwdwXKernel kernel = input_lanes_kernels().tile;
    const TapStoreKernel store = input_lanes_kernels().store;
    // dw rows out through streaming stores where the 1x1 path takes them (AMD, >= 1 MiB
    // overwritten: every unit's rows are written once, after its last image and band);
    // then no write prefetch of the next unit's rows. Zen 4, res4 3x3 (2.25 MiB of dw),
    // A/B in one process: 2 threads +2-3%, 1 thread +1.5-2.5%
    // (bench/results/2026-11-29-zen4-dnn-lanes2.md).
    const bool stream = pwb_bwdw_x_streams(dw, K, C * taps_, accumulate);
    ops::run_team(nt, [&] {
      // x into its padded planes and dY into nChw16c a block at a time among the threads
      // (lanes past the channels zero; copy_x, the layout module's reorder for dY)
      // (2 threads, A/B against the serial copies:
      // ResNet-50 res3 3x3 318-333 vs 304-306 GFLOP/s, res4 and res5 level).
#pragma omp for schedule(static) nowait
      for (index_t nb = 0; nb < N * cb_; ++nb) copy_x(x, nb);
      reorder_dy(dy);
      index_t u0 = 0, u1 = units;
      split_range(units, omp_get_thread_num(), omp_get_num_threads(), u0, u1);
      PwbBwdwXArgs a{};
      a.x_bstride = xplane;
      a.ldw = ldb;
      a.pixels = ow_;
      a.x_rstride = wp_ * kB;
      a.dy_rstride = ow_ * kB;
      if (bands == 1) {
        float* buf = buf_.data() + static_cast<std::size_t>(omp_get_thread_num()) * buf_floats;
        a.runs = oh_;
        for (index_t u = u0; u < u1; ++u) {
          const Unit un = unit(u, groups, a);
          // The next unit's dw rows (cold: written once), pulled in for writing a row per
          // tap call while this unit's tiles run (ResNet-50 res5 3x3, 7x7, 9 MiB of dw:
          // 72-80 -> 95-103 GFLOP/s in the A/B; res3 and res4 level within noise).
          index_t pf_k = 0, pf_c0 = 0, pf_len = 0;
          if (u + 1 < u1 && !stream) {
            index_t w0 = 0, w1 = 0;
            split_range(cb_, static_cast<int>((u + 1) % groups), static_cast<int>(groups), w0, w1);
            pf_k = (u + 1) / groups * NK;
            pf_c0 = w0 * kB;
            pf_len = (std::min(C, w1 * kB) - pf_c0) * taps_;
          }
          const index_t pf_rows = pf_len > 0 ? std::min(NK, K - pf_k) : 0;
          for (index_t n = 0; n < N; ++n) {
            a.accumulate = n > 0;
            a.dy = dyb_.data() + (n * kb_ + un.k0 / kB) * yplane + un.k0 % kB;
            for (index_t t = 0; t < taps_; ++t) {
              a.x = xpad_.data() + (n * cb_ + un.v0) * xplane + (t / d_.kw * wp_ + t % d_.kw) * kB;
              a.dw = buf + t * NK * ldb;
              kernel(a);
              if (n == 0 && t < pf_rows) {
                const float* row = dw + ((pf_k + t) * C + pf_c0) * taps_;
                for (index_t off = 0; off < pf_len; off += 16) __builtin_prefetch(row + off, 1, 2);
                __builtin_prefetch(row + pf_len - 1, 1, 2);
              }
            }
          }
          // dw[k0 + j][c][tap] (+)= buf[tap][j][c - c0]: per row one contiguous run, whole
          // vectors per 16 channels at 3x3 (input_lanes_kernels.hpp; 16 x 16 register
          // transposes before: ResNet-50 res4 3x3 143-159 GFLOP/s vs 123-125 with the
          // scalar loop, 1 thread, bench/results/2026-11-28-xeon-dnn-remaining.md).
          for (index_t j = 0; j < a.rows; ++j)
            store(buf + j * ldb, NK * ldb, taps_, un.c1 - un.c0, dw + ((un.k0 + j) * C + un.c0) * taps_, accumulate,
                  stream);
        }
      } else {
        // Banded: images, then bands of output rows, then the thread's units, each
        // accumulating into its own buffer; the dw rows written after the last band.
        for (index_t n = 0; n < N; ++n)
          for (index_t r0 = 0; r0 < oh_; r0 += band_rows_) {
            a.runs = std::min(band_rows_, oh_ - r0);
            a.accumulate = n > 0 || r0 > 0;
            const bool last = n == N - 1 && r0 + band_rows_ >= oh_;
            for (index_t u = u0; u < u1; ++u) {
              const Unit un = unit(u, groups, a);
              float* buf = buf_.data() + static_cast<std::size_t>(u) * buf_floats;
              a.dy = dyb_.data() + (n * kb_ + un.k0 / kB) * yplane + r0 * ow_ * kB + un.k0 % kB;
              for (index_t t = 0; t < taps_; ++t) {
                a.x = xpad_.data() + (n * cb_ + un.v0) * xplane + ((r0 + t / d_.kw) * wp_ + t % d_.kw) * kB;
                a.dw = buf + t * NK * ldb;
                kernel(a);
              }
              if (last)
                for (index_t j = 0; j < a.rows; ++j)
                  store(buf + j * ldb, NK * ldb, taps_, un.c1 - un.c0, dw + ((un.k0 + j) * C + un.c0) * taps_,
                        accumulate, stream);
            }
          }
      }
      if (stream) _mm_sfence();
    });
    bias_gradient(d_, dy, dbias, accumulate);
  }

 private:
  // The column form (see the top): TAIHU_INPUT_LANES_COLS=1 / 0 forces it on / off (read
  // per call, for the tests and A/B runs); otherwise automatic.
  bool use_cols() const {
    const char* env = std::getenv("TAIHU_INPUT_LANES_COLS");
    if (env != nullptr && *env != '\0') return *env == '1';
    return cols_auto_;
  }

  // Column form: x's columns Xcol[c * taps + t][n][p] = x[n][c][p + tap t's offset] in
  // 16-column blocks ([block][n][p][16]), built once per call from the padded blocked
  // copy (a channel block's taps x 16 values per pixel are exactly taps whole column
  // vectors, ColBuildKernel); then dW (K x C taps, OIHW rows) = dY x Xcol^T is
  // the 1x1 input-lanes backward-weights over C * taps "channels": units of 8 output
  // channels x 2-3 column blocks reduce over every image (runs) and pixel and store
  // straight into dw, no per-tap buffer and no dw interleave.
  void backward_weights_cols(const float* x, const float* dy, float* dw, bool accumulate) {
    const index_t C = d_.c, K = d_.k, N = d_.n, NK = kPwb16XRows, T = taps_, P = oh_ * ow_;
    const index_t xplane = hp_ * wp_ * kB, yplane = P * kB, CT = C * T;
    const index_t colblocks = ceil_div(CT, kB);  // used blocks (cb_ * T built)
    const index_t cstride = N * P * kB;          // floats between column blocks
    ensure_copies();
    const auto colsize = static_cast<std::size_t>(cb_ * T * cstride);
    if (xcol_.size() != colsize) xcol_ = arch::AlignedBuffer<float>(colsize);
    // Units output-tile-major as the 1x1 path (group-major: level at 1 thread on res4 /
    // res5, slower at 2: 173 vs 180, 176 vs 191 GFLOP/s).
    const index_t groups = ceil_div(colblocks, kPwb16XVecs), units = ceil_div(K, NK) * groups;
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), units));
    const PwbBwdwXKernel kernel = input_lanes_kernels().tile;
    const ColBuildKernel col_build = input_lanes_kernels().col_build;
    // Batch 1 (dw written in one pass): streaming stores where the 1x1 path takes them,
    // else the next unit's dw lines prefetched for writing.
    const bool stream = N == 1 && pwb_bwdw_x_streams(dw, K, CT, accumulate);
    ops::run_team(nt, [&] {
#pragma omp for schedule(static) nowait
      for (index_t nb = 0; nb < N * cb_; ++nb) {
        const index_t n = nb / cb_, cbk = nb % cb_;
        copy_x(x, nb);
        const float* xp = xpad_.data() + nb * xplane;
        float* col = xcol_.data() + cbk * T * cstride + n * P * kB;
        // A pixel's taps in registers, stored as whole column vectors (per-pixel staging
        // copies and a tap interleave before, 18 memmove calls a pixel: 22% of res5's
        // 2-thread samples; Zen 4 A/B 2 threads 136-153 -> 167-172 GFLOP/s, 1 thread
        // 94 -> 97, bench/results/2026-11-29-zen4-dnn-lanes2.md).
        for (index_t oy = 0; oy < oh_; ++oy)
          col_build(xp + oy * wp_ * kB, wp_, static_cast<int>(d_.kh), static_cast<int>(d_.kw), ow_,
                    col + oy * ow_ * kB, cstride);
      }
      reorder_dy(dy);
      index_t u0 = 0, u1 = units;
      split_range(units, omp_get_thread_num(), omp_get_num_threads(), u0, u1);
      PwbBwdwXArgs a{};
      a.x_bstride = cstride;
      a.ldw = CT;
      a.pixels = P;
      a.runs = N;
      a.x_rstride = P * kB;
      a.dy_rstride = kb_ * yplane;
      a.accumulate = accumulate;
      a.stream = stream;
      a.prefetch_ahead = pwb_bwdw_x_prefetch_ahead();
      const auto unit = [&](index_t u, index_t& v0, index_t& v1) {
        split_range(colblocks, static_cast<int>(u % groups), static_cast<int>(groups), v0, v1);
        return u / groups * NK;
      };
      for (index_t u = u0; u < u1; ++u) {
        index_t v0 = 0, v1 = 0;
        const index_t k0 = unit(u, v0, v1);
        a.vecs = static_cast<int>(v1 - v0);
        a.last_lanes = static_cast<int>(std::min(kB, CT - (v1 - 1) * kB));
        a.x = xcol_.data() + v0 * cstride;
        a.rows = static_cast<int>(std::min(NK, K - k0));
        a.dy = dyb_.data() + (k0 / kB) * yplane + k0 % kB;
        a.dw = dw + k0 * CT + v0 * kB;
        a.next_dw = nullptr;
        if (u + 1 < u1 && !stream) {
          index_t w0 = 0, w1 = 0;
          const index_t k1 = unit(u + 1, w0, w1);
          a.next_dw = dw + k1 * CT + w0 * kB;
        }
        kernel(a);
      }
      if (stream) _mm_sfence();
    });
  }

  struct Unit {
    index_t k0, v0, c0, c1;
  };
  // Unit u: output channels k0.. (8), input blocks v0.. of its group; sets the tile's
  // vecs, last_lanes and rows.
  Unit unit(index_t u, index_t groups, PwbBwdwXArgs& a) const {
    index_t v0 = 0, v1 = 0;
    split_range(cb_, static_cast<int>(u % groups), static_cast<int>(groups), v0, v1);
    const index_t k0 = u / groups * kPwb16XRows, c0 = v0 * kB, c1 = std::min(d_.c, v1 * kB);
    a.vecs = static_cast<int>(v1 - v0);
    a.last_lanes = static_cast<int>(c1 - (v1 - 1) * kB);
    a.rows = static_cast<int>(std::min<index_t>(kPwb16XRows, d_.k - k0));
    return {k0, v0, c0, c1};
  }

  // The blocked copies both forms read: x in nChw16c (xb_, only without a
  // PadBlockKernel), its zero-padded planes (xpad_: the padding and the lanes past c stay
  // zero) and dY in nChw16c (dyb_).
  void ensure_copies() {
    const auto xsize = static_cast<std::size_t>(d_.n * cb_ * hp_ * wp_ * kB);
    if (xpad_.size() != xsize) {
      xpad_ = arch::AlignedBuffer<float>(xsize);
      std::fill(xpad_.data(), xpad_.data() + xsize, 0.0f);
    }
    const auto ysize = static_cast<std::size_t>(d_.n * kb_ * oh_ * ow_ * kB);
    if (dyb_.size() != ysize) dyb_ = arch::AlignedBuffer<float>(ysize);
    const auto bsize = static_cast<std::size_t>(d_.n * cb_ * d_.h * d_.w * kB);
    if (input_lanes_kernels().pad == nullptr && xb_.size() != bsize) xb_ = arch::AlignedBuffer<float>(bsize);
  }

  // dY into dyb_, a 16-channel block per iteration among the calling team's threads
  // (an orphaned worksharing loop: call it from run_team's body), then its barrier.
  void reorder_dy(const float* dy) {
    const index_t plane = oh_ * ow_;
#pragma omp for schedule(static)
    for (index_t nb = 0; nb < d_.n * kb_; ++nb) {
      const index_t n = nb / kb_, k0 = nb % kb_ * kB;
      reorder_nchw_to_layout(dy + (n * d_.k + k0) * plane, dyb_.data() + nb * plane * kB, ActLayout::nchw16c, 1,
                             std::min(kB, d_.k - k0), oh_, ow_);
    }
  }

  // Block nb (image * cb + channel block) of NCHW x into its padded plane's interior:
  // in one pass where the kernel set has one (AVX-512: PadBlockKernel), else reordered
  // into nChw16c (the layout module's transposing reorder) and copied row by row.
  // Zen 4, ResNet-50 res4 3x3 at 2 threads, A/B in one process: +0.7-1.3% best, +0.9-1.3%
  // median (bench/results/2026-11-29-zen4-dnn-lanes3.md).
  void copy_x(const float* x, index_t nb) {
    const index_t n = nb / cb_, c0 = nb % cb_ * kB, plane = d_.h * d_.w, lanes = std::min(kB, d_.c - c0);
    const float* src = x + (n * d_.c + c0) * plane;
    float* dst = xpad_.data() + nb * hp_ * wp_ * kB;
    const PadBlockKernel pad = input_lanes_kernels().pad;
    if (pad != nullptr) {
      pad(src, lanes, d_.h, d_.w, dst + (d_.pad_h * wp_ + d_.pad_w) * kB, wp_);
      return;
    }
    float* blocked = xb_.data() + nb * plane * kB;
    reorder_nchw_to_layout(src, blocked, ActLayout::nchw16c, 1, lanes, d_.h, d_.w);
    for (index_t iy = 0; iy < d_.h; ++iy)
      std::copy(blocked + iy * d_.w * kB, blocked + (iy + 1) * d_.w * kB,
                dst + ((iy + d_.pad_h) * wp_ + d_.pad_w) * kB);
  }

  ConvDesc d_;
  index_t oh_, ow_, hp_, wp_, taps_, cb_, kb_, band_rows_ = 0;
  bool cols_auto_ = false;
  arch::AlignedBuffer<float> xb_, xpad_, dyb_, buf_, xcol_;
};

}  // namespace

bool direct_input_lanes_supports(const ConvDesc& d, ConvDirection dir) {
  return dir == ConvDirection::backward_weights && d.groups == 1 && d.stride_h == 1 && d.stride_w == 1 &&
         d.dil_h == 1 && d.dil_w == 1 && d.kh * d.kw > 1;
}

std::unique_ptr<ConvAlgorithm> make_direct_input_lanes(const ConvDesc& d) {
  return std::make_unique<DirectInputLanes>(d);
}

}  // namespace taihu::dnn::conv
