// taihu::gemm: single and double precision general matrix multiply,
//   C = alpha * op(A) * op(B) + beta * C,   op(X) = X or X^T,
// with BLAS semantics: beta == 0 never reads C (NaN/Inf already in C do not leak),
// alpha == 0 never reads A or B, m, n or k == 0 returns at once (after scaling C by
// beta when k == 0). Sizes and leading dimensions are 64-bit, so products with
// m*n or m*k >= 2^31 do not overflow. Invalid arguments throw taihu::Error naming
// the argument, as BLAS's xerbla does (the C/Fortran ABI in libtaihu_blas reports
// them through its xerbla instead).
#pragma once
#include <cstdint>

namespace taihu::gemm {

enum class Layout { row_major, col_major };
enum class Trans { no, yes };

using index_t = std::int64_t;

void sgemm(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n, index_t k,
           float alpha, const float* a, index_t lda, const float* b, index_t ldb, float beta,
           float* c, index_t ldc);

void dgemm(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n, index_t k,
           double alpha, const double* a, index_t lda, const double* b, index_t ldb,
           double beta, double* c, index_t ldc);

// Strided batch: matrix i of A starts at a + i * stride_a (likewise B, C).
void sgemm_batch_strided(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n,
                         index_t k, float alpha, const float* a, index_t lda, index_t stride_a,
                         const float* b, index_t ldb, index_t stride_b, float beta, float* c,
                         index_t ldc, index_t stride_c, index_t batch);
void dgemm_batch_strided(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n,
                         index_t k, double alpha, const double* a, index_t lda, index_t stride_a,
                         const double* b, index_t ldb, index_t stride_b, double beta, double* c,
                         index_t ldc, index_t stride_c, index_t batch);

// Pointer-array batch: one problem shape, `batch` independent pointer triples.
void sgemm_batch(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n, index_t k,
                 float alpha, const float* const* a, index_t lda, const float* const* b,
                 index_t ldb, float beta, float* const* c, index_t ldc, index_t batch);
void dgemm_batch(Layout layout, Trans trans_a, Trans trans_b, index_t m, index_t n, index_t k,
                 double alpha, const double* const* a, index_t lda, const double* const* b,
                 index_t ldb, double beta, double* const* c, index_t ldc, index_t batch);

}  // namespace taihu::gemm
