// AVX2 direct row kernel (see direct_kernels.hpp): 6 pixels x 16 channels = 12
// accumulators, two weight vectors and one broadcast per step.
#include <immintrin.h>

#include <algorithm>

#include "direct_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

// SW > 0: the stride is a compile-time constant, so the six broadcasts address
// xs + p*SW with immediate offsets (no integer work in the FMA loop); SW = 0: runtime.
template <int SW>
void row(const DirectRowArgs& a) {
  constexpr int P = 6;
  const std::int64_t sw = SW > 0 ? SW : a.stride_w;
  std::int64_t ox0 = 0;
  for (; ox0 + P <= a.ow; ox0 += P) {
    __m256 acc[P][2];
    for (int p = 0; p < P; ++p) acc[p][0] = acc[p][1] = _mm256_setzero_ps();
    for (std::int64_t c = 0; c < a.c; ++c)
      for (std::int64_t r = 0; r < a.kh; ++r) {
        const float* xr = a.x + c * a.channel_stride + r * a.dil_h * a.wp + ox0 * sw;
        const float* wr = a.w + (c * a.kh + r) * a.kw * 16;
        for (std::int64_t s = 0; s < a.kw; ++s) {
          const __m256 w0 = _mm256_loadu_ps(wr + s * 16), w1 = _mm256_loadu_ps(wr + s * 16 + 8);
          const float* xs = xr + s * a.dil_w;
#pragma GCC unroll 6
          for (int p = 0; p < P; ++p) {
            const __m256 xv = _mm256_broadcast_ss(xs + p * sw);
            acc[p][0] = _mm256_fmadd_ps(xv, w0, acc[p][0]);
            acc[p][1] = _mm256_fmadd_ps(xv, w1, acc[p][1]);
          }
        }
      }
    for (int p = 0; p < P; ++p) {
      _mm256_storeu_ps(a.out + (ox0 + p) * 16, acc[p][0]);
      _mm256_storeu_ps(a.out + (ox0 + p) * 16 + 8, acc[p][1]);
    }
  }
  for (; ox0 < a.ow; ++ox0) {  // remaining pixels one at a time
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (std::int64_t c = 0; c < a.c; ++c)
      for (std::int64_t r = 0; r < a.kh; ++r) {
        const float* xr = a.x + c * a.channel_stride + r * a.dil_h * a.wp + ox0 * sw;
        const float* wr = a.w + (c * a.kh + r) * a.kw * 16;
        for (std::int64_t s = 0; s < a.kw; ++s) {
          const __m256 xv = _mm256_broadcast_ss(xr + s * a.dil_w);
          acc0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wr + s * 16), acc0);
          acc1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wr + s * 16 + 8), acc1);
        }
      }
    _mm256_storeu_ps(a.out + ox0 * 16, acc0);
    _mm256_storeu_ps(a.out + ox0 * 16 + 8, acc1);
  }
}

}  // namespace

void direct_row_avx2(const DirectRowArgs& a) {
  switch (a.stride_w) {
    case 1: row<1>(a); break;
    case 2: row<2>(a); break;
    case 4: row<4>(a); break;
    default: row<0>(a); break;
  }
}

}  // namespace taihu::dnn::conv
