// AVX-512 1x1 kernels on nChw16c activations (see pointwise_blocked_kernels.hpp): the
// width-generic tiles of kernels/pointwise_blocked_tile.hpp with 16-lane vectors,
// forward 4 output blocks (64 channels) x 6 pixels, backward-weights the input-lanes
// tile, 3 input blocks (48 channels) x 8 output channels (24 of the 32 zmm accumulate
// in both); the forward 4 x 6 tile again in inline assembly (pwb16_fwd_avx512_asm, taken
// on AMD: GCC's allocation of the intrinsics tile copies and spills accumulators); and
// the input-lanes 3x3 (any stride-1 kernel) backward-weights' tap interleave, 16
// channels x 16 taps per register transpose.
#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/avx512/vec_avx512_nt.hpp"
#include "conv/kernels/pointwise_blocked_tile.hpp"

namespace taihu::dnn::conv {

void pwb16_fwd_avx512(const PwbFwdArgs& a) {
  kernels::pwb_fwd_simd<kernels::VecAvx512, kPwb16Blocks, kPwb16Pixels>(a);
}

namespace {

using Acc4x6 = __m512[4][6];

// Input channel J of a block for pixels P..P+2 of the tile: the 4 weight vectors at w +
// 64 J (zmm24-27), per pixel one broadcast of x + 16 p + J (zmm28-30) and 4 FMAs. (A
// tile's 24 accumulators as in-out operands would pass asm's 30-operand limit: each
// channel is two such halves, the second reloading the weights from L1.)
template <int J, int P>
inline __attribute__((always_inline)) void fwd_channel_4x3(Acc4x6& acc, const float* x, const float* w) {
  asm(
      "vmovups %c[wo]+0(%[w]), %%zmm24\n\t"
      "vmovups %c[wo]+64(%[w]), %%zmm25\n\t"
      "vmovups %c[wo]+128(%[w]), %%zmm26\n\t"
      "vmovups %c[wo]+192(%[w]), %%zmm27\n\t"
      "vbroadcastss %c[xo]+0(%[x]), %%zmm28\n\t"
      "vfmadd231ps %%zmm28, %%zmm24, %[a00]\n\t"
      "vfmadd231ps %%zmm28, %%zmm25, %[a10]\n\t"
      "vfmadd231ps %%zmm28, %%zmm26, %[a20]\n\t"
      "vfmadd231ps %%zmm28, %%zmm27, %[a30]\n\t"
      "vbroadcastss %c[xo]+64(%[x]), %%zmm29\n\t"
      "vfmadd231ps %%zmm29, %%zmm24, %[a01]\n\t"
      "vfmadd231ps %%zmm29, %%zmm25, %[a11]\n\t"
      "vfmadd231ps %%zmm29, %%zmm26, %[a21]\n\t"
      "vfmadd231ps %%zmm29, %%zmm27, %[a31]\n\t"
      "vbroadcastss %c[xo]+128(%[x]), %%zmm30\n\t"
      "vfmadd231ps %%zmm30, %%zmm24, %[a02]\n\t"
      "vfmadd231ps %%zmm30, %%zmm25, %[a12]\n\t"
      "vfmadd231ps %%zmm30, %%zmm26, %[a22]\n\t"
      "vfmadd231ps %%zmm30, %%zmm27, %[a32]\n\t"
      : [a00] "+v"(acc[0][P + 0]),
        [a01] "+v"(acc[0][P + 1]),
        [a02] "+v"(acc[0][P + 2]),
        [a10] "+v"(acc[1][P + 0]),
        [a11] "+v"(acc[1][P + 1]),
        [a12] "+v"(acc[1][P + 2]),
        [a20] "+v"(acc[2][P + 0]),
        [a21] "+v"(acc[2][P + 1]),
        [a22] "+v"(acc[2][P + 2]),
        [a30] "+v"(acc[3][P + 0]),
        [a31] "+v"(acc[3][P + 1]),
        [a32] "+v"(acc[3][P + 2])
      : [x] "r"(x), [w] "r"(w), [xo] "i"(4 * J + 64 * P), [wo] "i"(256 * J)
      : "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "memory");
}

template <int... J>
inline __attribute__((always_inline)) void fwd_block_4x6(Acc4x6& acc, const float* x, const float* w,
                                                         std::integer_sequence<int, J...>) {
  ((fwd_channel_4x3<J, 0>(acc, x, w), fwd_channel_4x3<J, 3>(acc, x, w)), ...);
}

// The whole 4 x 6 tile (PwbFwdArgs; kernels::pwb_fwd_tile's contract and prefetches).
inline __attribute__((always_inline)) void fwd_tile_4x6(const PwbFwdArgs& a, const float* x, float* y,
                                                        bool prefetch_x) {
  Acc4x6 acc;
#pragma GCC unroll 4
  for (int b = 0; b < 4; ++b)
#pragma GCC unroll 6
    for (int p = 0; p < 6; ++p)
      acc[b][p] = a.accumulate ? _mm512_loadu_ps(y + b * a.y_bstride + p * 16)
                    : a.bias     ? _mm512_loadu_ps(a.bias + 16 * b)
                                 : _mm512_setzero_ps();
  const float* w = a.w;
  for (std::int64_t cb = 0; cb < a.cblocks; ++cb, x += a.x_bstride, w += 16 * 64) {
    if (prefetch_x)  // two tiles ahead, a line per pixel
#pragma GCC unroll 6
      for (int p = 0; p < 6; ++p) _mm_prefetch(reinterpret_cast<const char*>(x + (12 + p) * 16), _MM_HINT_T0);
    fwd_block_4x6(acc, x, w, std::make_integer_sequence<int, 16>());
  }
#pragma GCC unroll 4
  for (int b = 0; b < 4; ++b)
#pragma GCC unroll 6
    for (int p = 0; p < 6; ++p) _mm512_storeu_ps(y + b * a.y_bstride + p * 16, acc[b][p]);
}

}  // namespace

void pwb16_fwd_avx512_asm(const PwbFwdArgs& a) {
  if (a.nb == 4)
    kernels::pwb_fwd_run<kernels::VecAvx512, 4, 6, &fwd_tile_4x6>(a);
  else
    pwb16_fwd_avx512(a);
}

void pwb16_bwdw_x_avx512(const PwbBwdwXArgs& a) {
  kernels::pwb_bwdw_x_simd<kernels::VecAvx512Nt, kPwb16XVecs, kPwb16XRows>(a);
}

void pwb16_bwdw_x16_avx512(const PwbBwdwXArgs& a) {
  kernels::pwb_bwdw_x_simd<kernels::VecAvx512Nt, 1, kPwb16XWideRows>(a);
}

// pwb16_bias_sums_generic's order: four 8-pixel runs at a time (four independent float
// chains), each run's sum added to the double halves in run order. (Zero-masking
// conversions and extract with every lane set: GCC 12 flags the plain forms' undefined
// pass-through as maybe-uninitialized.)
void pwb16_bias_sums_avx512(const float* dy, std::int64_t pixels, double* s) {
  __m512d lo = _mm512_loadu_pd(s), hi = _mm512_loadu_pd(s + 8);
  const auto add = [&](__m512 r) {
    lo = _mm512_add_pd(lo, _mm512_maskz_cvtps_pd(0xFF, _mm512_maskz_extractf32x8_ps(0xFF, r, 0)));
    hi = _mm512_add_pd(hi, _mm512_maskz_cvtps_pd(0xFF, _mm512_maskz_extractf32x8_ps(0xFF, r, 1)));
  };
  std::int64_t p0 = 0;
  for (; p0 + 32 <= pixels; p0 += 32) {
    const float* v = dy + p0 * 16;
    __m512 r0 = _mm512_loadu_ps(v), r1 = _mm512_loadu_ps(v + 128), r2 = _mm512_loadu_ps(v + 256),
           r3 = _mm512_loadu_ps(v + 384);
    for (int p = 1; p < 8; ++p) {
      r0 = _mm512_add_ps(r0, _mm512_loadu_ps(v + p * 16));
      r1 = _mm512_add_ps(r1, _mm512_loadu_ps(v + 128 + p * 16));
      r2 = _mm512_add_ps(r2, _mm512_loadu_ps(v + 256 + p * 16));
      r3 = _mm512_add_ps(r3, _mm512_loadu_ps(v + 384 + p * 16));
    }
    add(r0);
    add(r1);
    add(r2);
    add(r3);
  }
  for (; p0 < pixels; p0 += 8) {
    const std::int64_t p1 = std::min<std::int64_t>(pixels, p0 + 8);
    __m512 r = _mm512_loadu_ps(dy + p0 * 16);
    for (std::int64_t p = p0 + 1; p < p1; ++p) r = _mm512_add_ps(r, _mm512_loadu_ps(dy + p * 16));
    add(r);
  }
  _mm512_storeu_pd(s, lo);
  _mm512_storeu_pd(s + 8, hi);
}

namespace {

// r[i] (16 rows of 16) transposed in place: r[i][j] <- r[j][i]. (Zero-masking forms with
// every lane set: GCC 12 flags the plain unpacks' and shuffles' undefined pass-through
// as maybe-uninitialized; the all-ones mask compiles to the unmasked instruction.)
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(0xFFFF, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, _mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, _mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  // r[4q + m] now holds, in each 128-bit lane L, rows 4q..4q+3's column 4L + m.
  for (int q = 0; q < 4; q += 2)
    for (int m = 0; m < 4; ++m) {
      t[4 * q + m] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[4 * q + m], r[4 * q + 4 + m], 0x88);
      t[4 * q + 4 + m] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[4 * q + m], r[4 * q + 4 + m], 0xdd);
    }
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[m], t[8 + m], 0x88);
    r[8 + m] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[m], t[8 + m], 0xdd);
    r[4 + m] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[4 + m], t[12 + m], 0x88);
    r[12 + m] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[4 + m], t[12 + m], 0xdd);
  }
}

}  // namespace

void tap_interleave_avx512(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                           float* dst, bool accumulate) {
  for (std::int64_t c0 = 0; c0 < channels; c0 += 16) {
    const int lanes = static_cast<int>(std::min<std::int64_t>(16, channels - c0));
    const __mmask16 cmask = static_cast<__mmask16>((1u << lanes) - 1);
    for (std::int64_t t0 = 0; t0 < taps; t0 += 16) {
      const int nt = static_cast<int>(std::min<std::int64_t>(16, taps - t0));
      const __mmask16 tmask = static_cast<__mmask16>((1u << nt) - 1);
      __m512 r[16];
      for (int i = 0; i < 16; ++i)
        r[i] = i < nt ? _mm512_maskz_loadu_ps(cmask, src + (t0 + i) * tap_stride + c0) : _mm512_setzero_ps();
      transpose16(r);
      for (int c = 0; c < lanes; ++c) {
        float* d = dst + (c0 + c) * taps + t0;
        const __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(tmask, d), r[c]) : r[c];
        _mm512_mask_storeu_ps(d, tmask, v);
      }
    }
  }
}

}  // namespace taihu::dnn::conv
