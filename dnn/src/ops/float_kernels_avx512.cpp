// The float elementwise kernel table compiled for the avx512 ISA level (see
// float_kernels.hpp; the loops live in kernels.hpp and vectorize 16 lanes wide here).
#include <immintrin.h>

#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"

namespace taihu::dnn::ops {
namespace {

// s^-0.75 with the hardware square root and divide, as the AVX2 table's; the tail
// through a mask, so every element takes the same instructions.
void pow_minus_075_avx512(index_t n, const float* s, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (index_t i = 0; i < n; i += 16) {
    const __mmask16 live = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1u);
    // (maskz forms: GCC 12's unmasked _mm512_sqrt_ps trips -Wmaybe-uninitialized)
    const __m512 r = _mm512_maskz_sqrt_ps(live, _mm512_maskz_loadu_ps(live, s + i));
    _mm512_mask_storeu_ps(out + i, live, _mm512_div_ps(one, _mm512_mul_ps(r, _mm512_maskz_sqrt_ps(live, r))));
  }
}

}  // namespace

const FloatKernels& float_kernels_avx512() {
  static const FloatKernels table = float_kernel_table(&pow_minus_075_avx512);
  return table;
}

}  // namespace taihu::dnn::ops
