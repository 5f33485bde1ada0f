// Width-generic register tiles of the 1x1 convolution on blocked activations (the
// contract is pointwise_blocked_kernels.hpp's PwbFwdArgs / PwbBwdwArgs), instantiated per
// ISA with its vector traits V (kernels/<isa>/vec_<isa>.hpp): a channel block is one
// vector of V::W lanes (nChw16c for AVX-512's 16), a pixel's block one vector.
//   forward: NB output blocks x NP consecutive pixels: per input channel NB weight
//     vectors and NP input broadcasts feed NB * NP FMAs (AVX-512: 4 x 6 = 24 of the 32
//     zmm accumulate). Weights packed [channel][nb * W].
//   backward-weights: NB vectors of W output channels (dY) x NC input channels (x
//     broadcast) over a run of pixels, added to the tile-major accumulator.
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

// A run of pixels: whole NP-pixel tiles, then one tail tile (1..NP-1 pixels). Over the
// run's tiles the next run's weights are pulled into L2.
template <class V, int NB, int NP>
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
    pwb_fwd_tile<V, NB, NP>(a, x, y, a.prefetch_x);
  }
  if (rest > 0) pwb_fwd_tail<V, NB>(a, x, y, rest, std::make_integer_sequence<int, NP - 1>());
}

template <class V, int NB, int NC>
void pwb_bwdw_tile(const PwbBwdwArgs& a) {
  using Reg = typename V::Reg;
  constexpr int W = V::W;
  Reg acc[NB][NC];
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) acc[b][j] = a.zero_init ? V::zero() : V::loadu(a.acc + j * a.acc_cstride + b * W);
  const float* xc[NC];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j) xc[j] = a.x + ((a.c0 + j) / W) * a.x_bstride + (a.c0 + j) % W;
  const float* dy = a.dy;
  const std::int64_t bs = a.dy_bstride, pixels = a.pixels;
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < pixels; ++p, dy += W) {
    Reg dv[NB];
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) dv[b] = V::loadu(dy + b * bs);
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) {
      const Reg xb = V::bcast(xc[j] + p * W);
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) acc[b][j] = V::fma(dv[b], xb, acc[b][j]);
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) V::storeu(a.acc + j * a.acc_cstride + b * W, acc[b][j]);
}

// Dispatch on the run's nb (1..NB) and, for backward-weights, its cols (1..NC), through
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

template <class V, int NB, int... J>
constexpr std::array<void (*)(const PwbBwdwArgs&), sizeof...(J)> pwb_bwdw_row(std::integer_sequence<int, J...>) {
  return {&pwb_bwdw_tile<V, NB, J + 1>...};
}

template <class V, int NC, int... B>
constexpr std::array<std::array<void (*)(const PwbBwdwArgs&), NC>, sizeof...(B)> pwb_bwdw_table(
    std::integer_sequence<int, B...>) {
  return {pwb_bwdw_row<V, B + 1>(std::make_integer_sequence<int, NC>())...};
}

template <class V, int NB, int NC>
void pwb_bwdw_simd(const PwbBwdwArgs& a) {
  static constexpr auto table = pwb_bwdw_table<V, NC>(std::make_integer_sequence<int, NB>());
  table[static_cast<std::size_t>(a.nb - 1)][static_cast<std::size_t>(a.cols - 1)](a);
}

}  // namespace
}  // namespace taihu::dnn::conv::kernels
