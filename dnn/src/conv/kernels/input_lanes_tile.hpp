// The direct input-lanes backward-weights' AVX-512 tap permutes (input_lanes_kernels.hpp:
// the dw rows' tap store and the column build), as templates so that the emulated
// AVX-512 test (tests/dnn/conv/test_conv_avx512_emulated.cpp, SIMDe) instantiates the
// same code as kernels/avx512/input_lanes_kernels_avx512.cpp.
// A full block of 16 channels x T taps is T vectors in ([t][16 channels]) and T vectors
// out (the [c][t] run): output vector q's lane e is flat index i = 16 q + e, channel
// i / T, tap i % T, so q takes from input t the lanes {e : (16 q + e) % T == t} through
// one masked vpermps whose index (the channel, (16 q + e) / T) depends on q alone:
// T * T permutes per block, no branches, whole-vector stores. (The 16 x 16 transpose of
// tap_interleave_avx512 stores each channel's T floats as a masked 36-byte piece.)
// And x's one-pass reorder into its padded plane (PadBlockKernel), 8 x 8 transposes.
// Include <immintrin.h> (or the emulation) first.
#pragma once
#include <array>
#include <cstdint>

#include "core/transpose8x8_avx2.hpp"

namespace taihu::dnn::conv::kernels {

template <int T>
struct TapTables {
  std::array<std::array<std::int32_t, 16>, T> idx{};    // [q][e]: the channel
  std::array<std::array<std::uint16_t, T>, T> mask{};  // [q][t]: lanes taking tap t
};

template <int T>
constexpr TapTables<T> make_tap_tables() {
  TapTables<T> tb{};
  for (int q = 0; q < T; ++q)
    for (int e = 0; e < 16; ++e) {
      const int i = 16 * q + e;
      tb.idx[q][e] = i / T;
      tb.mask[q][i % T] = static_cast<std::uint16_t>(tb.mask[q][i % T] | (1u << e));
    }
  return tb;
}

// Output vector q of a block (16 channels x T taps, [c][t]) from the T tap vectors.
template <int T>
inline __m512 tap_vector(const TapTables<T>& tb, const __m512i& idx, const __m512 (&in)[T], int q) {
  // Every lane is written by exactly one tap (the masks partition the 16 lanes): tap 0's
  // by the first permute (every lane), the others overwrite theirs. (Zero-masking form
  // with all lanes set: GCC 12 flags the plain form's undefined pass-through as
  // maybe-uninitialized.)
  __m512 o = _mm512_maskz_permutexvar_ps(0xFFFF, idx, in[0]);
#pragma GCC unroll 16
  for (int t = 1; t < T; ++t) o = _mm512_mask_permutexvar_ps(o, tb.mask[q][t], idx, in[t]);
  return o;
}

// `blocks` whole 16-channel blocks: dst[c * T + t] (+)= src[t * tap_stride + c].
// Nt::stream(p, v) is the non-temporal store (used when `stream`: dst 64-byte aligned).
template <int T, class Nt>
void tap_store_blocks(const float* src, std::int64_t tap_stride, std::int64_t blocks, float* dst, bool accumulate,
                      bool stream) {
  static constexpr TapTables<T> tb = make_tap_tables<T>();
  __m512i idx[T];
  for (int q = 0; q < T; ++q) idx[q] = _mm512_loadu_si512(tb.idx[q].data());
  for (std::int64_t b = 0; b < blocks; ++b) {
    __m512 in[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) in[t] = _mm512_loadu_ps(src + t * tap_stride + b * 16);
    float* d = dst + b * 16 * T;
#pragma GCC unroll 16
    for (int q = 0; q < T; ++q) {
      __m512 o = tap_vector<T>(tb, idx[q], in, q);
      if (accumulate) o = _mm512_add_ps(_mm512_loadu_ps(d + q * 16), o);
      if (stream)
        Nt::stream(d + q * 16, o);
      else
        _mm512_storeu_ps(d + q * 16, o);
    }
  }
}

// ColBuildKernel (input_lanes_kernels.hpp) for a KH x KW kernel.
template <int KH, int KW>
void col_build_taps(const float* xrow, std::int64_t wp, std::int64_t pixels, float* col, std::int64_t cstride) {
  constexpr int T = KH * KW;
  static constexpr TapTables<T> tb = make_tap_tables<T>();
  __m512i idx[T];
  for (int q = 0; q < T; ++q) idx[q] = _mm512_loadu_si512(tb.idx[q].data());
  for (std::int64_t p = 0; p < pixels; ++p) {
    __m512 in[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) in[t] = _mm512_loadu_ps(xrow + ((t / KW) * wp + p + t % KW) * 16);
#pragma GCC unroll 16
    for (int q = 0; q < T; ++q) _mm512_storeu_ps(col + q * cstride + p * 16, tap_vector<T>(tb, idx[q], in, q));
  }
}

// PadBlockKernel (input_lanes_kernels.hpp): 8 pixels x 8 channels per register transpose
// over the flat h * w plane (as the layout module's block reorder), each pixel's 8 lanes
// stored at its padded position; the last hw % 8 pixels scalar.
inline void pad_block_8x8(const float* src, std::int64_t lanes, std::int64_t h, std::int64_t w, float* dst,
                          std::int64_t wp) {
  const std::int64_t hw = h * w;
  std::int64_t p = 0, iy = 0, ix = 0;  // (iy, ix): pixel p's row and column
  for (; p + 8 <= hw; p += 8) {
    float* at[8];
    for (int u = 0; u < 8; ++u) {
      at[u] = dst + (iy * wp + ix) * 16;
      if (++ix == w) ix = 0, ++iy;
    }
    for (int s = 0; s < 16; s += 8) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l)
        r[l] = s + l < lanes ? _mm256_loadu_ps(src + (s + l) * hw + p) : _mm256_setzero_ps();
      transpose8x8(r);  // r[u]: lanes s..s+7 of pixel p + u
      for (int u = 0; u < 8; ++u) _mm256_storeu_ps(at[u] + s, r[u]);
    }
  }
  for (; p < hw; ++p) {
    float* d = dst + (iy * wp + ix) * 16;
    for (std::int64_t l = 0; l < 16; ++l) d[l] = l < lanes ? src[l * hw + p] : 0.0f;
    if (++ix == w) ix = 0, ++iy;
  }
}

}  // namespace taihu::dnn::conv::kernels
