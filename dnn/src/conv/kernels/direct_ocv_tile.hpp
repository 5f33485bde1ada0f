// Width-generic first-layer forward tile of the direct convolution (the contract is
// direct_kernels.hpp's DirectOcvArgs with nb == 4: 32 output channels), instantiated
// per ISA with its vector traits V in that ISA's translation unit. The 32 channels are
// 32 / V::W weight vectors per tap; NP output pixels (NP / 3 of the contract's 3-pixel
// tiles, consecutive, so their scratch slots are too) are broadcast from the input, so
// per tap: 32 / W weight loads and NP broadcasts for NP * 32 / W FMAs.
//   AVX-512: 2 weight vectors x 6 pixels = 12 accumulators (2 zmm loads + 6 broadcasts
//   per 12 FMAs of 16 lanes: FMA-bound; AVX2's 4 x 3 tile does 12 FMAs of 8 lanes), or
//   x 12 pixels = 24 accumulators for wide kernels.
// A vector of 16 lanes is two 8-channel blocks of the scratch (V::load_blocks). AVX2
// keeps its inline-assembly 4 x 3 tile (direct_kernels_avx2.cpp); only AVX-512
// instantiates this one.
// Kernel rows of KW taps (> 0: dilation 1) are unrolled; a pixel group runs the union of
// its pixels' row spans (rows outside a pixel's span read zero padding, as the
// contract's 4 x 3 tile does on its own union). A group whose pixels lie in one row at
// stride 1, 2 or 4 addresses its broadcasts from one base register (SW): ResNet-50 /
// AlexNet conv1 forward 100 -> 104-106 GFLOP/s on a Zen 4 core (the per-pixel pointers
// had spilled); other groups that cross a row keep the per-pixel pointers. Such a group at
// stride 1 and KW <= 5 that touches a row's left or right edge (DirectOcvArgs::col_span)
// runs a variant without the taps that read padding (CIFAR-10 conv1: +1-1.5%); a
// 6-pixel stride-1 group that crosses one row end (KW 3 or 5, "same" padding) runs
// one with a base register per row part that skips both ends' padded taps (CIFAR-10
// conv1 forward +3.5-4.5% at 1 and 2 threads on a Zen 4 core). FM 2
// (AVX-512): each FMA broadcasts its input from memory (ocv_fma2_bcast).
#pragma once
#include <algorithm>
#include <cstdint>

#include "conv/direct_kernels.hpp"

