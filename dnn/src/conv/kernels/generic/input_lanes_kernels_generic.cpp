// Portable tap store of the direct input-lanes backward-weights (input_lanes_kernels.hpp):
// the scalar tap interleave; `stream` is a hint only here (cached stores). And the
// column build's and the padded x reorder's scalar definitions.
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

void pad_block_generic(const float* src, std::int64_t lanes, std::int64_t h, std::int64_t w, float* dst,
                       std::int64_t wp) {
  for (std::int64_t iy = 0; iy < h; ++iy)
    for (std::int64_t ix = 0; ix < w; ++ix)
      for (std::int64_t l = 0; l < 16; ++l)
        dst[(iy * wp + ix) * 16 + l] = l < lanes ? src[l * h * w + iy * w + ix] : 0.0f;
}

}  // namespace taihu::dnn::conv
