// The Winograd row scatter (tiles -> NCHW output row) and gather (NCHW row -> tiles) of
// winograd_kernels.hpp for a channel block of L lanes (8 or 16), 8 pixels at a time:
// per 8 lanes of the block, 8 vector loads, one 8x8 register transpose, 8 stores (the
// scalar loops cost as much as the tile transforms on small layers). Width-generic:
// the AVX2 set instantiates L = 8, the AVX-512 set L = 16 (its 16 lanes are two 8-lane
// halves, so no 512-bit shuffles are needed). Compile with AVX2 flags or wider.
#pragma once
#include <immintrin.h>

#include "conv/winograd_kernels.hpp"
#include "core/transpose8x8_avx2.hpp"

namespace taihu::dnn::conv::kernels {

template <int L>
void wino_scatter_row_x86(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                          float* dst, wino_index plane_stride) {
  static_assert(L % 8 == 0, "the block is whole 8-lane halves");
  const wino_index full = pixels / 8 * 8;
  alignas(32) float bias_l[L] = {};
  if (bias)
    for (int l = 0; l < lanes; ++l) bias_l[l] = bias[l];
  for (int h = 0; h * 8 < lanes; ++h) {
    const __m256 vb = _mm256_load_ps(bias_l + h * 8);
    const int hl = lanes - h * 8 < 8 ? lanes - h * 8 : 8;
    float* dh = dst + h * 8 * plane_stride;
    for (wino_index q0 = 0; q0 < full; q0 += 8) {
      __m256 r[8];
      for (int u = 0; u < 8; ++u) {
        const wino_index q = q0 + u;
        r[u] = _mm256_add_ps(_mm256_loadu_ps(tmp + ((q / m) * m * m + i * m + q % m) * L + h * 8), vb);
      }
      transpose8x8(r);
      for (int l = 0; l < hl; ++l) _mm256_storeu_ps(dh + l * plane_stride + q0, r[l]);
    }
  }
  if (full < pixels) {
    const float* tail = tmp + (full / m) * m * m * L;  // full is a multiple of m (m divides 8)
    wino_scatter_row_scalar<L>(tail, m, i, pixels - full, lanes, bias, dst + full, plane_stride);
  }
}

template <int L>
void wino_gather_row_x86(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m, int i,
                         float* dst) {
  static_assert(L % 8 == 0, "the block is whole 8-lane halves");
  const wino_index full = pixels / 8 * 8;
  for (int h = 0; h < L / 8; ++h)
    for (wino_index q0 = 0; q0 < full; q0 += 8) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l)
        r[l] = h * 8 + l < lanes ? _mm256_loadu_ps(src + (h * 8 + l) * src_stride + q0) : _mm256_setzero_ps();
      transpose8x8(r);
      for (int u = 0; u < 8; ++u) {
        const wino_index q = q0 + u;
        _mm256_storeu_ps(dst + ((q / m) * m * m + i * m + q % m) * L + h * 8, r[u]);
      }
    }
  if (full < pixels)
    wino_gather_row_scalar<L>(src + full, src_stride, lanes, pixels - full, m, i, dst + (full / m) * m * m * L);
}

}  // namespace taihu::dnn::conv::kernels