namespace taihu::dnn::conv::kernels {
namespace {

// a0 += w0 * x[0], a1 += w1 * x[0]. FM 2 on 512-bit registers where the compiler
// targets AVX-512 (not SIMDe's emulation): each FMA broadcasts x[0] from memory
// ({1to16}), as oneDNN's kernel does; GCC otherwise keeps one vbroadcastss per pixel
// in a register and shuffles accumulators between registers around the FMAs.
template <class V, int FM>
inline void ocv_fma2_bcast(const float* x, typename V::Reg w0, typename V::Reg w1, typename V::Reg& a0,
                           typename V::Reg& a1) {
#if defined(__AVX512F__)
  if constexpr (FM == 2 && sizeof(typename V::Reg) == 64) {
    asm("vfmadd231ps %[x]%{1to16%}, %[w0], %[a0]\n\tvfmadd231ps %[x]%{1to16%}, %[w1], %[a1]"
        : [a0] "+v"(a0), [a1] "+v"(a1)
        : [w0] "v"(w0), [w1] "v"(w1), [x] "m"(*x));
    return;
  }
#endif
  const typename V::Reg b = V::bcast(x);
  a0 = V::fma(w0, b, a0);
  a1 = V::fma(w1, b, a1);
}



// V::load_blocks / store_blocks; on 512-bit registers (where the compiler targets
// AVX-512, not SIMDe's emulation) as two 256-bit halves instead of two masked 512-bit
// accesses, which a Zen 4 core runs slower (first-layer forward +1.5-2.5% on CIFAR-10,
// ResNet-50 and AlexNet conv1). Inline assembly: GCC 12 flags the 512 <-> 256-bit
// cast and insert intrinsics' undefined lanes as (maybe-)uninitialized.
template <class V>
inline typename V::Reg ocv_load_blocks(const float* lo, const float* hi) {
#if defined(__AVX512F__)
  if constexpr (sizeof(typename V::Reg) == 64) {
    typename V::Reg r;
    asm("vmovups %[lo], %t[r]\n\tvinsertf64x4 $1, %[hi], %[r], %[r]"
        : [r] "=v"(r)
        : [lo] "m"(*reinterpret_cast<const float(*)[8]>(lo)), [hi] "m"(*reinterpret_cast<const float(*)[8]>(hi)));
    return r;
  }
#endif
  return V::load_blocks(lo, hi);
}
template <class V>
inline void ocv_store_blocks(float* lo, float* hi, typename V::Reg v) {
#if defined(__AVX512F__)
  if constexpr (sizeof(typename V::Reg) == 64) {
    asm("vmovups %t[v], %[lo]\n\tvextractf64x4 $1, %[v], %[hi]"
        : [lo] "=m"(*reinterpret_cast<float(*)[8]>(lo)), [hi] "=m"(*reinterpret_cast<float(*)[8]>(hi))
        : [v] "v"(v));
    return;
  }
#endif
  V::store_blocks(lo, hi, v);
}

// SW > 0: the group's NP pixels lie in one row, SW floats apart (x_off[p] == x_off[0] +
// p * SW): every broadcast is then one base register plus a constant, instead of NP
// pointers (12 of x86's 16 general registers, which spilled around the FMAs).
// (Not inlined: the four variants in one function spilled accumulators.)
// S > 0 (SW 1): the group crosses a row after its first S pixels; each part is
// consecutive in its row and has its own base register, and L / R are then the left
// padding of pixel S (the next row's first) and the right padding of pixel S - 1.
template <class V, int NP, int KW, int SW = 0, int FM = 0, int L = 0, int R = 0, int S = 0>
__attribute__((noinline)) void ocv32_group(const DirectOcvArgs& a, const std::int64_t* x_off, const std::int16_t* span,
                                           float* out) {
  using Reg = typename V::Reg;
  constexpr int W = V::W, NWV = 32 / W, BPV = W / 8, CH = 32;
  std::int64_t bs = a.acc_bstride;
  Reg acc[NWV][NP];
#pragma GCC unroll 4
  for (int q = 0; q < NWV; ++q)
#pragma GCC unroll 12
    for (int p = 0; p < NP; ++p) {
      float* lo = out + q * BPV * bs + p * 8;
      acc[q][p] = a.accumulate  ? ocv_load_blocks<V>(lo, lo + (BPV - 1) * bs)
                  : a.bias_init ? V::loadu(a.bias_init + q * W)
                                : V::zero();
    }
  const std::int64_t taps = a.taps;
  std::int64_t t_begin = 0, t_end = taps;
  if (KW > 0 && span) {
    std::int16_t lo = span[0], hi = span[1];
    for (int p = 1; p < NP; ++p) {
      lo = std::min(lo, span[2 * p]);
      hi = std::max(hi, span[2 * p + 1]);
    }
    t_begin = KW * lo;
    t_end = KW * hi;
  }
  auto tap = [&](const float* const* px, const float* wt, int j) __attribute__((always_inline)) {
    Reg wv[NWV];
#pragma GCC unroll 4
    for (int q = 0; q < NWV; ++q) wv[q] = V::loadu(wt + q * W);
#pragma GCC unroll 12
    for (int p = 0; p < NP; ++p) {
      const Reg xb = V::bcast(px[p] + j);
#pragma GCC unroll 4
      for (int q = 0; q < NWV; ++q) acc[q][p] = V::fma(wv[q], xb, acc[q][p]);
    }
  };
  for (std::int64_t c = 0; c < a.channels; ++c) {
    const float* xc = a.x + c * a.chan_stride;
    const float* wc = a.w + c * taps * CH;
    if constexpr (SW > 0) {
      static_assert(KW > 0);
      for (std::int64_t t = t_begin; t < t_end; t += KW) {
        const float* x0 = xc + a.tap_off[t] + x_off[0];
        const float* x1 = S > 0 ? xc + a.tap_off[t] + x_off[S] : x0;
        const float* wt = wc + t * CH;
#pragma GCC unroll 16
        for (int j = 0; j < KW; ++j) {
          // Pixel p's taps in the left / right padding (L, R > 0: an edge group, or the
          // two row ends a crossing group (S > 0) holds).
          auto padded = [](int pp, int jj) constexpr {
            if constexpr (S > 0)
              return pp < S ? (S - 1 - pp) * SW + (KW - 1 - jj) < R : (pp - S) * SW + jj < L;
            return pp * SW + jj < L || (NP - 1 - pp) * SW + (KW - 1 - jj) < R;
          };
          bool any = false;
          for (int p = 0; p < NP; ++p) any = any || !padded(p, j);
          if (!any) continue;
          Reg wv[NWV];
#pragma GCC unroll 4
          for (int q = 0; q < NWV; ++q) wv[q] = V::loadu(wt + j * CH + q * W);
          // (Opaque per tap: with SW | j the same input value recurs over taps, and the
          // compiler kept those broadcasts live across taps, spilling them.)
          const float* xj = x0 + j;
          asm("" : "+r"(xj));
          const float* xk = x1 + j;
          if constexpr (S > 0) asm("" : "+r"(xk));
#pragma GCC unroll 12
          for (int p = 0; p < NP; ++p) {
            if (padded(p, j)) continue;
            const float* xp = S > 0 && p >= S ? xk + (p - S) * SW : xj + p * SW;
            if constexpr (FM > 0 && NWV == 2) {
              ocv_fma2_bcast<V, FM>(xp, wv[0], wv[1], acc[0][p], acc[1][p]);
            } else {
              const Reg xb = V::bcast(xp);
#pragma GCC unroll 4
              for (int q = 0; q < NWV; ++q) acc[q][p] = V::fma(wv[q], xb, acc[q][p]);
            }
          }
        }
      }
    } else if constexpr (KW > 0) {
      for (std::int64_t t = t_begin; t < t_end; t += KW) {
        const float* px[NP];
#pragma GCC unroll 12
        for (int p = 0; p < NP; ++p) px[p] = xc + a.tap_off[t] + x_off[p];
        const float* wt = wc + t * CH;
#pragma GCC unroll 16
        for (int j = 0; j < KW; ++j) tap(px, wt + j * CH, j);
      }
    } else {
      for (std::int64_t t = 0; t < taps; ++t) {
        const float* px[NP];
#pragma GCC unroll 12
        for (int p = 0; p < NP; ++p) px[p] = xc + a.tap_off[t] + x_off[p];
        tap(px, wc + t * CH, 0);
      }
    }
  }
  // The store addresses from here on, not kept from the loads above (24 pointers held
  // over the loop spilled general registers into vector ones, and those spilled
  // accumulators).
  asm("" : "+r"(out), "+r"(bs));
#pragma GCC unroll 4
  for (int q = 0; q < NWV; ++q)
#pragma GCC unroll 12
    for (int p = 0; p < NP; ++p) {
      float* lo = out + q * BPV * bs + p * 8;
      ocv_store_blocks<V>(lo, lo + (BPV - 1) * bs, acc[q][p]);
    }
}

// DirectOcvArgs::y_prefetch's lines (the NCHW output the next store writes), pulled
// into L2 a few per group, so the store's write-allocate misses overlap the FMAs. Not
// for an output written in place (y_prefetch == acc): a hint, skipped there.
class OcvOutputPrefetch {
 public:
  OcvOutputPrefetch(const DirectOcvArgs& a, int groups)
      : y_(a.y_prefetch != a.acc ? a.y_prefetch : nullptr), kstride_(a.y_kstride), pixels_(a.y_pixels),
        rows_(y_ ? a.y_rows : 0) {
    std::int64_t total = 0;
    for (std::int64_t r = 0; r < rows_; ++r) total += lines_of_row(r);
    per_group_ = groups > 0 ? (total + groups - 1) / groups : 0;
    left_ = total;
    if (rows_ > 0) row_lines_ = lines_of_row(0);
  }
  void step() {
    for (std::int64_t j = 0; j < per_group_ && left_ > 0; ++j, --left_) {
      const auto first = reinterpret_cast<std::uintptr_t>(y_ + row_ * kstride_) & ~std::uintptr_t{63};
      _mm_prefetch(reinterpret_cast<const char*>(first + 64 * static_cast<std::uintptr_t>(line_)), _MM_HINT_T1);
      if (++line_ == row_lines_) {
        line_ = 0;
        if (++row_ < rows_) row_lines_ = lines_of_row(row_);
      }
    }
  }

