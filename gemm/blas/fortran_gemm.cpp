// sgemm_ / dgemm_ (and sbgemm_, OpenBLAS's bf16-in / fp32-out GEMM): the Fortran 77 GEMM
// entry points of libtaihu_blas.so, LP64 and ILP64 (sgemm_64_ ...; blas_abi.hpp) from
// one definition, as gfortran
// calls them (column major, every argument by pointer, then one hidden size_t length
// per CHARACTER argument, which is never read: C callers that omit it are fine).
// Arguments are checked here in reference BLAS's order and numbering (1 TRANSA,
// 2 TRANSB, 3 M, 4 N, 5 K, 8 LDA, 10 LDB, 13 LDC); a bad call goes to xerbla_
// (blas_report.hpp) and returns with C untouched. TRANSA/TRANSB accept N, T or C in either case.
#include <cctype>
#include <cstdio>

#include "blas_abi.hpp"
#include "blas_report.hpp"
#include "gemm_arg_checks.hpp"
#include "taihu/gemm/bf16.hpp"
#include "taihu/gemm/gemm.hpp"
#include "taihu_cblas.h"
#include "taihu_cblas64.h"

namespace taihu::blas {
namespace {

bool is_no_trans(char t) { return t == 'N' || t == 'n'; }
bool is_trans(char t) { return t == 'T' || t == 't' || t == 'C' || t == 'c'; }

bool bad_trans(Illegal& out, int number, const char* name, char value) {
  if (is_no_trans(value) || is_trans(value)) return false;
  const auto byte = static_cast<unsigned char>(value);
  if (std::isprint(byte)) {
    return fail(out, number, name, "%s = '%c', must be 'N', 'T' or 'C'", name, value);
  }
  return fail(out, number, name, "%s = byte 0x%02x, must be 'N', 'T' or 'C'", name,
              static_cast<unsigned>(byte));
}

// The first illegal argument in reference BLAS's numbering, or number == 0.
Illegal check(char transa, char transb, index_t m, index_t n, index_t k, index_t lda, index_t ldb,
              index_t ldc) {
  Illegal out;
  if (bad_trans(out, 1, "TRANSA", transa) || bad_trans(out, 2, "TRANSB", transb) ||
      bad_size(out, 3, "M", m) || bad_size(out, 4, "N", n) || bad_size(out, 5, "K", k)) {
    return out;
  }
  const bool ta = is_trans(transa);
  const bool tb = is_trans(transb);
  char why_a[16];
  char why_b[16];
  std::snprintf(why_a, sizeof why_a, "TRANSA = '%c'", transa);
  std::snprintf(why_b, sizeof why_b, "TRANSB = '%c'", transb);
  if (bad_leading_dim(out, 8, "LDA", lda, ta ? "K" : "M", ta ? k : m, why_a) ||
      bad_leading_dim(out, 10, "LDB", ldb, tb ? "N" : "K", tb ? n : k, why_b)) {
    return out;
  }
  bad_leading_dim(out, 13, "LDC", ldc, "M", m, "C is M x N");
  return out;
}

// Checks, then runs gemm_fn (sgemm, dgemm: const T* A and B; sbgemm: bf16) for a good
// call; a bad one goes to the xerbla_ of Int's ABI.
template <typename Int, typename T, typename In, typename GemmCall>
void fortran_gemm(const char* routine, const char* srname, GemmCall gemm_fn, const char* transa,
                  const char* transb, const Int* m, const Int* n, const Int* k, const T* alpha,
                  const In* a, const Int* lda, const In* b, const Int* ldb, const T* beta, T* c,
                  const Int* ldc) {
  const Illegal illegal = check(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  serve(
      routine, illegal, [&] { report_fortran(abi_of<Int>, srname, illegal); },
      [&] {
        require_gemm_addressable(false, is_trans(*transa), is_trans(*transb), *m, *n, *k, *lda,
                                 *ldb, *ldc, sizeof(In), sizeof(T));
        gemm_fn(Layout::col_major, is_trans(*transa) ? Trans::yes : Trans::no,
                is_trans(*transb) ? Trans::yes : Trans::no, *m, *n, *k, *alpha, a, *lda, b, *ldb,
                *beta, c, *ldc);
      });
}

}  // namespace
}  // namespace taihu::blas

#define TAIHU_FORTRAN_GEMM_ABI(Int, NAME)                                                        \
  void NAME(sgemm_)(const char* transa, const char* transb, const Int* m, const Int* n,          \
                    const Int* k, const float* alpha, const float* a, const Int* lda,            \
                    const float* b, const Int* ldb, const float* beta, float* c, const Int* ldc, \
                    size_t, size_t) {                                                            \
    taihu::blas::fortran_gemm("SGEMM", "SGEMM ", &taihu::gemm::sgemm, transa, transb, m, n, k,   \
                              alpha, a, lda, b, ldb, beta, c, ldc);                              \
  }                                                                                              \
  void NAME(dgemm_)(const char* transa, const char* transb, const Int* m, const Int* n,          \
                    const Int* k, const double* alpha, const double* a, const Int* lda,          \
                    const double* b, const Int* ldb, const double* beta, double* c,              \
                    const Int* ldc, size_t, size_t) {                                            \
    taihu::blas::fortran_gemm("DGEMM", "DGEMM ", &taihu::gemm::dgemm, transa, transb, m, n, k,   \
                              alpha, a, lda, b, ldb, beta, c, ldc);                              \
  }                                                                                              \
  void NAME(sbgemm_)(const char* transa, const char* transb, const Int* m, const Int* n,         \
                     const Int* k, const float* alpha, const taihu_bfloat16* a, const Int* lda,  \
                     const taihu_bfloat16* b, const Int* ldb, const float* beta, float* c,       \
                     const Int* ldc, size_t, size_t) {                                           \
    taihu::blas::fortran_gemm("SBGEMM", "SBGEMM", &taihu::gemm::sbgemm, transa, transb, m, n, k, \
                              alpha, a, lda, b, ldb, beta, c, ldc);                              \
  }

extern "C" {
TAIHU_FORTRAN_GEMM_ABI(int, TAIHU_BLAS_LP64_NAME)
TAIHU_FORTRAN_GEMM_ABI(taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
}
#undef TAIHU_FORTRAN_GEMM_ABI
