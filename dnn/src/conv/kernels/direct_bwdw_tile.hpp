// Width-generic backward-weights tile of the direct convolution (the contract is
// direct_kernels.hpp's DirectBwdwArgs: up to kDirectBwdwChannelsWide output channels x
// up to 6 weight columns, reduced over runs of pixels), instantiated per ISA with its
// vector traits V in that ISA's translation unit. The channels are NV vectors of dY^T;
// per pixel they are loaded once and each column's input broadcast feeds them all:
// NV loads and 6 broadcasts (folded into the FMAs) per 6 NV FMAs.
//   AVX-512: up to 64 channels, NV = 4 (24 accumulators): 10 loads per 24 FMAs,
//   FMA-bound (one vector, 16 channels, was 7 loads per 6 FMAs: load-bound at ~45% of
//   peak). With one vector the pixels alternate between two accumulator sets, so 2 x 6
//   FMA chains are in flight instead of 6 (FMA latency 4, two ports).
// Reads ceil(channels / W) * W floats of each dY^T row (the caller pads kpad so they
// exist). The result is added to dw through a small buffer (once per call).
#pragma once
#include <cstdint>

#include "conv/direct_kernels.hpp"

namespace taihu::dnn::conv::kernels {
namespace {

template <class V, int NV, int NT>
void direct_bwdw_simd_tile(const DirectBwdwArgs& a) {
  using Reg = typename V::Reg;
  constexpr int W = V::W, SETS = NV == 1 ? 2 : 1;
  Reg acc[SETS][NV][NT];
#pragma GCC unroll 2
  for (int s = 0; s < SETS; ++s)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
#pragma GCC unroll 6
      for (int j = 0; j < NT; ++j) acc[s][v][j] = V::zero();
  auto step = [&](int s, const float* dr, const float* const* xj, std::int64_t i) __attribute__((always_inline)) {
    Reg d[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) d[v] = V::loadu(dr + W * v);
#pragma GCC unroll 6
    for (int j = 0; j < NT; ++j) {
      const Reg xb = V::bcast(xj[j] + i);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[s][v][j] = V::fma(d[v], xb, acc[s][v][j]);
    }
  };
  for (std::int64_t img = 0; img < a.images; ++img)
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const float* dr = a.dyt + img * a.dyt_image_stride + r * a.dyt_row_stride;
      const float* xr = a.x + img * a.x_image_stride + r * a.x_row_stride;
      const float* xj[NT];
#pragma GCC unroll 6
      for (int j = 0; j < NT; ++j) xj[j] = xr + a.col_off[j];
      std::int64_t i = 0;
      if constexpr (SETS == 2) {
        for (; i + 2 <= a.run; i += 2, dr += 2 * a.kpad) {
          step(0, dr, xj, i);
          step(1, dr + a.kpad, xj, i + 1);
        }
      }
      for (; i < a.run; ++i, dr += a.kpad) step(0, dr, xj, i);
    }
  // dw[m][j] += the sums of channel m, column j (m < channels).
  alignas(64) float sums[NT][NV * W];
#pragma GCC unroll 6
  for (int j = 0; j < NT; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      Reg t = acc[0][v][j];
      if constexpr (SETS == 2) t = V::add(t, acc[1][v][j]);
      V::storeu(sums[j] + W * v, t);
    }
  for (int m = 0; m < a.channels; ++m) {
    float* dw = a.dw + m * a.dw_kstride;
#pragma GCC unroll 6
    for (int j = 0; j < NT; ++j) dw[j] += sums[j][m];
  }
}

template <class V, int NV>
void direct_bwdw_simd_cols(const DirectBwdwArgs& a) {
  switch (a.cols) {
    case 1: direct_bwdw_simd_tile<V, NV, 1>(a); break;
    case 2: direct_bwdw_simd_tile<V, NV, 2>(a); break;
    case 3: direct_bwdw_simd_tile<V, NV, 3>(a); break;
    case 4: direct_bwdw_simd_tile<V, NV, 4>(a); break;
    case 5: direct_bwdw_simd_tile<V, NV, 5>(a); break;
    default: direct_bwdw_simd_tile<V, NV, 6>(a); break;
  }
}

// The kernel set's entry point: one instantiation per vector and column count, up to
// kDirectBwdwChannelsWide channels (NV <= 4).
template <class V>
void direct_bwdw_simd(const DirectBwdwArgs& a) {
  switch ((a.channels + V::W - 1) / V::W) {
    case 1: direct_bwdw_simd_cols<V, 1>(a); break;
    case 2: direct_bwdw_simd_cols<V, 2>(a); break;
    case 3: direct_bwdw_simd_cols<V, 3>(a); break;
    default: direct_bwdw_simd_cols<V, 4>(a); break;
  }
}

}  // namespace
}  // namespace taihu::dnn::conv::kernels
