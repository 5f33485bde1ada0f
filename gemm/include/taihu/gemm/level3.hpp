// taihu::gemm level-3 BLAS beyond GEMM, built on the GEMM core as BLIS builds them
// (src/level3/): blocks of the problem become GEMM calls, only the small diagonal
// blocks are handled apart. Real data, BLAS semantics and argument meanings:
//   gemmt  C := alpha op(A) op(B) + beta C, only the `uplo` triangle of the n x n C
//          (op(A) n x k, op(B) k x n), as MKL's and OpenBLAS's ?gemmt
//   syrk   C := alpha op(A) op(A)^T + beta C, op(A) = A (n x k) or A^T (trans)
//   syr2k  C := alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C
//   symm   C := alpha A B + beta C (left) or alpha B A + beta C (right), A symmetric,
//          only its `uplo` triangle read; C m x n
//   trmm   B := alpha op(A) B (left) or alpha B op(A) (right), A triangular
//   trsm   solves op(A) X = alpha B (left) or X op(A) = alpha B (right), X over B
// beta == 0 never reads C, alpha == 0 never reads A or B; the other triangle of C (and
// of A) is never read nor written. Invalid sizes or leading dimensions throw
// taihu::Error naming the argument (libtaihu_blas checks before calling and reports
// through xerbla instead).
#pragma once
#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm {

enum class Uplo { upper, lower };
enum class Side { left, right };
enum class Diag { non_unit, unit };

void sgemmt(Layout layout, Uplo uplo, Trans trans_a, Trans trans_b, index_t n, index_t k,
            float alpha, const float* a, index_t lda, const float* b, index_t ldb, float beta,
            float* c, index_t ldc);
void dgemmt(Layout layout, Uplo uplo, Trans trans_a, Trans trans_b, index_t n, index_t k,
            double alpha, const double* a, index_t lda, const double* b, index_t ldb,
            double beta, double* c, index_t ldc);

void ssyrk(Layout layout, Uplo uplo, Trans trans, index_t n, index_t k, float alpha,
           const float* a, index_t lda, float beta, float* c, index_t ldc);
void dsyrk(Layout layout, Uplo uplo, Trans trans, index_t n, index_t k, double alpha,
           const double* a, index_t lda, double beta, double* c, index_t ldc);

void ssyr2k(Layout layout, Uplo uplo, Trans trans, index_t n, index_t k, float alpha,
            const float* a, index_t lda, const float* b, index_t ldb, float beta, float* c,
            index_t ldc);
void dsyr2k(Layout layout, Uplo uplo, Trans trans, index_t n, index_t k, double alpha,
            const double* a, index_t lda, const double* b, index_t ldb, double beta, double* c,
            index_t ldc);

void ssymm(Layout layout, Side side, Uplo uplo, index_t m, index_t n, float alpha,
           const float* a, index_t lda, const float* b, index_t ldb, float beta, float* c,
           index_t ldc);
void dsymm(Layout layout, Side side, Uplo uplo, index_t m, index_t n, double alpha,
           const double* a, index_t lda, const double* b, index_t ldb, double beta, double* c,
           index_t ldc);

void strmm(Layout layout, Side side, Uplo uplo, Trans trans_a, Diag diag, index_t m, index_t n,
           float alpha, const float* a, index_t lda, float* b, index_t ldb);
void dtrmm(Layout layout, Side side, Uplo uplo, Trans trans_a, Diag diag, index_t m, index_t n,
           double alpha, const double* a, index_t lda, double* b, index_t ldb);

void strsm(Layout layout, Side side, Uplo uplo, Trans trans_a, Diag diag, index_t m, index_t n,
           float alpha, const float* a, index_t lda, float* b, index_t ldb);
void dtrsm(Layout layout, Side side, Uplo uplo, Trans trans_a, Diag diag, index_t m, index_t n,
           double alpha, const double* a, index_t lda, double* b, index_t ldb);

}  // namespace taihu::gemm
