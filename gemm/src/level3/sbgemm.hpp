// The column-major bf16 GEMM implementations behind taihu/gemm/bf16.hpp (sbgemm_api.cpp
// checks arguments, maps row major and dispatches). Each computes
//   C (m x n) := alpha op(A) op(B) + beta C,  op(X)(i, p) = trans ? x[p + i ld] : x[i + p ld]
// for m, n, k >= 1 and alpha != 0.
#pragma once
#include "taihu/gemm/bf16.hpp"

namespace taihu::gemm::level3 {

struct Bf16Problem {
  index_t m = 0, n = 0, k = 0;
  float alpha = 0, beta = 0;
  const bf16* a = nullptr;
  index_t lda = 0;
  bool trans_a = false;
  const bf16* b = nullptr;
  index_t ldb = 0;
  bool trans_b = false;
  float* c = nullptr;
  index_t ldc = 0;
};

using SbgemmFn = void (*)(const Bf16Problem&);

// vdpbf16ps, 32x12 register tile (kernels/avx512/sbgemm_avx512bf16.cpp). Needs a CPU
// with AVX-512 BF16.
void sbgemm_avx512bf16(const Bf16Problem& p);

}  // namespace taihu::gemm::level3
