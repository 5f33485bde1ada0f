// cblas_sgemm / cblas_dgemm, and the bf16-in / fp32-out cblas_sbgemm (OpenBLAS's name)
// and cblas_gemm_bf16bf16f32 (MKL's): the CBLAS GEMM entry points of libtaihu_blas.so,
// LP64 and ILP64 (cblas_sgemm64_ ...; blas_abi.hpp) from one definition.
// Arguments are checked here in netlib CBLAS's order (1 Layout, 2 TransA, 3 TransB,
// then, column major, 4 M, 5 N, 6 K, 9 lda, 11 ldb, 14 ldc; row major, where netlib
// hands the swapped problem to Fortran GEMM, N before M and ldb before lda); a bad call
// goes to cblas_xerbla (blas_report.hpp) and returns with C untouched. Good calls go
// to taihu::gemm, which handles row and column major itself. CblasConjTrans means
// CblasTrans (real data).
#include <cstddef>
#include <cstdint>

#include "blas_abi.hpp"
#include "blas_report.hpp"
#include "gemm_arg_checks.hpp"
#include "taihu/gemm/bf16.hpp"
#include "taihu/gemm/gemm.hpp"
#include "taihu_cblas.h"
#include "taihu_cblas64.h"

namespace taihu::blas {
namespace {

bool bad_trans(Illegal& out, int number, const char* name, int value) {
  if (value == CblasNoTrans || value == CblasTrans || value == CblasConjTrans) return false;
  return fail(out, number, name,
              "%s = %d, must be CblasNoTrans (111), CblasTrans (112) or CblasConjTrans (113)", name,
              value);
}

// The first illegal argument in reference CBLAS's numbering, or number == 0.
Illegal check(int order, int trans_a, int trans_b, index_t m, index_t n, index_t k, index_t lda,
              index_t ldb, index_t ldc) {
  Illegal out;
  if (order != CblasRowMajor && order != CblasColMajor) {
    fail(out, 1, "Layout", "Layout = %d, must be CblasRowMajor (101) or CblasColMajor (102)",
         order);
    return out;
  }
  if (bad_trans(out, 2, "TransA", trans_a) || bad_trans(out, 3, "TransB", trans_b)) return out;
  const bool row = order == CblasRowMajor;
  const bool ta = trans_a != CblasNoTrans;
  const bool tb = trans_b != CblasNoTrans;
  // Row major stores each row contiguously, so the leading dimension spans columns.
  const char* a_why = row ? (ta ? "row major, A transposed" : "row major, A not transposed")
                          : (ta ? "column major, A transposed" : "column major, A not transposed");
  const char* b_why = row ? (tb ? "row major, B transposed" : "row major, B not transposed")
                          : (tb ? "column major, B transposed" : "column major, B not transposed");
  const bool a_rows_m = row == ta;  // A's leading extent is M, else K
  const bool b_rows_k = row == tb;  // B's leading extent is K, else N
  if (row) {
    if (bad_size(out, 5, "N", n) || bad_size(out, 4, "M", m) || bad_size(out, 6, "K", k) ||
        bad_leading_dim(out, 11, "ldb", ldb, b_rows_k ? "K" : "N", b_rows_k ? k : n, b_why) ||
        bad_leading_dim(out, 9, "lda", lda, a_rows_m ? "M" : "K", a_rows_m ? m : k, a_why)) {
      return out;
    }
  } else if (bad_size(out, 4, "M", m) || bad_size(out, 5, "N", n) || bad_size(out, 6, "K", k) ||
             bad_leading_dim(out, 9, "lda", lda, a_rows_m ? "M" : "K", a_rows_m ? m : k, a_why) ||
             bad_leading_dim(out, 11, "ldb", ldb, b_rows_k ? "K" : "N", b_rows_k ? k : n, b_why)) {
    return out;
  }
  bad_leading_dim(out, 14, "ldc", ldc, row ? "N" : "M", row ? n : m,
                  row ? "row major" : "column major");
  return out;
}

// Checks, then calls compute(layout, trans_a, trans_b) for a good call whose matrices
// (elements of ab_size and c_size bytes) fit in the address space; a bad one goes to
// the cblas_xerbla of `abi`.
template <typename Compute>
void cblas_gemm(Abi abi, const char* routine, CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a,
                CBLAS_TRANSPOSE trans_b, index_t m, index_t n, index_t k, index_t lda, index_t ldb,
                index_t ldc, std::size_t ab_size, std::size_t c_size, Compute&& compute) {
  const Illegal illegal = check(order, trans_a, trans_b, m, n, k, lda, ldb, ldc);
  const bool row = order == CblasRowMajor;
  serve(
      routine, illegal, [&] { report_cblas(abi, routine, row, illegal); },
      [&] {
        require_gemm_addressable(row, trans_a != CblasNoTrans, trans_b != CblasNoTrans, m, n, k,
                                 lda, ldb, ldc, ab_size, c_size);
        compute(row ? Layout::row_major : Layout::col_major,
                trans_a == CblasNoTrans ? Trans::no : Trans::yes,
                trans_b == CblasNoTrans ? Trans::no : Trans::yes);
      });
}

template <typename T, typename Int>
void cblas_gemm(const char* routine, GemmFn<T> gemm_fn, CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a,
                CBLAS_TRANSPOSE trans_b, Int m, Int n, Int k, T alpha, const T* a, Int lda,
                const T* b, Int ldb, T beta, T* c, Int ldc) {
  cblas_gemm(abi_of<Int>, routine, order, trans_a, trans_b, m, n, k, lda, ldb, ldc, sizeof(T),
             sizeof(T), [&](Layout layout, Trans ta, Trans tb) {
               gemm_fn(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
             });
}

template <typename Int>
void cblas_bf16_gemm(const char* routine, CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a,
                     CBLAS_TRANSPOSE trans_b, Int m, Int n, Int k, float alpha,
                     const std::uint16_t* a, Int lda, const std::uint16_t* b, Int ldb, float beta,
                     float* c, Int ldc) {
  cblas_gemm(abi_of<Int>, routine, order, trans_a, trans_b, m, n, k, lda, ldb, ldc,
             sizeof(std::uint16_t), sizeof(float), [&](Layout layout, Trans ta, Trans tb) {
               gemm::sbgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
             });
}

}  // namespace
}  // namespace taihu::blas

#define TAIHU_CBLAS_GEMM_ABI(Int, NAME)                                                           \
  void NAME(cblas_sgemm)(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,     \
                         Int m, Int n, Int k, float alpha, const float* a, Int lda,               \
                         const float* b, Int ldb, float beta, float* c, Int ldc) {                \
    taihu::blas::cblas_gemm<float, Int>("cblas_sgemm", &taihu::gemm::sgemm, order, trans_a,       \
                                        trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);   \
  }                                                                                               \
  void NAME(cblas_dgemm)(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,     \
                         Int m, Int n, Int k, double alpha, const double* a, Int lda,             \
                         const double* b, Int ldb, double beta, double* c, Int ldc) {             \
    taihu::blas::cblas_gemm<double, Int>("cblas_dgemm", &taihu::gemm::dgemm, order, trans_a,      \
                                         trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  \
  }                                                                                               \
  void NAME(cblas_sbgemm)(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,    \
                          Int m, Int n, Int k, float alpha, const taihu_bfloat16* a, Int lda,     \
                          const taihu_bfloat16* b, Int ldb, float beta, float* c, Int ldc) {      \
    taihu::blas::cblas_bf16_gemm<Int>("cblas_sbgemm", order, trans_a, trans_b, m, n, k, alpha, a, \
                                      lda, b, ldb, beta, c, ldc);                                 \
  }                                                                                               \
  void NAME(cblas_gemm_bf16bf16f32)(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a,                   \
                                    CBLAS_TRANSPOSE trans_b, Int m, Int n, Int k, float alpha,    \
                                    const taihu_bfloat16* a, Int lda, const taihu_bfloat16* b,    \
                                    Int ldb, float beta, float* c, Int ldc) {                     \
    taihu::blas::cblas_bf16_gemm<Int>("cblas_gemm_bf16bf16f32", order, trans_a, trans_b, m, n, k, \
                                      alpha, a, lda, b, ldb, beta, c, ldc);                       \
  }

extern "C" {
TAIHU_CBLAS_GEMM_ABI(int, TAIHU_BLAS_LP64_NAME)
TAIHU_CBLAS_GEMM_ABI(taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
}
#undef TAIHU_CBLAS_GEMM_ABI
