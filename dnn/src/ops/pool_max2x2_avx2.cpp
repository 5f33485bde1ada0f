// AVX2 2x2 stride-2 MAX pooling kernels (pool_max2x2.hpp): eight windows per step,
// the even and odd columns of 16 inputs split by shuffles (forward) or interleaved
// back (backward); the rest of a row four windows per SSE2 step, then one at a time
// (pool_max2x2_sse.hpp, as the generic kernels).
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "ops/pool_max2x2.hpp"
#include "ops/pool_max2x2_sse.hpp"

namespace taihu::dnn::ops {

namespace {

template <bool MASK>
void forward_rows(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2, vec_end = w / 2 / 8 * 8;
  const __m256i lane2 = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const __m256 lowest = _mm256_set1_ps(std::numeric_limits<float>::lowest());
  for (index_t ph = 0; ph < oh; ++ph) {
    const index_t rows = std::min<index_t>(2, h - 2 * ph);
    float* yr = y + ph * ow;
    std::int32_t* mr = MASK ? m + ph * ow : nullptr;
    for (index_t pw = 0; pw < vec_end; pw += 8) {
      __m256 acc = lowest;
      __m256i arg = _mm256_set1_epi32(-1);
      auto take = [&](__m256 v, std::int32_t at) {
        const __m256 wins = _mm256_cmp_ps(v, acc, _CMP_GT_OQ);  // false for NaN, as `>`
        acc = _mm256_blendv_ps(acc, v, wins);
        if constexpr (MASK) {
          const __m256i idx = _mm256_add_epi32(_mm256_set1_epi32(at), lane2);
          arg = _mm256_castps_si256(
              _mm256_blendv_ps(_mm256_castsi256_ps(arg), _mm256_castsi256_ps(idx), wins));
        }
      };
      for (index_t dh = 0; dh < rows; ++dh) {
        const float* row = x + (2 * ph + dh) * w + 2 * pw;
        const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
        const __m256 a0 = _mm256_loadu_ps(row), a1 = _mm256_loadu_ps(row + 8);
        // Within 128-bit lanes, then the 64-bit quarters back in order.
        const __m256 even = _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a0, a1, 0x88)), 0xD8));
        const __m256 odd = _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a0, a1, 0xDD)), 0xD8));
        take(even, at);
        take(odd, at + 1);
      }
      _mm256_storeu_ps(yr + pw, acc);
      if constexpr (MASK) _mm256_storeu_si256(reinterpret_cast<__m256i*>(mr + pw), arg);
    }
    pool2x2::forward_rest<MASK>(h, w, x, ph, vec_end, yr, mr);
  }
}

// Planes narrower than one 8-window step (LeNet's 8x8) run the generic kernels
// (measured 10-30% faster there than the same SSE2 steps reached from here).
void forward_plane(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  if (w < 32) {
    pool_max2x2_generic().forward(h, w, x, y, m);
    return;
  }
  if (m)
    forward_rows<true>(h, w, x, y, m);
  else
    forward_rows<false>(h, w, x, y, m);
}

void backward_plane(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx) {
  if (w < 32) {
    pool_max2x2_generic().backward(h, w, dy, m, dx);
    return;
  }
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2, vec_end = w / 2 / 8 * 8;
  const __m256i lane2 = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256 zero = _mm256_setzero_ps();
  for (index_t ph = 0; ph < oh; ++ph) {
    const index_t rows = std::min<index_t>(2, h - 2 * ph);
    const float* dyr = dy + ph * ow;
    const std::int32_t* mr = m + ph * ow;
    for (index_t pw = 0; pw < vec_end; pw += 8) {
      const __m256 g = _mm256_add_ps(zero, _mm256_loadu_ps(dyr + pw));
      const __m256i arg = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mr + pw));
      for (index_t dh = 0; dh < rows; ++dh) {
        const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
        const __m256i i0 = _mm256_add_epi32(_mm256_set1_epi32(at), lane2);
        const __m256i i1 = _mm256_add_epi32(i0, one);
        const __m256 v0 = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(arg, i0)), g);
        const __m256 v1 = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(arg, i1)), g);
        const __m256 lo = _mm256_unpacklo_ps(v0, v1), hi = _mm256_unpackhi_ps(v0, v1);
        float* out = dx + (2 * ph + dh) * w + 2 * pw;
        _mm256_storeu_ps(out, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
      }
    }
    pool2x2::backward_rest(h, w, dyr, mr, ph, vec_end, dx);
  }
}

}  // namespace

const PoolMax2x2Kernels& pool_max2x2_avx2() {
  static const PoolMax2x2Kernels k{&forward_plane, &backward_plane};
  return k;
}

}  // namespace taihu::dnn::ops
