// Argument checking shared by sgemm and sgemm_reference: the BLAS rules (xerbla's
// order: trans_a, trans_b, m, n, k, lda, ldb, ldc), reported as taihu::Error naming the
// argument and the routine. Host code only.
#pragma once
#include "taihu/gemm_cuda/sgemm_cuda.hpp"

namespace taihu::gemm_cuda::detail {

void check_arguments(const char* routine, Trans ta, Trans tb, index_t m, index_t n, index_t k,
                     index_t lda, index_t ldb, index_t ldc);

// Null device pointers are only an error where they would be dereferenced.
void check_pointers(const char* routine, index_t m, index_t n, index_t k, float alpha,
                    const float* a, const float* b, const float* c);

}  // namespace taihu::gemm_cuda::detail
