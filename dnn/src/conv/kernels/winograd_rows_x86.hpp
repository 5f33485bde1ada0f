// The Winograd row scatter (tiles -> NCHW output row) and gather (NCHW row -> tiles) of
// winograd_kernels.hpp for a channel block of L lanes (8 or 16), 8 pixels at a time:
// per 8 lanes of the block, 8 vector loads, one 8x8 register transpose, 8 stores (the
// scalar loops cost as much as the tile transforms on small layers). Width-generic:
// the AVX2 set instantiates L = 8, the AVX-512 set L = 16 (its 16 lanes are two 8-lane
// halves, so no 512-bit shuffles are needed). Compile with AVX2 flags or wider.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "conv/winograd_kernels.hpp"
#include "core/transpose8x8_avx2.hpp"

namespace taihu::dnn::conv::kernels {

// Offset of pixel u (< 8) of an 8-pixel group from the group's first tile element, in
// floats, for tile width M (a divisor of 8, so a group starts a tile): a constant per u.
template <int L, int M>
constexpr wino_index wino_row_offset(int u) {
  return ((u / M) * M * M + u % M) * L;
}

// The scatter with the tile width M a compile-time constant (M = 0: m at run time). With
// m at run time each pixel's q / m and q % m were integer divisions. stream: 16-pixel
// groups whose 64 bytes of a channel row start a cache line go out as non-temporal
// stores (whole lines, no read for ownership; the caller fences); the rest as plain stores.
template <int L, int M>
void wino_scatter_row_x86_m(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                            float* dst, wino_index plane_stride, bool stream) {
  static_assert(L % 8 == 0, "the block is whole 8-lane halves");
  if constexpr (M > 0) m = M;
  const wino_index full = pixels / 8 * 8;
  alignas(32) float bias_l[L] = {};
  if (bias)
    for (int l = 0; l < lanes; ++l) bias_l[l] = bias[l];
  // Pixels q0..q0+7 of lanes h*8.. transposed into r (r[l]: lane h*8+l's 8 pixels).
  const auto group = [&](int h, wino_index q0, __m256 vb, __m256 r[8]) {
    for (int u = 0; u < 8; ++u) {
      if constexpr (M > 0) {
        // (A plain offset first: the emulated tests' intrinsics are macros, and a
        // template argument list's comma would split their arguments.)
        const wino_index off = ((q0 / M) * M * M + i * M) * L + h * 8 + wino_row_offset<L, M>(u);
        r[u] = _mm256_add_ps(_mm256_loadu_ps(tmp + off), vb);
      } else {
        const wino_index q = q0 + u;
        r[u] = _mm256_add_ps(_mm256_loadu_ps(tmp + ((q / m) * m * m + i * m + q % m) * L + h * 8), vb);
      }
    }
    transpose8x8(r);
  };
  for (int h = 0; h * 8 < lanes; ++h) {
    const __m256 vb = _mm256_load_ps(bias_l + h * 8);
    const int hl = lanes - h * 8 < 8 ? lanes - h * 8 : 8;
    float* dh = dst + h * 8 * plane_stride;
    wino_index q0 = 0;
    if (stream)
      for (; q0 + 16 <= full; q0 += 16) {
        __m256 r[8], s[8];
        group(h, q0, vb, r);
        group(h, q0 + 8, vb, s);
        for (int l = 0; l < hl; ++l) {
          float* p = dh + l * plane_stride + q0;
          if ((reinterpret_cast<std::uintptr_t>(p) & 63) == 0) {
            _mm256_stream_ps(p, r[l]);
            _mm256_stream_ps(p + 8, s[l]);
          } else {
            _mm256_storeu_ps(p, r[l]);
            _mm256_storeu_ps(p + 8, s[l]);
          }
        }
      }
    for (; q0 < full; q0 += 8) {
      __m256 r[8];
      group(h, q0, vb, r);
      for (int l = 0; l < hl; ++l) _mm256_storeu_ps(dh + l * plane_stride + q0, r[l]);
    }
  }
  if (full < pixels) {
    const float* tail = tmp + (full / m) * m * m * L;  // full is a multiple of m (m divides 8)
    wino_scatter_row_scalar<L>(tail, m, i, pixels - full, lanes, bias, dst + full, plane_stride, false);
  }
}

template <int L>
void wino_scatter_row_x86(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                          float* dst, wino_index plane_stride, bool stream) {
  switch (m) {
    case 2: return wino_scatter_row_x86_m<L, 2>(tmp, m, i, pixels, lanes, bias, dst, plane_stride, stream);
    case 4: return wino_scatter_row_x86_m<L, 4>(tmp, m, i, pixels, lanes, bias, dst, plane_stride, stream);
    default: break;
  }
  wino_scatter_row_x86_m<L, 0>(tmp, m, i, pixels, lanes, bias, dst, plane_stride, stream);
}

// The gather with M a compile-time constant (M = 0: m at run time); see the scatter.
template <int L, int M>
void wino_gather_row_x86_m(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m, int i,
                           float* dst) {
  static_assert(L % 8 == 0, "the block is whole 8-lane halves");
  if constexpr (M > 0) m = M;
  const wino_index full = pixels / 8 * 8;
  for (int h = 0; h < L / 8; ++h)
    for (wino_index q0 = 0; q0 < full; q0 += 8) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l)
        r[l] = h * 8 + l < lanes ? _mm256_loadu_ps(src + (h * 8 + l) * src_stride + q0) : _mm256_setzero_ps();
      transpose8x8(r);
      for (int u = 0; u < 8; ++u) {
        if constexpr (M > 0) {
          const wino_index off = ((q0 / M) * M * M + i * M) * L + h * 8 + wino_row_offset<L, M>(u);
          _mm256_storeu_ps(dst + off, r[u]);
        } else {
          const wino_index q = q0 + u;
          _mm256_storeu_ps(dst + ((q / m) * m * m + i * m + q % m) * L + h * 8, r[u]);
        }
      }
    }
  if (full < pixels)
    wino_gather_row_scalar<L>(src + full, src_stride, lanes, pixels - full, m, i, dst + (full / m) * m * m * L);
}

template <int L>
void wino_gather_row_x86(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m, int i,
                         float* dst) {
  switch (m) {
    case 1: return wino_gather_row_x86_m<L, 1>(src, src_stride, lanes, pixels, m, i, dst);
    case 2: return wino_gather_row_x86_m<L, 2>(src, src_stride, lanes, pixels, m, i, dst);
    case 4: return wino_gather_row_x86_m<L, 4>(src, src_stride, lanes, pixels, m, i, dst);
    default: break;
  }
  wino_gather_row_x86_m<L, 0>(src, src_stride, lanes, pixels, m, i, dst);
}

}  // namespace taihu::dnn::conv::kernels
