// AVX2 + FMA kernels: sgemm 16x6 and dgemm 8x6 register tiles (12 accumulators,
// 2 vector loads of A and 6 broadcasts of B per k step, as in BLIS's haswell kernels
// with the tile transposed for column-major C), the GEMV kernels, and the transposing
// packers for panels stored along k (a transposed A, a no-transpose B; pack_lines_simd.hpp).
#include <immintrin.h>

#include "kernels/pack_lines_simd.hpp"
#include "kernels/simd_kernels.hpp"

namespace taihu::gemm::kernels {
namespace {

struct Avx2F32 {
  using T = float;
  using Reg = __m256;
  static constexpr int W = 8;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const T* p) { return _mm256_load_ps(p); }
  static Reg loadu(const T* p) { return _mm256_loadu_ps(p); }
  static void storeu(T* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg bcast(const T* p) { return _mm256_broadcast_ss(p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static T hsum(Reg v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

struct Avx2F64 {
  using T = double;
  using Reg = __m256d;
  static constexpr int W = 4;
  static Reg zero() { return _mm256_setzero_pd(); }
  static Reg load(const T* p) { return _mm256_load_pd(p); }
  static Reg loadu(const T* p) { return _mm256_loadu_pd(p); }
  static void storeu(T* p, Reg v) { _mm256_storeu_pd(p, v); }
  static Reg bcast(const T* p) { return _mm256_broadcast_sd(p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_pd(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_pd(a, b); }
  static Reg add(Reg a, Reg b) { return _mm256_add_pd(a, b); }
  static T hsum(Reg v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

template <class T>
constexpr MicroKernel<T> with_packers(MicroKernel<T> uk, PackLinesFn<T> a_packer, PackLinesFn<T> b_packer) {
  uk.pack_a_transposed = a_packer;
  uk.pack_b_lines = b_packer;
  return uk;
}

}  // namespace

// A's 16 float rows by 8x8 blocks, 8 double rows by 4x4; B's 6 columns by 4x4 blocks at
// columns 0 and 2.
const KernelSet kAvx2Kernels = {
    with_packers(make_microkernel<Avx2F32, 16, 6>(), &pack_lines_blocked<float, 16, 8, transpose8x8_ps>,
                 &pack_lines_blocked<float, 6, 4, transpose4x4_ps>),
    with_packers(make_microkernel<Avx2F64, 8, 6>(), &pack_lines_blocked<double, 8, 4, transpose4x4_pd>,
                 &pack_lines_blocked<double, 6, 4, transpose4x4_pd>),
    &simd_gemv_n<Avx2F32>, &simd_gemv_t<Avx2F32>,
    &simd_gemv_n<Avx2F64>, &simd_gemv_t<Avx2F64>};

}  // namespace taihu::gemm::kernels
