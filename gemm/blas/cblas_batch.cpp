// cblas_?gemm_batch_strided and cblas_?gemm_batch (s, d) with MKL's signatures (which
// OpenBLAS 0.3.29+ also uses), LP64 and ILP64 (cblas_sgemm_batch64_ ...; blas_abi.hpp)
// from one definition: a strided batch of one problem, and groups of problems,
// group g holding group_size[g] problems with the parameters at index g and the next
// group_size[g] pointers. Checked before any product runs: a bad argument goes to
// cblas_xerbla with its position in these signatures (no netlib reference exists, so no
// row-major renumbering) and nothing is computed. Good calls run on taihu::gemm's
// batch entry points, which spread small problems over the threads.
#include <cstddef>
#include <type_traits>

#include "blas_abi.hpp"
#include "blas_report.hpp"
#include "gemm_arg_checks.hpp"
#include "taihu/gemm/gemm.hpp"
#include "taihu_cblas.h"
#include "taihu_cblas64.h"

namespace taihu::blas {
namespace {

// One problem's checks: trans_a, trans_b, m, n, k, lda, ldb, ldc at the given positions
// (positions[0..7]).
Illegal check_problem(int order, int ta, int tb, index_t m, index_t n, index_t k, index_t lda,
                      index_t ldb, index_t ldc, const int (&pos)[8]) {
  Illegal out;
  auto bad_trans = [&](int number, const char* name, int v) {
    if (v == CblasNoTrans || v == CblasTrans || v == CblasConjTrans) return false;
    return fail(out, number, name,
                "%s = %d, must be CblasNoTrans (111), CblasTrans (112) or CblasConjTrans (113)",
                name, v);
  };
  if (order != CblasRowMajor && order != CblasColMajor) {
    fail(out, 1, "Layout", "Layout = %d, must be CblasRowMajor (101) or CblasColMajor (102)",
         order);
    return out;
  }
  if (bad_trans(pos[0], "TransA", ta) || bad_trans(pos[1], "TransB", tb) ||
      bad_size(out, pos[2], "M", m) || bad_size(out, pos[3], "N", n) ||
      bad_size(out, pos[4], "K", k))
    return out;
  const bool row = order == CblasRowMajor;
  const bool ya = ta != CblasNoTrans, yb = tb != CblasNoTrans;
  const bool a_rows_m = row == ya, b_rows_k = row == yb;
  bad_leading_dim(out, pos[5], "lda", lda, a_rows_m ? "M" : "K", a_rows_m ? m : k, "A") ||
      bad_leading_dim(out, pos[6], "ldb", ldb, b_rows_k ? "K" : "N", b_rows_k ? k : n, "B") ||
      bad_leading_dim(out, pos[7], "ldc", ldc, row ? "N" : "M", row ? n : m, "C");
  return out;
}

Layout layout_of(int order) {
  return order == CblasRowMajor ? Layout::row_major : Layout::col_major;
}
Trans trans_of(int v) { return v == CblasNoTrans ? Trans::no : Trans::yes; }

template <class T, class Int>
void strided(const char* routine, int order, int ta, int tb, Int m, Int n, Int k, T alpha,
             const T* a, Int lda, Int sa, const T* b, Int ldb, Int sb, T beta, T* c, Int ldc,
             Int sc, Int batch) {
  static constexpr int kPos[8] = {2, 3, 4, 5, 6, 9, 12, 16};
  Illegal illegal = check_problem(order, ta, tb, m, n, k, lda, ldb, ldc, kPos);
  if (illegal.number == 0 && batch < 0)
    fail(illegal, 18, "batch_size", "batch_size = %lld, must be >= 0",
         static_cast<long long>(batch));
  serve(
      routine, illegal, [&] { report_cblas(abi_of<Int>, routine, false, illegal); },
      [&] {
        require_gemm_addressable(order == CblasRowMajor, ta != CblasNoTrans, tb != CblasNoTrans, m,
                                 n, k, lda, ldb, ldc, sizeof(T), sizeof(T));
        if constexpr (std::is_same_v<T, float>) {
          gemm::sgemm_batch_strided(layout_of(order), trans_of(ta), trans_of(tb), m, n, k, alpha, a,
                                    lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
        } else {
          gemm::dgemm_batch_strided(layout_of(order), trans_of(ta), trans_of(tb), m, n, k, alpha, a,
                                    lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
        }
      });
}

template <class T, class Int>
void grouped(const char* routine, int order, const CBLAS_TRANSPOSE* ta, const CBLAS_TRANSPOSE* tb,
             const Int* m, const Int* n, const Int* k, const T* alpha, const T** a, const Int* lda,
             const T** b, const Int* ldb, const T* beta, T** c, const Int* ldc, Int groups,
             const Int* group_size) {
  static constexpr int kPos[8] = {2, 3, 4, 5, 6, 9, 11, 14};
  Illegal illegal;
  if (groups < 0)
    fail(illegal, 15, "group_count", "group_count = %lld, must be >= 0",
         static_cast<long long>(groups));
  for (Int g = 0; illegal.number == 0 && g < groups; ++g) {
    illegal = check_problem(order, ta[g], tb[g], m[g], n[g], k[g], lda[g], ldb[g], ldc[g], kPos);
    if (illegal.number == 0 && group_size[g] < 0)
      fail(illegal, 16, "group_size", "group_size[%lld] = %lld, must be >= 0",
           static_cast<long long>(g), static_cast<long long>(group_size[g]));
  }
  serve(
      routine, illegal, [&] { report_cblas(abi_of<Int>, routine, false, illegal); },
      [&] {
        for (Int g = 0; g < groups; ++g)  // all groups before any computes
          require_gemm_addressable(order == CblasRowMajor, ta[g] != CblasNoTrans,
                                   tb[g] != CblasNoTrans, m[g], n[g], k[g], lda[g], ldb[g], ldc[g],
                                   sizeof(T), sizeof(T));
        std::size_t first = 0;
        for (Int g = 0; g < groups; ++g) {
          if constexpr (std::is_same_v<T, float>) {
            gemm::sgemm_batch(layout_of(order), trans_of(ta[g]), trans_of(tb[g]), m[g], n[g], k[g],
                              alpha[g], a + first, lda[g], b + first, ldb[g], beta[g], c + first,
                              ldc[g], group_size[g]);
          } else {
            gemm::dgemm_batch(layout_of(order), trans_of(ta[g]), trans_of(tb[g]), m[g], n[g], k[g],
                              alpha[g], a + first, lda[g], b + first, ldb[g], beta[g], c + first,
                              ldc[g], group_size[g]);
          }
          first += static_cast<std::size_t>(group_size[g]);
        }
      });
}

}  // namespace
}  // namespace taihu::blas

#define TAIHU_CBLAS_BATCH_ABI(T, P, Int, NAME)                                                     \
  void NAME(cblas_##P##gemm_batch_strided)(                                                        \
      CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k, T alpha,     \
      const T* a, Int lda, Int stride_a, const T* b, Int ldb, Int stride_b, T beta, T* c, Int ldc, \
      Int stride_c, Int batch_size) {                                                              \
    taihu::blas::strided<T, Int>("cblas_" #P "gemm_batch_strided", order, ta, tb, m, n, k, alpha,  \
                                 a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,       \
                                 batch_size);                                                      \
  }                                                                                                \
  void NAME(cblas_##P##gemm_batch)(CBLAS_ORDER order, const CBLAS_TRANSPOSE* ta,                   \
                                   const CBLAS_TRANSPOSE* tb, const Int* m, const Int* n,          \
                                   const Int* k, const T* alpha, const T** a, const Int* lda,      \
                                   const T** b, const Int* ldb, const T* beta, T** c,              \
                                   const Int* ldc, Int group_count, const Int* group_size) {       \
    taihu::blas::grouped<T, Int>("cblas_" #P "gemm_batch", order, ta, tb, m, n, k, alpha, a, lda,  \
                                 b, ldb, beta, c, ldc, group_count, group_size);                   \
  }

extern "C" {
TAIHU_CBLAS_BATCH_ABI(float, s, int, TAIHU_BLAS_LP64_NAME)
TAIHU_CBLAS_BATCH_ABI(double, d, int, TAIHU_BLAS_LP64_NAME)
TAIHU_CBLAS_BATCH_ABI(float, s, taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
TAIHU_CBLAS_BATCH_ABI(double, d, taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
}
#undef TAIHU_CBLAS_BATCH_ABI
