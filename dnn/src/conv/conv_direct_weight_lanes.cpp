// direct_weight_lanes: forward of stride-1 undilated one-group convolutions with output
// channels in the vector lanes, as oneDNN's jit_avx512_core forward on nChw16c: for small
// images with many channels (ResNet-50 res5 3x3: 512 x 512 channels, 7 x 7 pixels, 9 MiB
// of weights for 49 output pixels) the work is one pass over the weights, so each packed
// weight vector must feed as many output pixels as the registers hold
// (weight_lanes_kernels.hpp: 32 output channels x 2 rows x 7 columns per tile).
//   - Weights packed once per weight version into blocks of kWlBlock output channels,
//     [block][c][r][s][kWlBlock] (channels past k zero).
//   - x copied per call into zero-padded planes ([n][c][h + 2 pad_h][w + 2 pad_w]), so a
//     tile's taps are immediate offsets from one pointer and need no bounds.
//   - Work units are output-channel blocks, split evenly over the threads (each thread
//     streams its share of the weights once). Per unit, chunks of kChunk input channels:
//     the chunk's packed weights stay in L2 while every image's pixel tiles run over
//     them, the partial sums in a per-thread block-interleaved buffer
//     [n][pixel][kWlBlock] (L1 for small images); after the last chunk the unit's
//     output channels are written to the NCHW y.
// Backward-data: the forward of the transposed problem (rotated weights, cached with
// WeightsHint::unchanged), stride 1 only. Backward-weights is not this entry's.
#include "conv_direct_weight_lanes.hpp"
#include "core/parallel.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "weight_lanes_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

constexpr index_t kBlk = kWlBlock;
// Input channels per chunk (the partial sums are reloaded once per chunk): 128 x 9 taps
// x 32 output channels x 4 bytes = 144 KiB of packed weights, L2-resident while every
// pixel tile of the chunk runs over them. ResNet-50 res5 / res4 3x3 forward, 1 thread,
// Zen 4 (32 KiB L1, 1 MiB L2), A/B in one process, best GFLOP/s per chunk:
// 4: 97.6 / 96.7, 8: 98.2 / 104.4, 16 (L1-sized): 104.6 / 109.0, 32: 108.1-109.0 /
// 110.0-111.5, 64: 109.7 / 111.6, 128: 111.6 / 112.5, 512 (none): 111.0 / 112.5.
constexpr index_t kChunk = 128;

WlFwdKernel weight_lanes_kernel() {
  static const arch::ImplementationList<WlFwdKernel> list(
      "direct weights-lanes kernel", {{"avx512_32x2x7", arch::Isa::avx512, &wl_fwd_avx512},
                                      {"generic", arch::Isa::generic, &wl_fwd_generic}});
  return list.chosen().impl;
}

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

class DirectWeightLanes final : public ConvAlgorithm {
 public:
  explicit DirectWeightLanes(const ConvDesc& d)
      : d_(d),
        oh_(d.out_h()),
        ow_(d.out_w()),
        hp_(d.h + 2 * d.pad_h),
        wp_(d.w + 2 * d.pad_w),
        taps_(d.kh * d.kw),
        kblocks_(ceil_div(d.k, kBlk)),
        tbd_(d, &make_direct_weight_lanes) {}

