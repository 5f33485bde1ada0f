// Width-generic register tile of the weights-lanes direct convolution (the contract is
// weight_lanes_kernels.hpp's WlFwdArgs), instantiated per ISA with its vector traits V
// (kernels/<isa>/vec_<isa>.hpp): kWlBlock / V::W weight vectors x NR rows x NC columns of
// output pixels, input values broadcast. In an anonymous namespace: each ISA's TU
// compiles its own copy with its own flags.
#pragma once
#include <cstdint>
#include <utility>

#include "conv/weight_lanes_kernels.hpp"

namespace taihu::dnn::conv::kernels {
namespace {

template <class V, int NR, int NC>
inline __attribute__((always_inline)) void wl_fwd_tile(const WlFwdArgs& a) {
  using Reg = typename V::Reg;
  constexpr int W = V::W, KV = kWlBlock / W;
  Reg acc[KV][NR * NC];
#pragma GCC unroll 4
  for (int v = 0; v < KV; ++v)
#pragma GCC unroll 16
    for (int i = 0; i < NR * NC; ++i)
      acc[v][i] = a.accumulate
                      ? V::loadu(a.y + (i / NC) * a.y_rstride + (i % NC) * kWlBlock + v * W)
                  : a.bias ? V::loadu(a.bias + v * W)
                           : V::zero();
  const float* w = a.w;
  const float* xc = a.x;
  for (std::int64_t c = 0; c < a.channels; ++c, xc += a.x_cstride)
    for (int r = 0; r < a.kh; ++r) {
      const float* xr = xc + r * a.x_rstride;
      for (int s = 0; s < a.kw; ++s, w += kWlBlock) {
        Reg wv[KV];
#pragma GCC unroll 4
        for (int v = 0; v < KV; ++v) wv[v] = V::loadu(w + v * W);
#pragma GCC unroll 16
        for (int i = 0; i < NR * NC; ++i) {
          const Reg xb = V::bcast(xr + (i / NC) * a.x_rstride + (i % NC) + s);
#pragma GCC unroll 4
          for (int v = 0; v < KV; ++v) acc[v][i] = V::fma(wv[v], xb, acc[v][i]);
        }
      }
    }
#pragma GCC unroll 4
  for (int v = 0; v < KV; ++v)
#pragma GCC unroll 16
    for (int i = 0; i < NR * NC; ++i)
      V::storeu(a.y + (i / NC) * a.y_rstride + (i % NC) * kWlBlock + v * W, acc[v][i]);
}

template <class V, int NR, int... C>
inline void wl_fwd_cols(const WlFwdArgs& a, std::integer_sequence<int, C...>) {
  ((a.cols == C + 1 ? wl_fwd_tile<V, NR, C + 1>(a) : void()), ...);
}

// Dispatch on the tile's shape (rows 1..kWlRows, columns 1..kWlCols).
template <class V>
void wl_fwd_simd(const WlFwdArgs& a) {
  static_assert(kWlRows == 2, "wl_fwd_simd dispatches rows 1 and 2");
  if (a.rows == 2)
    wl_fwd_cols<V, 2>(a, std::make_integer_sequence<int, kWlCols>{});
  else
    wl_fwd_cols<V, 1>(a, std::make_integer_sequence<int, kWlCols>{});
}

}  // namespace
}  // namespace taihu::dnn::conv::kernels
