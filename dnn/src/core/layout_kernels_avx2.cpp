// AVX2 nChw8c <-> NCHW block reorders (see layout_kernels.hpp): 8 pixels x 8 channels per
// register transpose, streaming both sides once (the scalar loops read each block once
// per lane: 8 passes over it).
#include <immintrin.h>

#include "core/transpose8x8_avx2.hpp"
#include "core/layout_kernels.hpp"

namespace taihu::dnn::layout_kernels {

void unblock_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw) {
  std::int64_t p = 0;
  for (; p + 8 <= hw; p += 8) {
    __m256 r[8];
    for (int u = 0; u < 8; ++u) r[u] = _mm256_loadu_ps(src + (p + u) * 8);
    transpose8x8(r);  // r[l]: lane l of pixels p..p+7
    for (int l = 0; l < lanes; ++l) _mm256_storeu_ps(dst + l * hw + p, r[l]);
  }
  for (std::int64_t l = 0; l < lanes; ++l)
    for (std::int64_t q = p; q < hw; ++q) dst[l * hw + q] = src[q * 8 + l];
}

void block_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw) {
  std::int64_t p = 0;
  for (; p + 8 <= hw; p += 8) {
    __m256 r[8];
    for (int l = 0; l < 8; ++l) r[l] = l < lanes ? _mm256_loadu_ps(src + l * hw + p) : _mm256_setzero_ps();
    transpose8x8(r);  // r[u]: the 8 lanes of pixel p + u
    for (int u = 0; u < 8; ++u) _mm256_storeu_ps(dst + (p + u) * 8, r[u]);
  }
  for (; p < hw; ++p)
    for (std::int64_t l = 0; l < 8; ++l) dst[p * 8 + l] = l < lanes ? src[l * hw + p] : 0.0f;
}

}  // namespace taihu::dnn::layout_kernels
