// AVX-512 tap store of the direct input-lanes backward-weights (input_lanes_kernels.hpp).
// A full block of 16 channels x T taps is T vectors in ([t][16 channels]) and T vectors
// out (the [c][t] run): output vector q's lane e is flat index i = 16 q + e, channel
// i / T, tap i % T, so q takes from input t the lanes {e : (16 q + e) % T == t} through
// one masked vpermps whose index (the channel, (16 q + e) / T) depends on q alone:
// T * T permutes per block, no branches, whole-vector stores. (The 16 x 16 transpose of
// tap_interleave_avx512 stores each channel's T floats as a masked 36-byte piece: at
// 3x3 6% of the res4 call's samples on Zen 4, with its lane and tap-count branches.)
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "conv/input_lanes_kernels.hpp"
#include "conv/pointwise_blocked_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

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

template <int T>
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
        _mm512_stream_ps(d + q * 16, o);
      else
        _mm512_storeu_ps(d + q * 16, o);
    }
  }
}

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

}  // namespace

void col_build_avx512(const float* xrow, std::int64_t wp, int kh, int kw, std::int64_t pixels, float* col,
                      std::int64_t cstride) {
  if (kh == 3 && kw == 3)
    col_build_taps<3, 3>(xrow, wp, pixels, col, cstride);
  else
    col_build_generic(xrow, wp, kh, kw, pixels, col, cstride);
}

void tap_store_avx512(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                      float* dst, bool accumulate, bool stream) {
  std::int64_t done = 0;
  if (taps == 9) {
    done = channels / 16 * 16;
    // Streaming needs 64-byte aligned vectors: 9 x 16 floats per block keep dst's alignment.
    const bool nt = stream && !accumulate && reinterpret_cast<std::uintptr_t>(dst) % 64 == 0;
    tap_store_blocks<9>(src, tap_stride, done / 16, dst, accumulate, nt);
  }
  if (done < channels) tap_interleave_avx512(src + done, tap_stride, taps, channels - done, dst + done * taps, accumulate);
}

}  // namespace taihu::dnn::conv
