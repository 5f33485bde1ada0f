// The vector loops of the pooling kernels (pool_kernels.hpp), written once over a
// vector trait V: pool_kernels_avx2.cpp (8 windows a step), pool_kernels_avx512.cpp
// (16) and, for the stride-2 rows, the generic table's VecSse (4, pool_sse.hpp). The
// rest of a 2x2 row runs the SSE2 steps and single windows of pool_sse.hpp. Internal
// linkage, as that header: each ISA's translation unit compiles its own copy.
// V's contract (W = V::kWindows, windows pw .. pw + W - 1 of one input row):
//   F, I: a float and an int32 vector of W lanes; set1f(v), set1(i), load/store,
//   load_i/store_i; columns(at): at + 0, 2, ..., 2W - 2;
//   split(row, even, odd): the even and the odd columns of the row's 2W inputs;
//   evens(row): the even columns alone;
//   take(v, idx, acc, arg): acc = v and arg = idx in the lanes where v > acc (false for
//   NaN, as the generic `>`); take_value(v, acc): the same without arg; add, div;
//   zero_plus(g): 0 + g (dy's -0.0 becomes +0, as the generic zero-fill-then-add);
//   store_pairs(out, g, arg, i0): out[2k] = arg == i0_k ? g_k : +0, out[2k + 1] =
//   arg == i0_k + 1 ? g_k : +0, for the 2W outputs.
// (VecSse has what the stride-2 rows use: no load_i, take_value, zero_plus, store_pairs.)
#pragma once
#include <algorithm>
#include <cstdint>

#include <limits>

#include "ops/pool_kernels.hpp"
#include "ops/pool_sse.hpp"