  void forward(const float* x, const float* w, const float* bias, float* y,
               WeightsHint hint) override {
    const index_t C = d_.c, K = d_.k, N = d_.n, P = oh_ * ow_, plane = hp_ * wp_;
    if (!(hint == WeightsHint::unchanged && packed_)) pack(w);
    if (bias) {
      bias_.assign(static_cast<std::size_t>(kblocks_ * kBlk), 0.0f);
      std::copy(bias, bias + K, bias_.begin());
    }
    const auto xsize = static_cast<std::size_t>(N * C * plane);
    if (xpad_.size() != xsize) {
      xpad_ = arch::AlignedBuffer<float>(xsize);
      std::fill(xpad_.data(), xpad_.data() + xsize, 0.0f);  // the border stays zero
    }
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), kblocks_));
    const auto ybuf_floats = static_cast<std::size_t>(N * P * kBlk);
    if (ybuf_.size() < ybuf_floats * static_cast<std::size_t>(nt))
      ybuf_ = arch::AlignedBuffer<float>(ybuf_floats * static_cast<std::size_t>(nt));
    const WlFwdKernel kernel = weight_lanes_kernel();
    // Column segments of at most kWlCols, as even as possible (14 -> 7 + 7, 10 -> 5 + 5).
    const index_t segs = ceil_div(ow_, kWlCols);
    ops::run_team(nt, [&] {
#pragma omp for schedule(static)
      for (index_t nc = 0; nc < N * C; ++nc) {
        const float* src = x + nc * d_.h * d_.w;
        float* dst = xpad_.data() + nc * plane + d_.pad_h * wp_ + d_.pad_w;
        for (index_t iy = 0; iy < d_.h; ++iy)
          std::memcpy(dst + iy * wp_, src + iy * d_.w, sizeof(float) * d_.w);
      }
      index_t u0 = 0, u1 = kblocks_;
      split_range(kblocks_, omp_get_thread_num(), omp_get_num_threads(), u0, u1);
      float* ybuf = ybuf_.data() + static_cast<std::size_t>(omp_get_thread_num()) * ybuf_floats;
      WlFwdArgs a{};
      a.x_cstride = plane;
      a.x_rstride = wp_;
      a.kh = static_cast<int>(d_.kh);
      a.kw = static_cast<int>(d_.kw);
      a.y_rstride = ow_ * kBlk;
      for (index_t kb = u0; kb < u1; ++kb) {
        a.bias = bias ? bias_.data() + kb * kBlk : nullptr;
        for (index_t c0 = 0; c0 < C; c0 += kChunk) {
          a.channels = std::min(kChunk, C - c0);
          a.w = wpk_.data() + (kb * C + c0) * taps_ * kBlk;
          a.accumulate = c0 > 0;
          for (index_t n = 0; n < N; ++n)
            for (index_t oy = 0; oy < oh_; oy += kWlRows) {
              a.rows = static_cast<int>(std::min<index_t>(kWlRows, oh_ - oy));
              for (index_t sg = 0; sg < segs; ++sg) {
                const index_t ox = sg * ow_ / segs, ox1 = (sg + 1) * ow_ / segs;
                a.cols = static_cast<int>(ox1 - ox);
                a.x = xpad_.data() + (n * C + c0) * plane + oy * wp_ + ox;
                a.y = ybuf + (n * P + oy * ow_ + ox) * kBlk;
                kernel(a);
              }
            }
        }
        // The block's output channels into NCHW y: y[n][k0 + m][p] = ybuf[n][p][m].
        const index_t k0 = kb * kBlk, km = std::min(kBlk, K - k0);
        for (index_t n = 0; n < N; ++n)
          for (index_t m = 0; m < km; ++m) {
            float* yk = y + (n * K + k0 + m) * P;
            const float* src = ybuf + n * P * kBlk + m;
            for (index_t p = 0; p < P; ++p) yk[p] = src[p * kBlk];
          }
      }
    });
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override {
    tbd_.run(dy, w, dx, hint);
  }

  void backward_weights(const float*, const float*, float*, float*, bool) override {
    throw Error("taihu: conv: direct_weight_lanes computes forward and backward-data only (" +
                d_.str() + ")");
  }

 private:
  // wpk[kb][c][r][s][m] = w[kb * kBlk + m][c][r][s] (zero past k): per block a kBlk x
  // (c r s) transpose, 16 columns at a time (kBlk source lines in, 2 KiB written
  // contiguously). Element by element in the destination's order, each of the block's 32
  // OIHW rows read 4 bytes at a time, it took 4.4 ms for res5's 9 MiB at 1 thread, twice
  // the convolution; this form 1.7-1.8 ms (2026-11-28-zen4-dnn-res5.md; a copy of the
  // 32 x 16 tile to the stack first measured no better).
  void pack(const float* w) {
    const index_t C = d_.c, K = d_.k, cols = C * taps_;
    const auto floats = static_cast<std::size_t>(kblocks_ * cols * kBlk);
    if (wpk_.size() != floats) wpk_ = arch::AlignedBuffer<float>(floats);
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), kblocks_));
    ops::parallel_for_static(nt, kblocks_, [&](index_t kb) {
      const index_t rows = std::min(kBlk, K - kb * kBlk);
      float* dst = wpk_.data() + kb * cols * kBlk;
      for (index_t j0 = 0; j0 < cols; j0 += 16) {
        const index_t jn = std::min<index_t>(16, cols - j0);
        for (index_t m = 0; m < kBlk; ++m) {
          const float* src = w + (kb * kBlk + m) * cols + j0;
          for (index_t j = 0; j < jn; ++j) dst[(j0 + j) * kBlk + m] = m < rows ? src[j] : 0.0f;
        }
      }
    });
    packed_ = true;
  }

  ConvDesc d_;
  index_t oh_, ow_, hp_, wp_, taps_, kblocks_;
  arch::AlignedBuffer<float> wpk_, xpad_, ybuf_;
  std::vector<float> bias_;
  bool packed_ = false;
  TransposedBackwardData tbd_;
};

bool forward_shape(const ConvDesc& d) {
  return d.groups == 1 && d.stride_h == 1 && d.stride_w == 1 && d.dil_h == 1 && d.dil_w == 1;
}

}  // namespace

bool direct_weight_lanes_supports(const ConvDesc& d, ConvDirection dir) {
  if (!forward_shape(d)) return false;
  if (dir == ConvDirection::forward) return true;
  return dir == ConvDirection::backward_data && transposed_supported(d) &&
         forward_shape(transposed_desc(d));
}

std::unique_ptr<ConvAlgorithm> make_direct_weight_lanes(const ConvDesc& d) {
  return std::make_unique<DirectWeightLanes>(d);
}

}  // namespace taihu::dnn::conv
