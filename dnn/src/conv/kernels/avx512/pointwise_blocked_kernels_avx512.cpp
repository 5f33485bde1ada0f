// AVX-512 1x1 kernels on nChw16c activations (see pointwise_blocked_kernels.hpp): the
// width-generic tiles of kernels/pointwise_blocked_tile.hpp with 16-lane vectors,
// forward 4 output blocks (64 channels) x 6 pixels, backward-weights the input-lanes
// tile, 3 input blocks (48 channels) x 8 output channels (24 of the 32 zmm accumulate
// in both); and the input-lanes 3x3 (any stride-1 kernel) backward-weights' tap
// interleave, 16 channels x 16 taps per register transpose.
#include <immintrin.h>

#include <algorithm>

#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/pointwise_blocked_tile.hpp"

namespace taihu::dnn::conv {

void pwb16_fwd_avx512(const PwbFwdArgs& a) {
  kernels::pwb_fwd_simd<kernels::VecAvx512, kPwb16Blocks, kPwb16Pixels>(a);
}

void pwb16_bwdw_x_avx512(const PwbBwdwXArgs& a) {
  kernels::pwb_bwdw_x_simd<kernels::VecAvx512, kPwb16XVecs, kPwb16XRows>(a);
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
