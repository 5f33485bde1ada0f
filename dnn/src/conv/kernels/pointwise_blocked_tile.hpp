// Width-generic register tiles of the 1x1 convolution on blocked activations (the
// contract is pointwise_blocked_kernels.hpp's PwbFwdArgs / PwbBwdwXArgs), instantiated per
// ISA with its vector traits V (kernels/<isa>/vec_<isa>.hpp): a channel block is one
// vector of V::W lanes (nChw16c for AVX-512's 16), a pixel's block one vector.
//   forward: NB output blocks x NP consecutive pixels: per input channel NB weight
//     vectors and NP input broadcasts feed NB * NP FMAs (AVX-512: 4 x 6 = 24 of the 32
//     zmm accumulate). Weights packed [channel][nb * W].
//   backward-weights (input lanes): CV vectors of W input channels (x, a pixel's
//     block) x NK output channels (dY broadcast, one block) over a run of pixels,
//     written into the dw rows (AVX-512: 3 x 8, and 1 x 16 for AMD's small planes).
//   (AVX-512 on AMD runs the forward's whole 4 x 6 tile as inline assembly instead:
//     kernels/avx512/pointwise_blocked_kernels_avx512.cpp through pwb_fwd_run's Full.)
// Everything is in an anonymous namespace: each ISA's TU compiles its own copy with its
// own flags, so the linker never hands an AVX-512 body to an AVX2 caller.
#pragma once
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "conv/pointwise_blocked_kernels.hpp"

