// AVX2 1x1-convolution micro-kernel (see pointwise_kernels.hpp): 4 output channels x
// NV (1..3) vectors of 8 pixels = up to 12 accumulators + NV input vectors + one
// broadcast (16 ymm registers); a partial strip's last vector is loaded and stored
// masked.
#include <immintrin.h>

#include "pointwise_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

// The first `n` (0..8) lanes set.
__m256i first_lanes(int n) {
  alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - n));
}

template <int NV, bool MASKED>
void fwd_tile(const PwFwdArgs& a) {
  const __m256i mask = first_lanes(MASKED ? a.pixels - 8 * (NV - 1) : 8);
  __m256 acc[kPwRows][NV];
#pragma GCC unroll 4
  for (int m = 0; m < kPwRows; ++m)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_setzero_ps();
  const float* xp = a.x;
  const float* wp = a.w;
  const std::int64_t stride = a.x_cstride, channels = a.channels;
  const float* pf = a.prefetch;
  std::int64_t pf_left = a.prefetch_rows;
  for (std::int64_t c = 0; c < channels;) {
    // One prefetched row (2 lines) per 8 channels: spread out, so the few L1 miss
    // buffers never fill up and stall the FMAs.
    if (pf_left > 0) {
      _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(pf + 16), _MM_HINT_T0);
      pf += a.prefetch_stride;
      --pf_left;
    }
    const std::int64_t end = c + 8 < channels ? c + 8 : channels;
    for (; c < end; ++c, xp += stride, wp += kPwRows) {
      __m256 xv[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        xv[v] = (MASKED && v == NV - 1) ? _mm256_maskload_ps(xp + 8 * v, mask) : _mm256_loadu_ps(xp + 8 * v);
#pragma GCC unroll 4
      for (int m = 0; m < kPwRows; ++m) {
        const __m256 wb = _mm256_broadcast_ss(wp + m);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_fmadd_ps(wb, xv[v], acc[m][v]);
      }
    }
  }
  // Fully unrolled (a runtime bound would keep acc in memory through the loop above).
#pragma GCC unroll 4
  for (int m = 0; m < kPwRows; ++m) {
    if (m >= a.rows) break;
    float* yr = a.y + m * a.y_kstride;
    const __m256 b = _mm256_set1_ps(a.bias ? a.bias[m] : 0.0f);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const bool part = MASKED && v == NV - 1;
      __m256 val = acc[m][v];
      if (a.accumulate)
        val = _mm256_add_ps(val, part ? _mm256_maskload_ps(yr + 8 * v, mask) : _mm256_loadu_ps(yr + 8 * v));
      else
        val = _mm256_add_ps(val, b);
      if (part)
        _mm256_maskstore_ps(yr + 8 * v, mask, val);
      else
        _mm256_storeu_ps(yr + 8 * v, val);
    }
  }
}

}  // namespace

void pw_fwd_avx2(const PwFwdArgs& a) {
  const int nv = (a.pixels + 7) / 8;
  const bool masked = a.pixels % 8 != 0;
  switch (nv * 2 + (masked ? 1 : 0)) {
    case 2: fwd_tile<1, false>(a); break;
    case 3: fwd_tile<1, true>(a); break;
    case 4: fwd_tile<2, false>(a); break;
    case 5: fwd_tile<2, true>(a); break;
    case 6: fwd_tile<3, false>(a); break;
    default: fwd_tile<3, true>(a); break;
  }
}

}  // namespace taihu::dnn::conv
