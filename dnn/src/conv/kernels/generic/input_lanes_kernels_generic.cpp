// Portable tap store of the direct input-lanes backward-weights (input_lanes_kernels.hpp):
// the scalar tap interleave; `stream` is a hint only here (cached stores). And the
// column build's scalar definition.
#include "conv/input_lanes_kernels.hpp"
#include "conv/pointwise_blocked_kernels.hpp"

namespace taihu::dnn::conv {

void tap_store_generic(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                       float* dst, bool accumulate, bool /*stream*/) {
  tap_interleave_generic(src, tap_stride, taps, channels, dst, accumulate);
}


void col_build_generic(const float* xrow, std::int64_t wp, int kh, int kw, std::int64_t pixels, float* col,
                       std::int64_t cstride) {
  const std::int64_t taps = std::int64_t{kh} * kw;
  for (std::int64_t p = 0; p < pixels; ++p)
    for (std::int64_t t = 0; t < taps; ++t) {
      const float* src = xrow + ((t / kw) * wp + p + t % kw) * 16;
      for (std::int64_t c = 0; c < 16; ++c) {
        const std::int64_t j = c * taps + t;
        col[(j / 16) * cstride + p * 16 + j % 16] = src[c];
      }
    }
}

}  // namespace taihu::dnn::conv
