// AVX-512 kernels: sgemm 32x12 and dgemm 16x12 register tiles (24 accumulators of the
// 32 ZMM registers, 2 vector loads of A and 12 broadcasts of B per k step), and GEMV.
#include <immintrin.h>

#include "kernels/simd_kernels.hpp"

namespace taihu::gemm::kernels {
namespace {

struct Avx512F32 {
  using T = float;
  using Reg = __m512;
  static constexpr int W = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const T* p) { return _mm512_load_ps(p); }
  static Reg loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg bcast(const T* p) { return _mm512_set1_ps(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static T hsum(Reg v) {  // via memory: GCC 12's 512-bit extracts trip -Wuninitialized
    alignas(64) T lanes[W];
    _mm512_store_ps(lanes, v);
    T s = 0;
    for (T x : lanes) s += x;
    return s;
  }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

struct Avx512F64 {
  using T = double;
  using Reg = __m512d;
  static constexpr int W = 8;
  static Reg zero() { return _mm512_setzero_pd(); }
  static Reg load(const T* p) { return _mm512_load_pd(p); }
  static Reg loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, Reg v) { _mm512_storeu_pd(p, v); }
  static Reg bcast(const T* p) { return _mm512_set1_pd(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_pd(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
  static Reg add(Reg a, Reg b) { return _mm512_add_pd(a, b); }
  static T hsum(Reg v) {
    alignas(64) T lanes[W];
    _mm512_store_pd(lanes, v);
    T s = 0;
    for (T x : lanes) s += x;
    return s;
  }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

}  // namespace

const KernelSet kAvx512Kernels = {
    make_microkernel<Avx512F32, 32, 12>(),
    make_microkernel<Avx512F64, 16, 12>(),
    &simd_gemv_n<Avx512F32>, &simd_gemv_t<Avx512F32>,
    &simd_gemv_n<Avx512F64>, &simd_gemv_t<Avx512F64>};

}  // namespace taihu::gemm::kernels
