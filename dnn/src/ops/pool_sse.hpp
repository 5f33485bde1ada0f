// Pieces of the pooling kernels (pool_kernels.hpp) shared by every ISA's translation
// unit: the 2x2 MAX kernels' four-window SSE2 steps (the x86-64 baseline: the even and
// odd columns of 8 inputs split by shuffles, interleaved back for backward) and single
// windows (bounded at an odd plane's edge), and VecSse, the four-lane trait with which
// the generic table runs pool_wide.hpp's loops. SSE2 only, and with internal linkage:
// each translation unit keeps its own copy (compiled with its ISA flags, so the linker
// cannot hand the generic kernels an AVX2-encoded one).
#pragma once
#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn::ops::pool {
namespace {

// Windows (ph, pw .. pw + 3) of input rows 2ph .. 2ph + rows - 1 (rows 1 or 2).
template <bool MASK>
inline void forward4(index_t w, const float* x, index_t ph, index_t pw, index_t rows, float* y, std::int32_t* m) {
  const __m128i lane2 = _mm_setr_epi32(0, 2, 4, 6);
  __m128 acc = _mm_set1_ps(std::numeric_limits<float>::lowest());
  __m128i arg = _mm_set1_epi32(-1);
  auto take = [&](__m128 v, std::int32_t at) {
    const __m128 wins = _mm_cmpgt_ps(v, acc);  // false for NaN, as `>`
    acc = _mm_or_ps(_mm_and_ps(wins, v), _mm_andnot_ps(wins, acc));
    if constexpr (MASK) {
      const __m128i idx = _mm_add_epi32(_mm_set1_epi32(at), lane2);
      const __m128i wi = _mm_castps_si128(wins);
      arg = _mm_or_si128(_mm_and_si128(wi, idx), _mm_andnot_si128(wi, arg));
    }
  };
  for (index_t dh = 0; dh < rows; ++dh) {
    const float* row = x + (2 * ph + dh) * w + 2 * pw;
    const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
    const __m128 a0 = _mm_loadu_ps(row), a1 = _mm_loadu_ps(row + 4);
    take(_mm_shuffle_ps(a0, a1, 0x88), at);
    take(_mm_shuffle_ps(a0, a1, 0xDD), at + 1);
  }
  _mm_storeu_ps(y, acc);
  if constexpr (MASK) _mm_storeu_si128(reinterpret_cast<__m128i*>(m), arg);
}

// dx of windows (ph, pw .. pw + 3): 0 + dy at the argmax, +0 elsewhere.
inline void backward4(index_t w, const float* dy, const std::int32_t* m, index_t ph, index_t pw, index_t rows,
                      float* dx) {
  const __m128i lane2 = _mm_setr_epi32(0, 2, 4, 6);
  const __m128 g = _mm_add_ps(_mm_setzero_ps(), _mm_loadu_ps(dy));
  const __m128i arg = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m));
  for (index_t dh = 0; dh < rows; ++dh) {
    const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
    const __m128i i0 = _mm_add_epi32(_mm_set1_epi32(at), lane2);
    const __m128i i1 = _mm_add_epi32(i0, _mm_set1_epi32(1));
    const __m128 v0 = _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(arg, i0)), g);
    const __m128 v1 = _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(arg, i1)), g);
    float* out = dx + (2 * ph + dh) * w + 2 * pw;
    _mm_storeu_ps(out, _mm_unpacklo_ps(v0, v1));
    _mm_storeu_ps(out + 4, _mm_unpackhi_ps(v0, v1));
  }
}

// Window (ph, pw), taps bounded by the plane (h x w).
inline void forward1(index_t h, index_t w, const float* x, index_t ph, index_t pw, float* y, std::int32_t* m) {
  float best = std::numeric_limits<float>::lowest();
  std::int32_t arg = -1;
  for (index_t ih = 2 * ph; ih < std::min(h, 2 * ph + 2); ++ih)
    for (index_t iw = 2 * pw; iw < std::min(w, 2 * pw + 2); ++iw)
      if (x[ih * w + iw] > best) {
        best = x[ih * w + iw];
        arg = static_cast<std::int32_t>(ih * w + iw);
      }
  *y = best;
  if (m) *m = arg;
}

inline void backward1(index_t h, index_t w, float dy, std::int32_t m, index_t ph, index_t pw, float* dx) {
  const float g = 0.0f + dy;
  for (index_t ih = 2 * ph; ih < std::min(h, 2 * ph + 2); ++ih)
    for (index_t iw = 2 * pw; iw < std::min(w, 2 * pw + 2); ++iw) dx[ih * w + iw] = m == ih * w + iw ? g : 0.0f;
}

// Rows of windows with `wide` windows per step already done up to `done` in each row
// (the caller's wider kernel); the rest four at a time, then one at a time.
template <bool MASK>
inline void forward_rest(index_t h, index_t w, const float* x, index_t ph, index_t done, float* yr,
                         std::int32_t* mr) {
  const index_t ow = (w + 1) / 2, full = w / 2, rows = std::min<index_t>(2, h - 2 * ph);
  index_t pw = done;
  for (; pw + 4 <= full; pw += 4) forward4<MASK>(w, x, ph, pw, rows, yr + pw, MASK ? mr + pw : nullptr);
  for (; pw < ow; ++pw) forward1(h, w, x, ph, pw, yr + pw, MASK ? mr + pw : nullptr);
}

inline void backward_rest(index_t h, index_t w, const float* dyr, const std::int32_t* mr, index_t ph, index_t done,
                          float* dx) {
  const index_t ow = (w + 1) / 2, full = w / 2, rows = std::min<index_t>(2, h - 2 * ph);
  index_t pw = done;
  for (; pw + 4 <= full; pw += 4) backward4(w, dyr + pw, mr + pw, ph, pw, rows, dx);
  for (; pw < ow; ++pw) backward1(h, w, dyr[pw], mr[pw], ph, pw, dx);
}

// The four-lane vector trait of pool_wide.hpp's loops (its contract there).
struct VecSse {
  static constexpr index_t kWindows = 4;
  using F = __m128;
  using I = __m128i;
  static F set1f(float v) { return _mm_set1_ps(v); }
  static I set1(std::int32_t i) { return _mm_set1_epi32(i); }
  static F load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, F v) { _mm_storeu_ps(p, v); }
  static void store_i(std::int32_t* p, I v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static I columns(std::int32_t at) { return _mm_add_epi32(_mm_set1_epi32(at), _mm_setr_epi32(0, 2, 4, 6)); }
  static void split(const float* row, F& even, F& odd) {
    const F a0 = _mm_loadu_ps(row), a1 = _mm_loadu_ps(row + 4);
    even = _mm_shuffle_ps(a0, a1, 0x88);
    odd = _mm_shuffle_ps(a0, a1, 0xDD);
  }
  static F evens(const float* row) { return _mm_shuffle_ps(_mm_loadu_ps(row), _mm_loadu_ps(row + 4), 0x88); }
  static void take(F v, I idx, F& acc, I& arg) {
    const F wins = _mm_cmpgt_ps(v, acc);
    acc = _mm_or_ps(_mm_and_ps(wins, v), _mm_andnot_ps(wins, acc));
    const I w = _mm_castps_si128(wins);
    arg = _mm_or_si128(_mm_and_si128(w, idx), _mm_andnot_si128(w, arg));
  }
  static F add(F a, F b) { return _mm_add_ps(a, b); }
  static F div(F a, F b) { return _mm_div_ps(a, b); }
};

}  // namespace
}  // namespace taihu::dnn::ops::pool
