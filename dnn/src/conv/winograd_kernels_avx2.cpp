// AVX2 instantiation of the Winograd tile transforms: V is one __m256 (8 channels).
#include <immintrin.h>

#include "transpose8x8_avx2.hpp"
#include "winograd_kernels.hpp"

namespace taihu::dnn::conv {

namespace {
struct V8 {
  __m256 v;
  static V8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  friend V8 operator+(V8 a, V8 b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend V8 operator-(V8 a, V8 b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend V8 operator*(V8 a, float s) { return {_mm256_mul_ps(a.v, _mm256_set1_ps(s))}; }
};

// 8 output pixels x 8 channels per step: 8 vector loads from the tiles, an 8x8
// transpose, 8 row stores (the scalar scatter cost as much as the tile transforms on
// small layers); the remainder scalar.
void scatter_row_avx2(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias, float* dst,
                      wino_index plane_stride) {
  const wino_index full = pixels / 8 * 8;
  alignas(32) float bias8[8] = {};
  if (bias)
    for (int l = 0; l < lanes; ++l) bias8[l] = bias[l];
  const __m256 vb = _mm256_load_ps(bias8);
  for (wino_index q0 = 0; q0 < full; q0 += 8) {
    __m256 r[8];
    for (int u = 0; u < 8; ++u) {
      const wino_index q = q0 + u;
      r[u] = _mm256_add_ps(_mm256_loadu_ps(tmp + ((q / m) * m * m + i * m + q % m) * 8), vb);
    }
    transpose8x8(r);
    for (int l = 0; l < lanes; ++l) _mm256_storeu_ps(dst + l * plane_stride + q0, r[l]);
  }
  if (full < pixels) {
    const wino_index rest = pixels - full;
    const float* tail = tmp + (full / m) * m * m * 8;  // full is a multiple of m (m divides 8)
    wino_scatter_row_scalar(tail, m, i, rest, lanes, bias, dst + full, plane_stride);
  }
}
void gather_row_avx2(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m, int i,
                     float* dst) {
  const wino_index full = pixels / 8 * 8;
  for (wino_index q0 = 0; q0 < full; q0 += 8) {
    __m256 r[8];
    for (int l = 0; l < 8; ++l) r[l] = l < lanes ? _mm256_loadu_ps(src + l * src_stride + q0) : _mm256_setzero_ps();
    transpose8x8(r);
    for (int u = 0; u < 8; ++u) {
      const wino_index q = q0 + u;
      _mm256_storeu_ps(dst + ((q / m) * m * m + i * m + q % m) * 8, r[u]);
    }
  }
  if (full < pixels)
    wino_gather_row_scalar(src + full, src_stride, lanes, pixels - full, m, i, dst + (full / m) * m * m * 8);
}
}  // namespace

const WinogradKernelSet winograd_kernels_avx2 = make_winograd_kernel_set<V8>(&scatter_row_avx2, &gather_row_avx2);

}  // namespace taihu::dnn::conv