namespace taihu::dnn::conv::kernels {
namespace {

template <class V, int NB, int NP>
inline __attribute__((always_inline)) void pwb_fwd_tile(const PwbFwdArgs& a, const float* x, float* y,
                                                        bool prefetch_x) {
  using Reg = typename V::Reg;
  constexpr int W = V::W;
  Reg acc[NB][NP];
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 12
    for (int p = 0; p < NP; ++p)
      acc[b][p] = a.accumulate ? V::loadu(y + b * a.y_bstride + p * W)
                  : a.bias     ? V::loadu(a.bias + W * b)
                               : V::zero();
  const float* w = a.w;
  for (std::int64_t cb = 0; cb < a.cblocks; ++cb, x += a.x_bstride) {
    // Two tiles ahead: a pixel's block is W floats (one 64-byte line at W = 16).
    if (prefetch_x)
#pragma GCC unroll 12
      for (int p = 0; p < NP; p += 64 / (4 * W) > 0 ? 64 / (4 * W) : 1)
        _mm_prefetch(reinterpret_cast<const char*>(x + (2 * NP + p) * W), _MM_HINT_T0);
#pragma GCC unroll 16
    for (int ci = 0; ci < W; ++ci, w += NB * W) {
      Reg wv[NB];
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) wv[b] = V::loadu(w + W * b);
#pragma GCC unroll 12
      for (int p = 0; p < NP; ++p) {
        const Reg xb = V::bcast(x + p * W + ci);
#pragma GCC unroll 4
        for (int b = 0; b < NB; ++b) acc[b][p] = V::fma(wv[b], xb, acc[b][p]);
      }
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 12
    for (int p = 0; p < NP; ++p) V::storeu(y + b * a.y_bstride + p * W, acc[b][p]);
}

// The run's last 1..NP-1 pixels (rest).
template <class V, int NB, int... R>
inline void pwb_fwd_tail(const PwbFwdArgs& a, const float* x, float* y, std::int64_t rest,
                         std::integer_sequence<int, R...>) {
  ((rest == R + 1 ? pwb_fwd_tile<V, NB, R + 1>(a, x, y, false) : void()), ...);
}

// A whole NB x NP tile (pwb_fwd_tile's signature): the intrinsics form above, or an
// ISA's own (AVX-512's inline-assembly 4 x 6 tile).
using PwbFwdFullTile = void (*)(const PwbFwdArgs&, const float*, float*, bool);

// A run of pixels: whole NP-pixel tiles, then one tail tile (1..NP-1 pixels). Over the
// run's tiles the next run's weights are pulled into L2.
template <class V, int NB, int NP, PwbFwdFullTile Full = &pwb_fwd_tile<V, NB, NP>>
void pwb_fwd_run(const PwbFwdArgs& a) {
  constexpr int W = V::W;
  const std::int64_t full = a.pixels / NP, rest = a.pixels - NP * full;
  const float* x = a.x;
  float* y = a.y;
  const std::int64_t wlines = a.next_w ? (a.next_w_floats + 15) / 16 : 0;
  const std::int64_t per_tile = full > 0 ? (wlines + full - 1) / full : 0;
  const char* wp = reinterpret_cast<const char*>(a.next_w);
  std::int64_t wl = 0;
  for (std::int64_t t = 0; t < full; ++t, x += NP * W, y += NP * W) {
    for (std::int64_t i = 0; i < per_tile && wl < wlines; ++i, ++wl) _mm_prefetch(wp + 64 * wl, _MM_HINT_T1);
    Full(a, x, y, a.prefetch_x);
  }
  if (rest > 0) pwb_fwd_tail<V, NB>(a, x, y, rest, std::make_integer_sequence<int, NP - 1>());
}

// A non-temporal store of a whole vector at an aligned p where the traits have one
// (V::stream: kernels/avx512/vec_avx512_nt.hpp), else a plain store (the SIMDe build).
template <class V>
inline void pwb_stream(float* p, typename V::Reg v) {
  if constexpr (requires { V::stream(p, v); })
    V::stream(p, v);
  else
    V::storeu(p, v);
}

// Input-lanes backward-weights (PwbBwdwXArgs): per pixel CV x loads and NK dY
// broadcasts (consecutive lanes of one dY line) feed CV * NK FMAs; the tile stays in
// registers over the whole run and is stored into dw once (the last vector masked to
// the layer's channels). Optional prefetches (PwbBwdwXArgs::prefetch_ahead, next_dy) per
// pixel. (The row loops unroll up to 16: at 8, GCC kept the 1 x 16 tile's accumulators
// in memory.)
template <class V, int CV, int NK>
void pwb_bwdw_x_tile(const PwbBwdwXArgs& a) {
  using Reg = typename V::Reg;
  constexpr int W = V::W;
  const typename V::Mask last = V::first(a.last_lanes);
  const bool partial = a.last_lanes < W;
  Reg acc[NK][CV];
#pragma GCC unroll 16
  for (int j = 0; j < NK; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < CV; ++v) {
      const float* d = a.dw + j * a.ldw + v * W;
      acc[j][v] = !a.accumulate              ? V::zero()
                  : v == CV - 1 && partial ? V::load_first(d, last)
                                             : V::loadu(d);
    }
  // The next tile's dw lines, for writing (a cold dw otherwise stalls every store of
  // the epilogue on a read-for-ownership).
  if (a.next_dw)
#pragma GCC unroll 16
    for (int j = 0; j < NK; ++j)
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) __builtin_prefetch(a.next_dw + j * a.ldw + v * W, 1, 3);
  const std::int64_t xs = a.x_bstride, pixels = a.pixels;
  for (std::int64_t r = 0; r < a.runs; ++r) {
    const float* x = a.x + r * a.x_rstride;
    const float* dy = a.dy + r * a.dy_rstride;
#pragma GCC unroll 2
    for (std::int64_t p = 0; p < pixels; ++p, x += W, dy += W) {
      if (a.next_dy) _mm_prefetch(reinterpret_cast<const char*>(a.next_dy + (dy - a.dy)), _MM_HINT_T1);
      if (a.prefetch_ahead > 0) {
#pragma GCC unroll 4
        for (int v = 0; v < CV; ++v) _mm_prefetch(reinterpret_cast<const char*>(x + v * xs + a.prefetch_ahead * W), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(dy + a.prefetch_ahead * W), _MM_HINT_T0);
      }
      Reg xv[CV];
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) xv[v] = V::loadu(x + v * xs);
#pragma GCC unroll 16
      for (int j = 0; j < NK; ++j) {
        const Reg d = V::bcast(dy + j);
#pragma GCC unroll 4
        for (int v = 0; v < CV; ++v) acc[j][v] = V::fma(xv[v], d, acc[j][v]);
      }
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < NK; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < CV; ++v) {
      float* d = a.dw + j * a.ldw + v * W;
      if (v == CV - 1 && partial)
        V::store_first(d, last, acc[j][v]);
      else if (a.stream)
        pwb_stream<V>(d, acc[j][v]);
      else
        V::storeu(d, acc[j][v]);
    }
}

// Dispatch on the run's nb (1..NB) and, for backward-weights, its (vecs, rows), through
// tables of the instantiations.
template <class V, int NP, int... B>
constexpr std::array<void (*)(const PwbFwdArgs&), sizeof...(B)> pwb_fwd_table(std::integer_sequence<int, B...>) {
  return {&pwb_fwd_run<V, B + 1, NP>...};
}

template <class V, int NB, int NP>
void pwb_fwd_simd(const PwbFwdArgs& a) {
  static constexpr auto table = pwb_fwd_table<V, NP>(std::make_integer_sequence<int, NB>());
  table[static_cast<std::size_t>(a.nb - 1)](a);
}

template <class V, int CV, int... J>
constexpr std::array<void (*)(const PwbBwdwXArgs&), sizeof...(J)> pwb_bwdw_x_row(std::integer_sequence<int, J...>) {
  return {&pwb_bwdw_x_tile<V, CV, J + 1>...};
}

template <class V, int NK, int... C>
constexpr std::array<std::array<void (*)(const PwbBwdwXArgs&), NK>, sizeof...(C)> pwb_bwdw_x_table(
    std::integer_sequence<int, C...>) {
  return {pwb_bwdw_x_row<V, C + 1>(std::make_integer_sequence<int, NK>())...};
}

template <class V, int CV, int NK>
void pwb_bwdw_x_simd(const PwbBwdwXArgs& a) {
  static constexpr auto table = pwb_bwdw_x_table<V, NK>(std::make_integer_sequence<int, CV>());
  table[static_cast<std::size_t>(a.vecs - 1)][static_cast<std::size_t>(a.rows - 1)](a);
}

}  // namespace
}  // namespace taihu::dnn::conv::kernels
