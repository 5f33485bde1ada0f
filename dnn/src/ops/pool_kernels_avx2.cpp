// AVX2 pooling kernels (pool_kernels.hpp): the loops of pool_wide.hpp with eight
// windows per step, the even and odd columns of 16 inputs split by shuffles (forward)
// or interleaved back (2x2 backward).
#include <immintrin.h>

#include "ops/pool_kernels.hpp"
#include "ops/pool_lanes.hpp"
#include "ops/pool_wide.hpp"

namespace taihu::dnn::ops {

namespace {

struct VecAvx2 {
  static constexpr index_t kWindows = 8;
  using F = __m256;
  using I = __m256i;
  static F set1f(float v) { return _mm256_set1_ps(v); }
  static I set1(std::int32_t i) { return _mm256_set1_epi32(i); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static I load_i(const std::int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store_i(std::int32_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static I columns(std::int32_t at) {
    return _mm256_add_epi32(_mm256_set1_epi32(at), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
  }
  static void split(const float* row, F& even, F& odd) {
    const F a0 = _mm256_loadu_ps(row), a1 = _mm256_loadu_ps(row + 8);
    // Within 128-bit lanes, then the 64-bit quarters back in order.
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a0, a1, 0x88)), 0xD8));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a0, a1, 0xDD)), 0xD8));
  }
  static F evens(const float* row) {
    const F s = _mm256_shuffle_ps(_mm256_loadu_ps(row), _mm256_loadu_ps(row + 8), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8));
  }
  static void take(F v, I idx, F& acc, I& arg) {
    const F wins = _mm256_cmp_ps(v, acc, _CMP_GT_OQ);
    acc = _mm256_blendv_ps(acc, v, wins);
    arg = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(arg), _mm256_castsi256_ps(idx), wins));
  }
  static void take_value(F v, F& acc) { acc = _mm256_blendv_ps(acc, v, _mm256_cmp_ps(v, acc, _CMP_GT_OQ)); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F zero_plus(F g) { return _mm256_add_ps(_mm256_setzero_ps(), g); }
  static void store_pairs(float* out, F g, I arg, I i0) {
    const I i1 = _mm256_add_epi32(i0, _mm256_set1_epi32(1));
    const F v0 = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(arg, i0)), g);
    const F v1 = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(arg, i1)), g);
    const F lo = _mm256_unpacklo_ps(v0, v1), hi = _mm256_unpackhi_ps(v0, v1);
    _mm256_storeu_ps(out, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
};

}  // namespace

const PoolKernels& pool_kernels_avx2() {
  static const PoolKernels k{&pool::wide_forward_plane<VecAvx2>, &pool::wide_backward_plane<VecAvx2>,
                             &pool::wide_row_s2_any<VecAvx2>,
                             &pool::ave_lanes_forward<pool::Lanes8Avx2>,
                             &pool::ave_lanes_backward<pool::Lanes8Avx2>};
  return k;
}

}  // namespace taihu::dnn::ops
