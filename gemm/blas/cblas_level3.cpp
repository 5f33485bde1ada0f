// The CBLAS level-3 entry points beyond GEMM: cblas_?gemmt, ?syrk, ?syr2k, ?symm,
// ?trmm, ?trsm (s and d), LP64 and ILP64 (cblas_strsm64_ ...; blas_abi.hpp) from one
// definition. Arguments are checked in netlib CBLAS's order (its enum
// checks, then the Fortran routine's checks of the problem it is handed: row major,
// that is the swapped problem, so symm/trmm/trsm check N before M) and a bad call goes
// to cblas_xerbla (report_cblas, which applies netlib's row-major numbering) with
// B/C untouched. Good calls go to taihu/gemm/level3.hpp, which maps row major itself.
// CblasConjTrans means CblasTrans (real data).
#include "blas_abi.hpp"
#include "blas_report.hpp"
#include "gemm_arg_checks.hpp"
#include "taihu/gemm/level3.hpp"
#include "taihu_cblas.h"
#include "taihu_cblas64.h"

namespace taihu::blas {
namespace {

using gemm::Diag;
using gemm::Side;
using gemm::Uplo;

bool bad_order(Illegal& out, int order) {
  if (order == CblasRowMajor || order == CblasColMajor) return false;
  return fail(out, 1, "Layout", "Layout = %d, must be CblasRowMajor (101) or CblasColMajor (102)",
              order);
}
bool bad_uplo(Illegal& out, int number, int v) {
  if (v == CblasUpper || v == CblasLower) return false;
  return fail(out, number, "Uplo", "Uplo = %d, must be CblasUpper (121) or CblasLower (122)", v);
}
bool bad_side(Illegal& out, int number, int v) {
  if (v == CblasLeft || v == CblasRight) return false;
  return fail(out, number, "Side", "Side = %d, must be CblasLeft (141) or CblasRight (142)", v);
}
bool bad_diag(Illegal& out, int number, int v) {
  if (v == CblasUnit || v == CblasNonUnit) return false;
  return fail(out, number, "Diag", "Diag = %d, must be CblasNonUnit (131) or CblasUnit (132)", v);
}
bool bad_trans(Illegal& out, int number, const char* name, int v) {
  if (v == CblasNoTrans || v == CblasTrans || v == CblasConjTrans) return false;
  return fail(out, number, name,
              "%s = %d, must be CblasNoTrans (111), CblasTrans (112) or CblasConjTrans (113)", name,
              v);
}

Layout layout_of(int order) {
  return order == CblasRowMajor ? Layout::row_major : Layout::col_major;
}
Uplo uplo_of(int v) { return v == CblasUpper ? Uplo::upper : Uplo::lower; }
Trans trans_of(int v) { return v == CblasNoTrans ? Trans::no : Trans::yes; }
Side side_of(int v) { return v == CblasLeft ? Side::left : Side::right; }
Diag diag_of(int v) { return v == CblasUnit ? Diag::unit : Diag::non_unit; }

// The stored extent along the leading dimension of an r x c matrix.
index_t span(int order, index_t rows, index_t cols) { return order == CblasRowMajor ? cols : rows; }

// m, n checked in the order netlib's Fortran call sees them (row major: swapped).
bool bad_m_n(Illegal& out, int order, int m_pos, index_t m, index_t n) {
  if (order == CblasRowMajor)
    return bad_size(out, m_pos + 1, "N", n) || bad_size(out, m_pos, "M", m);
  return bad_size(out, m_pos, "M", m) || bad_size(out, m_pos + 1, "N", n);
}

Illegal check_gemmt(int order, int uplo, int ta, int tb, index_t n, index_t k, index_t lda,
                    index_t ldb, index_t ldc) {
  Illegal out;
  if (bad_order(out, order) || bad_uplo(out, 2, uplo) || bad_trans(out, 3, "TransA", ta) ||
      bad_trans(out, 4, "TransB", tb) || bad_size(out, 5, "N", n) || bad_size(out, 6, "K", k))
    return out;
  const bool ya = ta != CblasNoTrans, yb = tb != CblasNoTrans;
  const index_t sa = ya ? span(order, k, n) : span(order, n, k);
  const index_t sb = yb ? span(order, n, k) : span(order, k, n);
  bad_leading_dim(out, 9, "lda", lda, "op(A)'s stored extent", sa, "A is op(A) n x k") ||
      bad_leading_dim(out, 11, "ldb", ldb, "op(B)'s stored extent", sb, "op(B) is k x n") ||
      bad_leading_dim(out, 14, "ldc", ldc, "N", n, "C is n x n");
  return out;
}

// syrk (ldb_pos == 0) and syr2k.
Illegal check_rank_k(int order, int uplo, int trans, index_t n, index_t k, index_t lda, int ldb_pos,
                     index_t ldb, int ldc_pos, index_t ldc) {
  Illegal out;
  if (bad_order(out, order) || bad_uplo(out, 2, uplo) || bad_trans(out, 3, "Trans", trans) ||
      bad_size(out, 4, "N", n) || bad_size(out, 5, "K", k))
    return out;
  const bool t = trans != CblasNoTrans;
  const index_t need = t ? span(order, k, n) : span(order, n, k);
  const char* why = t ? "A is k x n (Trans)" : "A is n x k (NoTrans)";
  if (bad_leading_dim(out, 8, "lda", lda, t ? "K or N" : "N or K", need, why)) return out;
  if (ldb_pos != 0 && bad_leading_dim(out, ldb_pos, "ldb", ldb, "the same", need, why)) return out;
  bad_leading_dim(out, ldc_pos, "ldc", ldc, "N", n, "C is n x n");
  return out;
}

Illegal check_symm(int order, int side, int uplo, index_t m, index_t n, index_t lda, index_t ldb,
                   index_t ldc) {
  Illegal out;
  if (bad_order(out, order) || bad_side(out, 2, side) || bad_uplo(out, 3, uplo) ||
      bad_m_n(out, order, 4, m, n))
    return out;
  const bool left = side == CblasLeft;
  const index_t sbc = span(order, m, n);
  const char* bc = order == CblasRowMajor ? "N" : "M";
  bad_leading_dim(out, 8, "lda", lda, left ? "M" : "N", left ? m : n, "A is symmetric") ||
      bad_leading_dim(out, 10, "ldb", ldb, bc, sbc, "B is m x n") ||
      bad_leading_dim(out, 13, "ldc", ldc, bc, sbc, "C is m x n");
  return out;
}

Illegal check_triangular(int order, int side, int uplo, int trans, int diag, index_t m, index_t n,
                         index_t lda, index_t ldb) {
  Illegal out;
  if (bad_order(out, order) || bad_side(out, 2, side) || bad_uplo(out, 3, uplo) ||
      bad_trans(out, 4, "TransA", trans) || bad_diag(out, 5, diag) || bad_m_n(out, order, 6, m, n))
    return out;
  const bool left = side == CblasLeft;
  bad_leading_dim(out, 10, "lda", lda, left ? "M" : "N", left ? m : n, "A is triangular") ||
      bad_leading_dim(out, 12, "ldb", ldb, order == CblasRowMajor ? "N" : "M", span(order, m, n),
                      "B is m x n");
  return out;
}

// A bad call goes to the cblas_xerbla of Int's ABI.
template <typename Int, typename Call>
void serve_cblas(const char* routine, int order, const Illegal& illegal, Call&& call) {
  serve(
      routine, illegal,
      [&] { report_cblas(abi_of<Int>, routine, order == CblasRowMajor, illegal); }, call);
}

}  // namespace
}  // namespace taihu::blas