 private:
  // Exactly the lines row r's pixels touch (a line past them may be another thread's).
  std::int64_t lines_of_row(std::int64_t r) const {
    const auto begin = reinterpret_cast<std::uintptr_t>(y_ + r * kstride_);
    const auto end = reinterpret_cast<std::uintptr_t>(y_ + r * kstride_ + pixels_);
    return static_cast<std::int64_t>((end - 1) / 64 - begin / 64 + 1);
  }

  const float* y_;
  std::int64_t kstride_, pixels_, rows_, per_group_ = 0, left_ = 0, row_ = 0, line_ = 0, row_lines_ = 0;
};

// A stride-1 group in one row whose first pixel's window starts l columns left of the
// image (its last's ends r right of it): the variant that skips those taps (they would
// multiply zero padding). Up to 3 columns on one side; others compute them.
template <class V, int NP, int KW, int FM>
void ocv32_edge_group(const DirectOcvArgs& a, const std::int64_t* xo, const std::int16_t* span, float* out, int l,
                      int r) {
  if (r == 0) {
    if (l == 1) return ocv32_group<V, NP, KW, 1, FM, 1, 0>(a, xo, span, out);
    if (l == 2) return ocv32_group<V, NP, KW, 1, FM, 2, 0>(a, xo, span, out);
    if (l == 3) return ocv32_group<V, NP, KW, 1, FM, 3, 0>(a, xo, span, out);
  } else if (l == 0) {
    if (r == 1) return ocv32_group<V, NP, KW, 1, FM, 0, 1>(a, xo, span, out);
    if (r == 2) return ocv32_group<V, NP, KW, 1, FM, 0, 2>(a, xo, span, out);
    if (r == 3) return ocv32_group<V, NP, KW, 1, FM, 0, 3>(a, xo, span, out);
  }
  ocv32_group<V, NP, KW, 1, FM>(a, xo, span, out);
}

// A stride-1 group that crosses a row after its first s pixels (1 <= s < NP), at a
// kernel width whose "same" padding P = (KW - 1) / 2 lies on both sides of the break
// (checked by the caller): the variant with one base register per row part that skips
// the P padded columns at both row ends. CIFAR-10 conv1 (32-pixel rows, 6-pixel groups):
// 4 of a 192-pixel chunk's 32 groups cross a row, and ran the per-pixel-pointer form
// with every padded tap.
template <class V, int NP, int KW, int FM>
void ocv32_cross_group(const DirectOcvArgs& a, const std::int64_t* xo, const std::int16_t* span,
                       float* out, int s) {
  constexpr int P = (KW - 1) / 2;
  static_assert(NP == 6);
  switch (s) {
    case 1: return ocv32_group<V, NP, KW, 1, FM, P, P, 1>(a, xo, span, out);
    case 2: return ocv32_group<V, NP, KW, 1, FM, P, P, 2>(a, xo, span, out);
    case 3: return ocv32_group<V, NP, KW, 1, FM, P, P, 3>(a, xo, span, out);
    case 4: return ocv32_group<V, NP, KW, 1, FM, P, P, 4>(a, xo, span, out);
    default: return ocv32_group<V, NP, KW, 1, FM, P, P, 5>(a, xo, span, out);
  }
}

// Every whole group of NP / 3 tiles of the call; returns the tiles done (the caller
// runs the rest).
template <class V, int NP, int KW, int FM = 0>
int ocv32_groups(const DirectOcvArgs& a) {
  constexpr int TG = NP / 3;
  const int groups = a.tiles / TG;
  OcvOutputPrefetch pf(a, groups);
  for (int g = 0; g < groups; ++g) {
    pf.step();
    const std::int64_t p0 = static_cast<std::int64_t>(g) * NP;
    const std::int64_t* xo = a.x_off + p0;
    const std::int16_t* span = a.row_span ? a.row_span + 2 * p0 : nullptr;
    float* out = a.acc + p0 * 8;
    if constexpr (KW > 0) {
      // One row at the first layers' strides (CIFAR-10 1, ResNet-50 2, AlexNet 4)?
      const std::int64_t sw = xo[1] - xo[0];
      bool row = sw == 1 || sw == 2 || sw == 4;
      for (int p = 2; p < NP && row; ++p) row = xo[p] - xo[p - 1] == sw;
      if (row) {
        if constexpr (KW <= 5) {
          if (sw == 1 && a.col_span) {  // an edge group skips its taps in the padding
            const int l = a.col_span[2 * p0], r = KW - a.col_span[2 * (p0 + NP - 1) + 1];
            if (l > 0 || r > 0) {
              ocv32_edge_group<V, NP, KW, FM>(a, xo, span, out, l, r);
              continue;
            }
          }
        }
        if (sw == 1) ocv32_group<V, NP, KW, 1, FM>(a, xo, span, out);
        else if (sw == 2) ocv32_group<V, NP, KW, 2, FM>(a, xo, span, out);
        else ocv32_group<V, NP, KW, 4, FM>(a, xo, span, out);
        continue;
      }
      if constexpr (NP == 6 && KW <= 5 && KW >= 3) {
        // Two stride-1 parts, the break a row change: pixel s - 1 ends a row (at least
        // P padded columns on its right) and pixel s starts the next (P on its left).
        if (a.col_span) {
          int s = 0, breaks = 0;
          for (int p = 1; p < NP; ++p)
            if (xo[p] - xo[p - 1] != 1) s = p, ++breaks;
          constexpr int P = (KW - 1) / 2;
          if (breaks == 1 && a.col_span[2 * (p0 + s)] >= P &&
              KW - a.col_span[2 * (p0 + s - 1) + 1] >= P) {
            ocv32_cross_group<V, NP, KW, FM>(a, xo, span, out, s);
            continue;
          }
        }
      }
    }
    ocv32_group<V, NP, KW>(a, xo, span, out);
  }
  return groups * TG;
}

// Unrolled kernel-row widths (the first layers' kernel widths), else per tap.
template <class V, int NP, int FM = 0>
int ocv32(const DirectOcvArgs& a) {
  switch (a.kw_run) {
    case 3: return ocv32_groups<V, NP, 3, FM>(a);
    case 5: return ocv32_groups<V, NP, 5, FM>(a);
    case 7: return ocv32_groups<V, NP, 7, FM>(a);
    case 11: return ocv32_groups<V, NP, 11, FM>(a);
    default: return a.row_span ? 0 : ocv32_groups<V, NP, 0, FM>(a);
  }
}

}  // namespace
}  // namespace taihu::dnn::conv::kernels
