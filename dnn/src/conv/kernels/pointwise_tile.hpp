// Width-generic 1x1-convolution register tile (the contract is pointwise_kernels.hpp's
// PwFwdArgs), instantiated per ISA with its vector traits V (kernels/<isa>/vec_<isa>.hpp)
// in that ISA's translation unit. The tile: MT consecutive 4-channel output blocks
// (MT * 4 rows; the weights of block t+1 lie w_tile_stride on) x NV vectors of V::W
// pixels, reduced over the block's input channels: per channel NV input vectors and
// MT * 4 weight broadcasts feed MT * 4 * NV FMAs.
//   AVX-512: MT 2, NV <= 2 (16 accumulators of 32 zmm), strips of 32 pixels.
//   AVX2 would be MT 1, NV <= 3 (12 of 16 ymm, strips of 24), but that instantiation
//   measured 8% slower than the hand-written pointwise_kernels_avx2.cpp, which stays.
// Everything is in an anonymous namespace: each ISA's TU compiles its own copy with
// its own flags, so the linker never hands an AVX-512 body to an AVX2 caller.
#pragma once
#include <cstdint>
#include <type_traits>

#include "conv/pointwise_kernels.hpp"

namespace taihu::dnn::conv::kernels {
namespace {

// Where the tiles' prefetches stand (carried from tile to tile).
struct PwPrefetchCursor {
  const float* at;
  std::int64_t left, stride;
  bool l2;
};

// One register tile (rows <= MT * 4 valid output channels) x NV vectors, reduced over
// `channels` input channels read at xp (channel stride `stride`), copied to cp (row
// length PX) when COPY. PX: the kernel set's strip width (lines prefetched per row).
template <class V, int MT, int NV, bool MASKED, bool COPY, int PX>
inline __attribute__((always_inline)) void pw_tile(const float* xp, std::int64_t stride, float* cp,
                                                   const float* wp, std::int64_t wstride, std::int64_t w_tile_stride,
                                                   std::int64_t channels, typename V::Mask mask, float* y,
                                                   std::int64_t y_kstride, int rows, const float* bias,
                                                   bool accumulate, bool relu, PwPrefetchCursor& pc) {
  using Reg = typename V::Reg;
  constexpr int W = V::W, MR = MT * kPwRows;
  Reg acc[MR][NV];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[m][v] = V::zero();
  const float* wq[MT];
#pragma GCC unroll 2
  for (int t = 0; t < MT; ++t) wq[t] = wp + t * w_tile_stride;
  const float* pf = pc.at;
  std::int64_t pf_left = pc.left;
  const std::int64_t pf_stride = pc.stride;
  const bool pf_l2 = pc.l2;
  for (std::int64_t c = 0; c < channels;) {
    // One prefetched row per 8 channels: spread out, so the few L1 miss buffers never
    // fill up and stall the FMAs.
    if (pf_left > 0) {
      if (pf_l2) {
        _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(pf + 16), _MM_HINT_T1);
      } else {
#pragma GCC unroll 4
        for (int l = 0; l < PX; l += 16) _mm_prefetch(reinterpret_cast<const char*>(pf + l), _MM_HINT_T0);
      }
      pf += pf_stride;
      --pf_left;
    }
    const std::int64_t end = c + 8 < channels ? c + 8 : channels;
    for (; c < end; ++c, xp += stride) {
      Reg xv[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        xv[v] = (MASKED && v == NV - 1) ? V::load_first(xp + W * v, mask) : V::loadu(xp + W * v);
      if constexpr (COPY) {  // (the masked load zero-fills the lanes past the strip)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) V::storeu(cp + W * v, xv[v]);
        cp += PX;
      }
#pragma GCC unroll 2
      for (int t = 0; t < MT; ++t) {
#pragma GCC unroll 4
        for (int m = 0; m < kPwRows; ++m) {
          const Reg wb = V::bcast(wq[t] + m);
#pragma GCC unroll 3
          for (int v = 0; v < NV; ++v) acc[t * kPwRows + m][v] = V::fma(wb, xv[v], acc[t * kPwRows + m][v]);
        }
        wq[t] += wstride;
      }
    }
  }
  pc.at = pf;
  pc.left = pf_left;
  // Fully unrolled (a runtime bound would keep acc in memory through the loop above).
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
    if (m >= rows) break;
    float* yr = y + m * y_kstride;
    const Reg b = V::set1(bias ? bias[m] : 0.0f);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const bool part = MASKED && v == NV - 1;
      Reg val = acc[m][v];
      if (accumulate) val = V::add(val, part ? V::load_first(yr + W * v, mask) : V::loadu(yr + W * v));
      if (bias) val = V::add(val, b);
      if (relu) val = V::max(V::zero(), val);  // (a NaN passes, as std::max(x, 0) lets it)
      if (part)
        V::store_first(yr + W * v, mask, val);
      else
        V::storeu(yr + W * v, val);
    }
  }
}

