// Register-transposing packers for micro-panels whose lines run along k (the rows of a
// transposed A, the columns of a no-transpose B): dst[p * Width + i] = src[i * ld + p].
// Included by the AVX2 and AVX-512 translation units only (it needs 256-bit AVX); like
// simd_kernels.hpp everything is in an anonymous namespace, so each ISA's TU keeps its
// own copies compiled with its own flags.
//
// pack_lines_blocked walks k in steps of Block and transposes Block x Block tiles at line
// offsets 0, Block, 2 Block, ...; when Block does not divide Width (a 14-wide DGEMM B
// panel with 8x8 tiles) the last tile starts at Width - Block and rewrites a few lines
// with the same values, so every store is a full vector. This replaces the portable
// packer's 2x2 (double) / 4x4 (float) SSE transposes: the 16x14 DGEMM's B packing was 8%
// of a 2048^3 product, about twice MKL's copy time (bench/results/2026-11-28-xeon-gemm-packing.md).
#pragma once
#include <immintrin.h>

#include "kernels/microkernel.hpp"

// The block transposes are inlined into the packing loop (GCC otherwise leaves the 8x8
// double one a call per block, 2% of a 2048^3 DGEMM in perf).
#define TAIHU_PACK_INLINE inline __attribute__((always_inline))

namespace taihu::gemm::kernels {
namespace {

// Transposes a Block x Block tile: dst[p * dst_step + i] = src[i * ld + p].
template <class T>
using TransposeFn = void (*)(const T* src, index_t ld, T* dst, index_t dst_step);

template <class T, int Width, int Block, TransposeFn<T> Transpose>
void pack_lines_blocked(const T* src, index_t ld, index_t kc, T* dst) {
  static_assert(Width >= Block, "a panel narrower than the transpose tile");
  index_t p = 0;
  for (; p + Block <= kc; p += Block) {
    for (int i = 0; i + Block <= Width; i += Block) Transpose(src + i * ld + p, ld, dst + p * Width + i, Width);
    if constexpr (Width % Block != 0)
      Transpose(src + (Width - Block) * ld + p, ld, dst + p * Width + (Width - Block), Width);
  }
  for (; p < kc; ++p)
    for (int i = 0; i < Width; ++i) dst[p * Width + i] = src[i * ld + p];
}

// 4 x 4 floats (SSE).
TAIHU_PACK_INLINE void transpose4x4_ps(const float* src, index_t ld, float* dst, index_t dst_step) {
  __m128 r0 = _mm_loadu_ps(src), r1 = _mm_loadu_ps(src + ld);
  __m128 r2 = _mm_loadu_ps(src + 2 * ld), r3 = _mm_loadu_ps(src + 3 * ld);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(dst, r0);
  _mm_storeu_ps(dst + dst_step, r1);
  _mm_storeu_ps(dst + 2 * dst_step, r2);
  _mm_storeu_ps(dst + 3 * dst_step, r3);
}

// 4 x 4 doubles (AVX): pairs of doubles, then 128-bit halves (vperm2f128).
TAIHU_PACK_INLINE void transpose4x4_pd(const double* src, index_t ld, double* dst, index_t dst_step) {
  const __m256d r0 = _mm256_loadu_pd(src), r1 = _mm256_loadu_pd(src + ld);
  const __m256d r2 = _mm256_loadu_pd(src + 2 * ld), r3 = _mm256_loadu_pd(src + 3 * ld);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(dst + dst_step, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(dst + 2 * dst_step, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(dst + 3 * dst_step, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// 8 x 8 floats (AVX): the rows' 128-bit halves are paired by the loads (vinsertf128 from
// memory, no shuffle port), then two in-lane shuffle stages.
TAIHU_PACK_INLINE void transpose8x8_ps(const float* src, index_t ld, float* dst, index_t dst_step) {
  __m256 r[8], t[8];
  // r[i]: row i's k 0-3 in the low half, row i + 4's k 0-3 in the high half; r[4 + i]
  // the same for k 4-7.
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(src + i * ld)),
                                _mm_loadu_ps(src + (i + 4) * ld), 1);
    r[4 + i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(src + i * ld + 4)),
                                    _mm_loadu_ps(src + (i + 4) * ld + 4), 1);
  }
  for (int h = 0; h < 2; ++h) {  // h: k 0-3, k 4-7
    __m256* q = r + 4 * h;
    t[4 * h] = _mm256_unpacklo_ps(q[0], q[1]);
    t[4 * h + 1] = _mm256_unpackhi_ps(q[0], q[1]);
    t[4 * h + 2] = _mm256_unpacklo_ps(q[2], q[3]);
    t[4 * h + 3] = _mm256_unpackhi_ps(q[2], q[3]);
    const __m256* u = t + 4 * h;
    _mm256_storeu_ps(dst + (4 * h) * dst_step, _mm256_shuffle_ps(u[0], u[2], 0x44));
    _mm256_storeu_ps(dst + (4 * h + 1) * dst_step, _mm256_shuffle_ps(u[0], u[2], 0xee));
    _mm256_storeu_ps(dst + (4 * h + 2) * dst_step, _mm256_shuffle_ps(u[1], u[3], 0x44));
    _mm256_storeu_ps(dst + (4 * h + 3) * dst_step, _mm256_shuffle_ps(u[1], u[3], 0xee));
  }
}

}  // namespace
}  // namespace taihu::gemm::kernels
