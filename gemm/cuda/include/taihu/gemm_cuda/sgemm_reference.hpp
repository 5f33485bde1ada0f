// taihu::gemm_cuda::sgemm_reference: the naive device SGEMM the tests check the fast
// kernels against (as CUTLASS keeps reference implementations beside the fast ones).
// One thread per element of C, products summed in double, then rounded once to float,
// so its result is close to the exact product. Same arguments, checks and BLAS
// semantics as taihu::gemm_cuda::sgemm; slow, for tests only.
#pragma once
#include "taihu/gemm_cuda/sgemm_cuda.hpp"

namespace taihu::gemm_cuda {

void sgemm_reference(Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha,
                     const float* dA, index_t lda, const float* dB, index_t ldb, float beta,
                     float* dC, index_t ldc, Stream stream = nullptr);

}  // namespace taihu::gemm_cuda
