// The wide-vector loops of the 2x2 stride-2 MAX pooling kernels (pool_max2x2.hpp),
// written once over a vector trait V: pool_max2x2_avx2.cpp (8 windows a step) and
// pool_max2x2_avx512.cpp (16) supply V; the rest of a row runs the SSE2 steps and single
// windows of pool_max2x2_sse.hpp. Internal linkage, as that header: each ISA's
// translation unit compiles its own copy.
// V's contract (W = V::kWindows, windows pw .. pw + W - 1 of one input row):
//   F, I: a float and an int32 vector of W lanes; lowest(), set1(i), load/store,
//   load_i/store_i; columns(at): at + 0, 2, ..., 2W - 2;
//   split(row, even, odd): the even and the odd columns of the row's 2W inputs;
//   take(v, idx, acc, arg): acc = v and arg = idx in the lanes where v > acc (false for
//   NaN, as the generic `>`); take_value(v, acc): the same without arg;
//   zero_plus(g): 0 + g (dy's -0.0 becomes +0, as the generic zero-fill-then-add);
//   store_pairs(out, g, arg, i0): out[2k] = arg == i0_k ? g_k : +0, out[2k + 1] =
//   arg == i0_k + 1 ? g_k : +0, for the 2W outputs.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ops/pool_max2x2.hpp"
#include "ops/pool_max2x2_sse.hpp"

namespace taihu::dnn::ops::pool2x2 {
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
      typename V::F acc = V::lowest();
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
    pool_max2x2_generic().forward(h, w, x, y, m);
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
    pool_max2x2_generic().backward(h, w, dy, m, dx);
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

}  // namespace
}  // namespace taihu::dnn::ops::pool2x2