// `a.tiles` 4-channel blocks on the same pixels, MT at a time (a single one last when
// the count is odd); the first call copies the strip when asked.
template <class V, int MT, int NV, bool MASKED, int PX>
void pw_tiles(const PwFwdArgs& a) {
  constexpr int W = V::W;
  const typename V::Mask mask = V::first(MASKED ? a.pixels - W * (NV - 1) : W);
  PwPrefetchCursor pc{a.prefetch, a.prefetch_rows, a.prefetch_stride, a.prefetch_l2};
  const std::int64_t ytile = kPwRows * a.y_kstride;
  for (int t = 0; t < a.tiles;) {
    const int mt = (MT == 2 && t + 1 < a.tiles) ? 2 : 1;
    const int rows = t + mt == a.tiles ? (mt - 1) * kPwRows + a.rows : mt * kPwRows;
    float* y = a.y + t * ytile;
    const float* w = a.w + t * a.w_tile_stride;
    const float* bias = a.bias ? a.bias + t * kPwRows : nullptr;
    if (a.y_prefetch_ahead > 0)
      for (int m = 0; m < rows; ++m)
        for (int l = 0; l < PX; l += 16) __builtin_prefetch(y + m * a.y_kstride + a.y_prefetch_ahead + l, 1);
    const bool copy = a.x_copy && t == 0;
    const float* x = a.x_copy && t > 0 ? a.x_copy : a.x;
    const std::int64_t xs = a.x_copy && t > 0 ? PX : a.x_cstride;
    auto run = [&](auto mt_c, auto copy_c) __attribute__((always_inline)) {
      pw_tile<V, decltype(mt_c)::value, NV, MASKED, decltype(copy_c)::value, PX>(
          x, xs, a.x_copy, w, a.w_cstride, a.w_tile_stride, a.channels, mask, y, a.y_kstride, rows, bias,
          a.accumulate, a.relu, pc);
    };
    using One = std::integral_constant<int, 1>;
    using Two = std::integral_constant<int, MT>;
    if (mt == 2) {
      if (copy)
        run(Two{}, std::true_type{});
      else
        run(Two{}, std::false_type{});
    } else {
      if (copy)
        run(One{}, std::true_type{});
      else
        run(One{}, std::false_type{});
    }
    t += mt;
  }
}

// The kernel set's entry point: NVMAX vectors per strip (PX = NVMAX * V::W pixels).
template <class V, int MT, int NVMAX>
void pw_fwd_simd(const PwFwdArgs& a) {
  constexpr int W = V::W, PX = NVMAX * W;
  static_assert(NVMAX >= 1 && NVMAX <= 3, "1..3 vectors per strip");
  const int nv = (a.pixels + W - 1) / W;
  const bool masked = a.pixels % W != 0;
  switch (nv * 2 + (masked ? 1 : 0)) {
    case 2: pw_tiles<V, MT, 1, false, PX>(a); break;
    case 3: pw_tiles<V, MT, 1, true, PX>(a); break;
    case 4:
      if constexpr (NVMAX >= 2) pw_tiles<V, MT, 2, false, PX>(a);
      break;
    case 5:
      if constexpr (NVMAX >= 2) pw_tiles<V, MT, 2, true, PX>(a);
      break;
    case 6:
      if constexpr (NVMAX >= 3) pw_tiles<V, MT, 3, false, PX>(a);
      break;
    default:
      if constexpr (NVMAX >= 3) pw_tiles<V, MT, 3, true, PX>(a);
      break;
  }
}

}  // namespace
}  // namespace taihu::dnn::conv::kernels
