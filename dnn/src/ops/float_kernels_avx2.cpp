// The float elementwise kernel table compiled for the avx2 ISA level (see
// float_kernels.hpp; the loops live in kernels.hpp).
#include <immintrin.h>

#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"

namespace taihu::dnn::ops {
namespace {

// s^-0.75 = 1 / (sqrt(s) * sqrt(sqrt(s))) with the hardware square root and divide
// (correctly rounded, ~1 ulp overall); the portable version needs Newton steps instead
// because std::sqrt's errno path keeps GCC from vectorizing it.
void pow_minus_075_avx2(index_t n, const float* s, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f);
  index_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 r = _mm256_sqrt_ps(_mm256_loadu_ps(s + i));
    _mm256_storeu_ps(out + i, _mm256_div_ps(one, _mm256_mul_ps(r, _mm256_sqrt_ps(r))));
  }
  for (; i < n; ++i) out[i] = pow_minus_075(s[i]);
}

}  // namespace

const FloatKernels& float_kernels_avx2() {
  static const FloatKernels table = float_kernel_table(&pow_minus_075_avx2);
  return table;
}

}  // namespace taihu::dnn::ops
