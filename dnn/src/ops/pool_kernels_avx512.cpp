// AVX-512 pooling kernels (pool_kernels.hpp): the loops of pool_wide.hpp with sixteen
// windows per step, the even and odd columns of 32 inputs gathered by two-source
// permutes, comparisons into mask registers.
#include <immintrin.h>

#include "ops/pool_kernels.hpp"
#include "ops/pool_lanes.hpp"
#include "ops/pool_wide.hpp"

namespace taihu::dnn::ops {

namespace {

struct VecAvx512 {
  static constexpr index_t kWindows = 16;
  using F = __m512;
  using I = __m512i;
  static I even_index() { return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); }
  static F set1f(float v) { return _mm512_set1_ps(v); }
  static I set1(std::int32_t i) { return _mm512_set1_epi32(i); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static I load_i(const std::int32_t* p) { return _mm512_loadu_si512(p); }
  static void store_i(std::int32_t* p, I v) { _mm512_storeu_si512(p, v); }
  static I columns(std::int32_t at) { return _mm512_add_epi32(_mm512_set1_epi32(at), even_index()); }
  static void split(const float* row, F& even, F& odd) {
    const F a0 = _mm512_loadu_ps(row), a1 = _mm512_loadu_ps(row + 16);
    even = _mm512_permutex2var_ps(a0, even_index(), a1);
    odd = _mm512_permutex2var_ps(a0, _mm512_add_epi32(even_index(), _mm512_set1_epi32(1)), a1);
  }
  static F evens(const float* row) {
    return _mm512_permutex2var_ps(_mm512_loadu_ps(row), even_index(), _mm512_loadu_ps(row + 16));
  }
  static void take(F v, I idx, F& acc, I& arg) {
    const __mmask16 wins = _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ);
    acc = _mm512_mask_mov_ps(acc, wins, v);
    arg = _mm512_mask_mov_epi32(arg, wins, idx);
  }
  static void take_value(F v, F& acc) { acc = _mm512_mask_mov_ps(acc, _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ), v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F zero_plus(F g) { return _mm512_add_ps(_mm512_setzero_ps(), g); }
  static void store_pairs(float* out, F g, I arg, I i0) {
    const I i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(1));
    const F v0 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(arg, i0), g);
    const F v1 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(arg, i1), g);
    // out = v0_0 v1_0 v0_1 v1_1 ...: lanes 0-7 of each, then lanes 8-15.
    const I lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const I hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    _mm512_storeu_ps(out, _mm512_permutex2var_ps(v0, lo, v1));
    _mm512_storeu_ps(out + 16, _mm512_permutex2var_ps(v0, hi, v1));
  }
};

}  // namespace

const PoolKernels& pool_kernels_avx512() {
  static const PoolKernels k{&pool::wide_forward_plane<VecAvx512>, &pool::wide_backward_plane<VecAvx512>,
                             &pool::wide_row_s2_any<VecAvx512>,
                             &pool::ave_lanes_forward<pool::Lanes8Avx2>,
                             &pool::ave_lanes_backward<pool::Lanes8Avx2>};
  return k;
}

}  // namespace taihu::dnn::ops
