// AVX2 nChw8c / nChw16c <-> NCHW block reorders (see layout_kernels.hpp): 8 pixels x 8
// channels per register transpose (two per 8 pixels for 16-lane blocks), streaming both
// sides once (the scalar loops read each block once per lane: B passes over it).
#include <immintrin.h>

#include <algorithm>

#include "core/transpose8x8_avx2.hpp"
#include "core/layout_kernels.hpp"

namespace taihu::dnn::layout_kernels {

void unblock_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B) {
  std::int64_t p = 0;
  for (; p + 8 <= hw; p += 8)
    for (int s = 0; s < B && s < lanes; s += 8) {  // 8 lanes of the block at a time
      __m256 r[8];
      for (int u = 0; u < 8; ++u) r[u] = _mm256_loadu_ps(src + (p + u) * B + s);
      transpose8x8(r);  // r[l]: lane s + l of pixels p..p+7
      const std::int64_t n = std::min<std::int64_t>(8, lanes - s);
      for (int l = 0; l < n; ++l) _mm256_storeu_ps(dst + (s + l) * hw + p, r[l]);
    }
  for (std::int64_t l = 0; l < lanes; ++l)
    for (std::int64_t q = p; q < hw; ++q) dst[l * hw + q] = src[q * B + l];
}

void block_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B) {
  std::int64_t p = 0;
  for (; p + 8 <= hw; p += 8)
    for (int s = 0; s < B; s += 8) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l) r[l] = s + l < lanes ? _mm256_loadu_ps(src + (s + l) * hw + p) : _mm256_setzero_ps();
      transpose8x8(r);  // r[u]: lanes s..s+7 of pixel p + u
      for (int u = 0; u < 8; ++u) _mm256_storeu_ps(dst + (p + u) * B + s, r[u]);
    }
  for (; p < hw; ++p)
    for (std::int64_t l = 0; l < B; ++l) dst[p * B + l] = l < lanes ? src[l * hw + p] : 0.0f;
}

}  // namespace taihu::dnn::layout_kernels
