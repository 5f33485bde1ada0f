// AVX2 1x1-convolution micro-kernel and 8x8-block transpose (see
// pointwise_kernels.hpp). The tile: 4 output channels x NV (1..3) vectors of 8 pixels = up to 12 accumulators + NV input vectors + one
// broadcast (16 ymm registers); a partial strip's last vector is loaded and stored
// masked.
#include <immintrin.h>

#include "conv/pointwise_kernels.hpp"
#include "core/transpose8x8_avx2.hpp"

namespace taihu::dnn::conv {

namespace {

// The first `n` (0..8) lanes set.
__m256i first_lanes(int n) {
  alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - n));
}

// Where one tile's prefetches stand (carried from tile to tile).
struct PrefetchCursor {
  const float* at;
  std::int64_t left, stride;
  bool l2;
};

// One tile: rows (<= kPwRows) output channels x NV vectors, reduced over `channels`
// input channels read at xp (channel stride `stride`), copied to cp when COPY.
template <int NV, bool MASKED, bool COPY>
inline void fwd_tile(const float* xp, std::int64_t stride, float* cp, const float* wp, std::int64_t wstride,
                     std::int64_t channels, __m256i mask, float* y, std::int64_t y_kstride, int rows,
                     const float* bias, bool accumulate, bool relu, PrefetchCursor& pc) {
  __m256 acc[kPwRows][NV];
#pragma GCC unroll 4
  for (int m = 0; m < kPwRows; ++m)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_setzero_ps();
  const float* pf = pc.at;
  std::int64_t pf_left = pc.left;
  const std::int64_t pf_stride = pc.stride;
  const bool pf_l2 = pc.l2;
  for (std::int64_t c = 0; c < channels;) {
    // One prefetched row (2 lines) per 8 channels: spread out, so the few L1 miss
    // buffers never fill up and stall the FMAs.
    if (pf_left > 0) {
      if (pf_l2) {
        _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(pf + 16), _MM_HINT_T1);
      } else {
        _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(pf + 16), _MM_HINT_T0);
      }
      pf += pf_stride;
      --pf_left;
    }
    const std::int64_t end = c + 8 < channels ? c + 8 : channels;
    for (; c < end; ++c, xp += stride, wp += wstride) {
      __m256 xv[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        xv[v] = (MASKED && v == NV - 1) ? _mm256_maskload_ps(xp + 8 * v, mask) : _mm256_loadu_ps(xp + 8 * v);
      if constexpr (COPY) {  // (the masked load zero-fills the lanes past the strip)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) _mm256_storeu_ps(cp + 8 * v, xv[v]);
        cp += kPwPixels;
      }
#pragma GCC unroll 4
      for (int m = 0; m < kPwRows; ++m) {
        const __m256 wb = _mm256_broadcast_ss(wp + m);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_fmadd_ps(wb, xv[v], acc[m][v]);
      }
    }
  }
  pc.at = pf;
  pc.left = pf_left;
  // Fully unrolled (a runtime bound would keep acc in memory through the loop above).
#pragma GCC unroll 4
  for (int m = 0; m < kPwRows; ++m) {
    if (m >= rows) break;
    float* yr = y + m * y_kstride;
    const __m256 b = _mm256_set1_ps(bias ? bias[m] : 0.0f);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const bool part = MASKED && v == NV - 1;
      __m256 val = acc[m][v];
      if (accumulate)
        val = _mm256_add_ps(val, part ? _mm256_maskload_ps(yr + 8 * v, mask) : _mm256_loadu_ps(yr + 8 * v));
      if (bias) val = _mm256_add_ps(val, b);
      if (relu) val = _mm256_max_ps(_mm256_setzero_ps(), val);  // (a NaN passes)
      if (part)
        _mm256_maskstore_ps(yr + 8 * v, mask, val);
      else
        _mm256_storeu_ps(yr + 8 * v, val);
    }
  }
}

