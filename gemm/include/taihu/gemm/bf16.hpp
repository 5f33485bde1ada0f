// taihu::gemm bf16 GEMM: bfloat16 inputs, fp32 accumulation and output, as OpenBLAS's
// sbgemm and MKL's gemm_bf16bf16f32:
//   C (float) = alpha * op(A) * op(B) + beta * C,   A and B bfloat16 (stored as uint16_t).
// The same BLAS semantics as sgemm (beta == 0 never reads C, alpha == 0 or k == 0 never
// reads A or B, invalid arguments throw taihu::Error naming the argument). Products of
// two bf16 values are exact in fp32; sums are fp32. Where the CPU has AVX-512 BF16 the
// kernel is vdpbf16ps (pairs of k per instruction); elsewhere A and B are widened to
// fp32 (exactly) and multiplied by taihu's SGEMM.
#pragma once
#include <cstdint>
#include <cstring>

#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm {

using bf16 = std::uint16_t;  // the upper 16 bits of an IEEE binary32

// Round to nearest even (NaN stays a quiet NaN), as the hardware's vcvtneps2bf16.
inline bf16 float_to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16>(u >> 16);
}

inline float bf16_to_float(bf16 h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

void sbgemm(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n, index_t k,
            float alpha, const bf16* a, index_t lda, const bf16* b, index_t ldb, float beta,
            float* c, index_t ldc);

// The implementation this process uses (TAIHU_ISA aware), e.g. "avx512_bf16 (32x12)".
const char* sbgemm_kernel_name();

}  // namespace taihu::gemm
