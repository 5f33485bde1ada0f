// AVX2 instantiation of the Winograd tile transforms: V is one __m256 (8 channels).
#include <immintrin.h>

#include "winograd_kernels.hpp"

namespace taihu::dnn::conv {

namespace {
struct V8 {
  __m256 v;
  static V8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  friend V8 operator+(V8 a, V8 b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend V8 operator-(V8 a, V8 b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend V8 operator*(V8 a, float s) { return {_mm256_mul_ps(a.v, _mm256_set1_ps(s))}; }
};
}  // namespace

const WinogradKernelSet winograd_kernels_avx2 = make_winograd_kernel_set<V8>();

}  // namespace taihu::dnn::conv