// `a.tiles` tiles on the same pixels; the first copies the strip when asked.
template <int NV, bool MASKED>
void fwd_tiles(const PwFwdArgs& a) {
  const __m256i mask = first_lanes(MASKED ? a.pixels - 8 * (NV - 1) : 8);
  PrefetchCursor pc{a.prefetch, a.prefetch_rows, a.prefetch_stride, a.prefetch_l2};
  const std::int64_t ytile = kPwRows * a.y_kstride;
  for (int t = 0; t < a.tiles; ++t) {
    const int rows = t == a.tiles - 1 ? a.rows : kPwRows;
    float* y = a.y + t * ytile;
    const float* w = a.w + t * a.w_tile_stride;
    const float* bias = a.bias ? a.bias + t * kPwRows : nullptr;
    if (a.y_prefetch_ahead > 0)
      for (int m = 0; m < rows; ++m) {
        __builtin_prefetch(y + m * a.y_kstride + a.y_prefetch_ahead, 1);
        __builtin_prefetch(y + m * a.y_kstride + a.y_prefetch_ahead + 16, 1);
      }
    if (a.x_copy && t == 0)
      fwd_tile<NV, MASKED, true>(a.x, a.x_cstride, a.x_copy, w, a.w_cstride, a.channels, mask, y, a.y_kstride, rows,
                                 bias, a.accumulate, a.relu, pc);
    else if (a.x_copy)
      fwd_tile<NV, MASKED, false>(a.x_copy, kPwPixels, nullptr, w, a.w_cstride, a.channels, mask, y, a.y_kstride,
                                  rows, bias, a.accumulate, a.relu, pc);
    else
      fwd_tile<NV, MASKED, false>(a.x, a.x_cstride, nullptr, w, a.w_cstride, a.channels, mask, y, a.y_kstride, rows,
                                  bias, a.accumulate, a.relu, pc);
  }
}

}  // namespace

void pw_fwd_avx2(const PwFwdArgs& a) {
  const int nv = (a.pixels + 7) / 8;
  const bool masked = a.pixels % 8 != 0;
  switch (nv * 2 + (masked ? 1 : 0)) {
    case 2: fwd_tiles<1, false>(a); break;
    case 3: fwd_tiles<1, true>(a); break;
    case 4: fwd_tiles<2, false>(a); break;
    case 5: fwd_tiles<2, true>(a); break;
    case 6: fwd_tiles<3, false>(a); break;
    default: fwd_tiles<3, true>(a); break;
  }
}

void pw_transpose_avx2(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols,
                       float* dst, std::int64_t dst_stride) {
  const std::int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (std::int64_t i = 0; i < rows8; i += 8) {
    for (std::int64_t j = 0; j < cols8; j += 8) {
      __m256 r[8];
      for (int u = 0; u < 8; ++u) r[u] = _mm256_loadu_ps(src + (i + u) * src_stride + j);
      transpose8x8(r);
      for (int u = 0; u < 8; ++u) _mm256_storeu_ps(dst + (j + u) * dst_stride + i, r[u]);
    }
    for (std::int64_t j = cols8; j < cols; ++j)
      for (int u = 0; u < 8; ++u) dst[j * dst_stride + i + u] = src[(i + u) * src_stride + j];
  }
  for (std::int64_t i = rows8; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
}

void pw_pack4_avx2(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols, float* dst,
                   std::int64_t block_stride) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += 4) {
    float* db = dst + i0 / 4 * block_stride;
    const float* s0 = src + i0 * src_stride;
    std::int64_t j = 0;
    if (rows - i0 >= 4) {
      const float *s1 = s0 + src_stride, *s2 = s1 + src_stride, *s3 = s2 + src_stride;
      for (; j + 8 <= cols; j += 8) {
        const __m256 r0 = _mm256_loadu_ps(s0 + j), r1 = _mm256_loadu_ps(s1 + j);
        const __m256 r2 = _mm256_loadu_ps(s2 + j), r3 = _mm256_loadu_ps(s3 + j);
        const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        const __m256 c04 = _mm256_shuffle_ps(t0, t2, 0x44), c15 = _mm256_shuffle_ps(t0, t2, 0xEE);
        const __m256 c26 = _mm256_shuffle_ps(t1, t3, 0x44), c37 = _mm256_shuffle_ps(t1, t3, 0xEE);
        _mm256_storeu_ps(db + j * 4, _mm256_permute2f128_ps(c04, c15, 0x20));  // columns j, j+1
        _mm256_storeu_ps(db + j * 4 + 8, _mm256_permute2f128_ps(c26, c37, 0x20));
        _mm256_storeu_ps(db + j * 4 + 16, _mm256_permute2f128_ps(c04, c15, 0x31));
        _mm256_storeu_ps(db + j * 4 + 24, _mm256_permute2f128_ps(c26, c37, 0x31));
      }
    }
    for (; j < cols; ++j)
      for (std::int64_t u = 0; u < 4; ++u) db[j * 4 + u] = i0 + u < rows ? s0[u * src_stride + j] : 0.0f;
  }
}

}  // namespace taihu::dnn::conv