namespace taihu::dnn::ops::pool {
namespace {

// Planes narrower than 32 inputs (LeNet's 24 and 8) run the generic kernels: measured
// 10-30% faster there than the SSE2 steps reached from the AVX2 kernel.
constexpr index_t kWideMinWidth = 32;

template <class V, bool MASK>
void wide_forward_rows(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2, vec_end = w / 2 / V::kWindows * V::kWindows;
  for (index_t ph = 0; ph < oh; ++ph) {
    const index_t rows = std::min<index_t>(2, h - 2 * ph);
    float* yr = y + ph * ow;
    std::int32_t* mr = MASK ? m + ph * ow : nullptr;
    for (index_t pw = 0; pw < vec_end; pw += V::kWindows) {
      typename V::F acc = V::set1f(std::numeric_limits<float>::lowest());
      typename V::I arg = V::set1(-1);
      for (index_t dh = 0; dh < rows; ++dh) {
        const float* row = x + (2 * ph + dh) * w + 2 * pw;
        const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
        typename V::F even, odd;
        V::split(row, even, odd);
        if constexpr (MASK) {
          V::take(even, V::columns(at), acc, arg);
          V::take(odd, V::columns(at + 1), acc, arg);
        } else {
          V::take_value(even, acc);
          V::take_value(odd, acc);
        }
      }
      V::store(yr + pw, acc);
      if constexpr (MASK) V::store_i(mr + pw, arg);
    }
    forward_rest<MASK>(h, w, x, ph, vec_end, yr, mr);
  }
}

template <class V>
void wide_forward_plane(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  if (w < kWideMinWidth) {
    pool_kernels_generic().max2x2_forward(h, w, x, y, m);
    return;
  }
  if (m)
    wide_forward_rows<V, true>(h, w, x, y, m);
  else
    wide_forward_rows<V, false>(h, w, x, y, m);
}

template <class V>
void wide_backward_plane(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx) {
  if (w < kWideMinWidth) {
    pool_kernels_generic().max2x2_backward(h, w, dy, m, dx);
    return;
  }
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2, vec_end = w / 2 / V::kWindows * V::kWindows;
  for (index_t ph = 0; ph < oh; ++ph) {
    const index_t rows = std::min<index_t>(2, h - 2 * ph);
    const float* dyr = dy + ph * ow;
    const std::int32_t* mr = m + ph * ow;
    for (index_t pw = 0; pw < vec_end; pw += V::kWindows) {
      const typename V::F g = V::zero_plus(V::load(dyr + pw));
      const typename V::I arg = V::load_i(mr + pw);
      for (index_t dh = 0; dh < rows; ++dh) {
        const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
        V::store_pairs(dx + (2 * ph + dh) * w + 2 * pw, g, arg, V::columns(at));
      }
    }
    backward_rest(h, w, dyr, mr, ph, vec_end, dx);
  }
}

// One output row of a stride-2, kernel-width-KW (2 or 3), horizontally unpadded pool,
// MAX with its mask or AVE, W outputs a step: the taps in the generic loops' order, so
// the values and masks are theirs (pool_kernels.hpp). A group that would read past the
// row reads a copy of the row end padded with the lowest float (never wins, strict >)
// or 0 (adds nothing).
template <class V, int KW, bool MAX>
void wide_row_s2(const PoolingShape& s, const float* xp, index_t ph, index_t ow, float* yr, std::int32_t* mr,
                 const float* col_size) {
  constexpr index_t W = V::kWindows, kSpan = 2 * W + 2;  // columns a group's loads may touch
  const index_t hs_raw = ph * s.stride_h - s.pad_h;
  const index_t he_pad = std::min(hs_raw + s.kernel_h, s.height + s.pad_h);
  const index_t hs = std::max<index_t>(hs_raw, 0), he = std::min(he_pad, s.height);
  const float init = MAX ? std::numeric_limits<float>::lowest() : 0.0f;
  for (index_t pw0 = 0; pw0 < ow; pw0 += W) {
    const index_t xb = 2 * pw0;
    const bool inside = xb + kSpan <= s.width && pw0 + W <= ow;
    typename V::F acc = V::set1f(init);
    typename V::I arg = V::set1(-1);
    alignas(64) float tail[kSpan];
    for (index_t h = hs; h < he; ++h) {
      const float* row = xp + h * s.width + xb;
      if (!inside) {
        const index_t n = std::min(kSpan, s.width - xb);
        for (index_t i = 0; i < kSpan; ++i) tail[i] = i < n ? row[i] : init;
        row = tail;
      }
      typename V::F even, odd;
      V::split(row, even, odd);
      if constexpr (MAX) {
        const auto at = static_cast<std::int32_t>(h * s.width + xb);
        V::take(even, V::columns(at), acc, arg);
        V::take(odd, V::columns(at + 1), acc, arg);
        if constexpr (KW == 3) V::take(V::evens(row + 2), V::columns(at + 2), acc, arg);
      } else {
        acc = V::add(V::add(acc, even), odd);
        if constexpr (KW == 3) acc = V::add(acc, V::evens(row + 2));
      }
    }
    const index_t valid = std::min(W, ow - pw0);
    if constexpr (!MAX) {
      const auto rows = static_cast<float>(he_pad - hs_raw);
      alignas(64) float den[W];
      for (index_t i = 0; i < W; ++i) den[i] = i < valid ? rows * col_size[pw0 + i] : 1.0f;
      acc = V::div(acc, V::load(den));
    }
    if (valid == W) {
      V::store(yr + pw0, acc);
      if constexpr (MAX) V::store_i(mr + pw0, arg);
    } else {
      alignas(64) float yv[W];
      alignas(64) std::int32_t mv[W];
      V::store(yv, acc);
      V::store_i(mv, arg);
      for (index_t i = 0; i < valid; ++i) {
        yr[pw0 + i] = yv[i];
        if constexpr (MAX) mr[pw0 + i] = mv[i];
      }
    }
  }
}

// PoolKernels::row_s2 for trait V.
template <class V>
index_t wide_row_s2_any(const PoolingShape& s, const float* xp, index_t ph, index_t ow, float* yr, std::int32_t* mr,
                        const float* col_size) {
  if (s.stride_w != 2 || s.pad_w != 0 || (s.kernel_w != 2 && s.kernel_w != 3)) return 0;
  const bool is_max = s.method == PoolMethod::max;
  if (is_max && mr == nullptr) return 0;  // MAX without a mask: the generic loops
  if (s.kernel_w == 2) {
    if (is_max) wide_row_s2<V, 2, true>(s, xp, ph, ow, yr, mr, col_size);
    else wide_row_s2<V, 2, false>(s, xp, ph, ow, yr, mr, col_size);
  } else {
    if (is_max) wide_row_s2<V, 3, true>(s, xp, ph, ow, yr, mr, col_size);
    else wide_row_s2<V, 3, false>(s, xp, ph, ow, yr, mr, col_size);
  }
  return ow;
}

}  // namespace
}  // namespace taihu::dnn::ops::pool
