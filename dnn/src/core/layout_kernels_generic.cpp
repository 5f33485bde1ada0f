// Portable nChw8c / nChw16c <-> NCHW block reorders (see layout_kernels.hpp): plain loops.
#include "core/layout_kernels.hpp"

namespace taihu::dnn::layout_kernels {

void unblock_generic(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B) {
  for (std::int64_t l = 0; l < lanes; ++l)
    for (std::int64_t p = 0; p < hw; ++p) dst[l * hw + p] = src[p * B + l];
}

void block_generic(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B) {
  for (std::int64_t l = 0; l < B; ++l)
    for (std::int64_t p = 0; p < hw; ++p) dst[p * B + l] = l < lanes ? src[l * hw + p] : 0.0f;
}

}  // namespace taihu::dnn::layout_kernels
