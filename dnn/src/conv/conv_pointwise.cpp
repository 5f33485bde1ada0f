// 1x1 convolution driver (see conv_pointwise.hpp).
#include "conv_pointwise.hpp"

#include <algorithm>
#include <cstring>
#include <omp.h>

#include "pointwise_kernels.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::dnn::conv {

namespace {

struct PointwiseKernels {
  PwFwdKernel fwd;
};

const PointwiseKernels& kernels() {
  static const arch::ImplementationList<PointwiseKernels> list(
      "pointwise conv kernels", {{"avx2_4x24", arch::Isa::avx2, {&pw_fwd_avx2}},
                                 {"generic", arch::Isa::generic, {&pw_fwd_generic}}});
  return list.chosen().impl;
}

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

// Input channels per forward reduction block: a strip (kPwPixels floats per channel)
// <= 24 KiB of L1 (ResNet's 256 channels in one block measured faster than 2 x 128:
// y is then written once).
constexpr index_t kStripChannels = 256;
// Forward: strips between the one computed and the one prefetched (one strip's compute
// is ~7 us at 1 thread, well over DRAM latency; 2 measured steadier than 1 cold).
constexpr index_t kAhead = 2;

// A strip of `pixels` (<= kPwPixels) pixels of `channels` channel planes (x at the
// first) to dst[channel][kPwPixels], zero-padded: the kernel then reads one contiguous
// L1-resident block instead of rows a plane apart (plane sizes like 56x56 or 16x16 map
// every row to a few L1 sets).
void copy_strip(const float* x, index_t plane, index_t channels, int pixels, float* dst) {
  for (index_t c = 0; c < channels; ++c, x += plane, dst += kPwPixels) {
    if (pixels == kPwPixels) {
      std::memcpy(dst, x, sizeof(float) * kPwPixels);
    } else {
      std::memcpy(dst, x, sizeof(float) * static_cast<std::size_t>(pixels));
      std::fill(dst + pixels, dst + kPwPixels, 0.0f);
    }
  }
}

}  // namespace

bool pointwise_shape(const ConvDesc& d) {
  return d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 && d.pad_w == 0;
}

PointwiseConv::PointwiseConv(const ConvDesc& d)
    : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), plane_(d.h * d.w) {
  const index_t blocks = ceil_div(cg_, kStripChannels);
  cblock_ = ceil_div(cg_, blocks);
}

void PointwiseConv::forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) {
  const index_t kblocks = ceil_div(kg_, kPwRows);
  if (hint == WeightsHint::changed || wpack_.empty()) {
    wpack_.assign(static_cast<std::size_t>(d_.groups * kblocks * cg_ * kPwRows), 0.0f);
    for (index_t g = 0; g < d_.groups; ++g)
      for (index_t k = 0; k < kg_; ++k)
        for (index_t c = 0; c < cg_; ++c)
          wpack_[static_cast<std::size_t>(((g * kblocks + k / kPwRows) * cg_ + c) * kPwRows + k % kPwRows)] =
              w[(g * kg_ + k) * cg_ + c];
  }
  const PwFwdKernel kernel = kernels().fwd;
  const int nt = arch::threads_for_call();
  const index_t strips = ceil_div(plane_, kPwPixels);
  // Work items: (image, group, run of strips), about 4 per thread: long runs, since
  // each run's first strip is not prefetched (its copy waits on DRAM).
  const index_t chunk =
      std::clamp<index_t>(d_.n * d_.groups * strips / (4 * nt), 1, strips);
  const index_t chunks = ceil_div(strips, chunk), items = d_.n * d_.groups * chunks;
  const auto strip_floats = static_cast<std::size_t>(cblock_ * kPwPixels);
  if (strip_.size() < static_cast<std::size_t>(nt) * strip_floats)
    strip_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(nt) * strip_floats);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (index_t it = 0; it < items; ++it) {
    float* strip = strip_.data() + static_cast<std::size_t>(omp_get_thread_num()) * strip_floats;
    const index_t ch = it % chunks, ng = it / chunks, g = ng % d_.groups, n = ng / d_.groups;
    const index_t s1 = std::min(strips, (ch + 1) * chunk);
    PwFwdArgs a{};
    a.x = strip;
    a.x_cstride = kPwPixels;
    a.y_kstride = plane_;
    a.prefetch_stride = plane_;
    for (index_t c0 = 0; c0 < cg_; c0 += cblock_) {
      a.channels = std::min(cblock_, cg_ - c0);
      a.accumulate = c0 > 0;
      for (index_t s = ch * chunk; s < s1; ++s) {
        const index_t p = s * kPwPixels;
        a.pixels = static_cast<int>(std::min<index_t>(kPwPixels, plane_ - p));
        const float* xs = x + (n * d_.c + g * cg_ + c0) * plane_ + p;
        copy_strip(xs, plane_, a.channels, a.pixels, strip);
        // The output-channel tiles prefetch the rows of the strip kAhead on (spread over
        // the tiles): x's rows lie a plane apart, too many streams for the hardware.
        const bool next = p + (kAhead + 1) * kPwPixels <= plane_;
        const index_t per_tile = ceil_div(a.channels, 8);
        for (index_t kb = 0; kb < kblocks; ++kb) {
          const index_t k0 = g * kg_ + kb * kPwRows;
          a.rows = static_cast<int>(std::min<index_t>(kPwRows, kg_ - kb * kPwRows));
          a.w = wpack_.data() + ((g * kblocks + kb) * cg_ + c0) * kPwRows;
          a.y = y + (n * d_.k + k0) * plane_ + p;
          a.bias = bias && c0 == 0 ? bias + k0 : nullptr;
          const index_t r0 = kb * per_tile;
          a.prefetch_rows = next ? std::clamp<index_t>(a.channels - r0, 0, per_tile) : 0;
          a.prefetch = xs + kAhead * kPwPixels + r0 * plane_;
          if (next)  // and the tile's output lines there (write-allocate misses otherwise)
            for (int m = 0; m < a.rows; ++m) {
              __builtin_prefetch(a.y + m * plane_ + kAhead * kPwPixels, 1);
              __builtin_prefetch(a.y + m * plane_ + kAhead * kPwPixels + 16, 1);
            }
          kernel(a);
        }
      }
    }
  }
}

}  // namespace taihu::dnn::conv