namespace tb = taihu::blas;
namespace tg = taihu::gemm;

#define TAIHU_CBLAS_LEVEL3(T, P, Int, NAME)                                                        \
  void NAME(cblas_##P##gemmt)(CBLAS_ORDER order, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta,              \
                              CBLAS_TRANSPOSE tbt, Int n, Int k, T alpha, const T* a, Int lda,     \
                              const T* b, Int ldb, T beta, T* c, Int ldc) {                        \
    tb::serve_cblas<Int>("cblas_" #P "gemmt", order,                                               \
                         tb::check_gemmt(order, uplo, ta, tbt, n, k, lda, ldb, ldc), [&] {         \
                           tb::require_gemm_addressable(                                           \
                               order == CblasRowMajor, ta != CblasNoTrans, tbt != CblasNoTrans, n, \
                               n, k, lda, ldb, ldc, sizeof(T), sizeof(T));                         \
                           tg::P##gemmt(tb::layout_of(order), tb::uplo_of(uplo), tb::trans_of(ta), \
                                        tb::trans_of(tbt), n, k, alpha, a, lda, b, ldb, beta, c,   \
                                        ldc);                                                      \
                         });                                                                       \
  }                                                                                                \
  void NAME(cblas_##P##syrk)(CBLAS_ORDER order, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, Int n,     \
                             Int k, T alpha, const T* a, Int lda, T beta, T* c, Int ldc) {         \
    tb::serve_cblas<Int>("cblas_" #P "syrk", order,                                                \
                         tb::check_rank_k(order, uplo, trans, n, k, lda, 0, 0, 11, ldc), [&] {     \
                           tb::require_rank_k_addressable(order == CblasRowMajor,                  \
                                                          trans != CblasNoTrans, n, k, lda, 0,     \
                                                          ldc, sizeof(T));                         \
                           tg::P##syrk(tb::layout_of(order), tb::uplo_of(uplo),                    \
                                       tb::trans_of(trans), n, k, alpha, a, lda, beta, c, ldc);    \
                         });                                                                       \
  }                                                                                                \
  void NAME(cblas_##P##syr2k)(CBLAS_ORDER order, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, Int n,    \
                              Int k, T alpha, const T* a, Int lda, const T* b, Int ldb, T beta,    \
                              T* c, Int ldc) {                                                     \
    tb::serve_cblas<Int>(                                                                          \
        "cblas_" #P "syr2k", order,                                                                \
        tb::check_rank_k(order, uplo, trans, n, k, lda, 10, ldb, 13, ldc), [&] {                   \
          tb::require_rank_k_addressable(order == CblasRowMajor, trans != CblasNoTrans, n, k, lda, \
                                         ldb, ldc, sizeof(T));                                     \
          tg::P##syr2k(tb::layout_of(order), tb::uplo_of(uplo), tb::trans_of(trans), n, k, alpha,  \
                       a, lda, b, ldb, beta, c, ldc);                                              \
        });                                                                                        \
  }                                                                                                \
  void NAME(cblas_##P##symm)(CBLAS_ORDER order, CBLAS_SIDE side, CBLAS_UPLO uplo, Int m, Int n,    \
                             T alpha, const T* a, Int lda, const T* b, Int ldb, T beta, T* c,      \
                             Int ldc) {                                                            \
    tb::serve_cblas<Int>("cblas_" #P "symm", order,                                                \
                         tb::check_symm(order, side, uplo, m, n, lda, ldb, ldc), [&] {             \
                           tb::require_side_addressable(order == CblasRowMajor, side == CblasLeft, \
                                                        m, n, lda, ldb, ldc, sizeof(T));           \
                           tg::P##symm(tb::layout_of(order), tb::side_of(side), tb::uplo_of(uplo), \
                                       m, n, alpha, a, lda, b, ldb, beta, c, ldc);                 \
                         });                                                                       \
  }                                                                                                \
  void NAME(cblas_##P##trmm)(CBLAS_ORDER order, CBLAS_SIDE side, CBLAS_UPLO uplo,                  \
                             CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, Int m, Int n, T alpha,        \
                             const T* a, Int lda, T* b, Int ldb) {                                 \
    tb::serve_cblas<Int>(                                                                          \
        "cblas_" #P "trmm", order,                                                                 \
        tb::check_triangular(order, side, uplo, trans, diag, m, n, lda, ldb), [&] {                \
          tb::require_side_addressable(order == CblasRowMajor, side == CblasLeft, m, n, lda, ldb,  \
                                       0, sizeof(T));                                              \
          tg::P##trmm(tb::layout_of(order), tb::side_of(side), tb::uplo_of(uplo),                  \
                      tb::trans_of(trans), tb::diag_of(diag), m, n, alpha, a, lda, b, ldb);        \
        });                                                                                        \
  }                                                                                                \
  void NAME(cblas_##P##trsm)(CBLAS_ORDER order, CBLAS_SIDE side, CBLAS_UPLO uplo,                  \
                             CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, Int m, Int n, T alpha,        \
                             const T* a, Int lda, T* b, Int ldb) {                                 \
    tb::serve_cblas<Int>(                                                                          \
        "cblas_" #P "trsm", order,                                                                 \
        tb::check_triangular(order, side, uplo, trans, diag, m, n, lda, ldb), [&] {                \
          tb::require_side_addressable(order == CblasRowMajor, side == CblasLeft, m, n, lda, ldb,  \
                                       0, sizeof(T));                                              \
          tg::P##trsm(tb::layout_of(order), tb::side_of(side), tb::uplo_of(uplo),                  \
                      tb::trans_of(trans), tb::diag_of(diag), m, n, alpha, a, lda, b, ldb);        \
        });                                                                                        \
  }

extern "C" {
TAIHU_CBLAS_LEVEL3(float, s, int, TAIHU_BLAS_LP64_NAME)
TAIHU_CBLAS_LEVEL3(double, d, int, TAIHU_BLAS_LP64_NAME)
TAIHU_CBLAS_LEVEL3(float, s, taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
TAIHU_CBLAS_LEVEL3(double, d, taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
}
#undef TAIHU_CBLAS_LEVEL3
