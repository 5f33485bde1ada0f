// The Fortran 77 level-3 entry points beyond GEMM: ?gemmt_, ?syrk_, ?syr2k_, ?symm_,
// ?trmm_, ?trsm_ (s and d), LP64 and ILP64 (strsm_64_ ...; blas_abi.hpp) from one
// definition, as gfortran calls them (column major, every argument by
// pointer, one hidden size_t length per CHARACTER argument, never read). Arguments are
// checked in reference BLAS's order and numbering (?gemmt_: OpenBLAS's and MKL's);
// a bad call goes to xerbla_ with reference BLAS's 6-character name and returns with
// B/C untouched. Option letters are accepted in either case, as LSAME does.
#include <cctype>
#include <cstdio>

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

char upper_case(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

// Checks that `value` is one of `allowed` (upper-case letters), LSAME-style.
bool bad_letter(Illegal& out, int number, const char* name, char value, const char* allowed) {
  for (const char* p = allowed; *p != '\0'; ++p)
    if (upper_case(value) == *p) return false;
  const auto byte = static_cast<unsigned char>(value);
  if (std::isprint(byte))
    return fail(out, number, name, "%s = '%c', must be one of '%s'", name, value, allowed);
  return fail(out, number, name, "%s = byte 0x%02x, must be one of '%s'", name,
              static_cast<unsigned>(byte), allowed);
}

bool yes(char c) { return upper_case(c) != 'N'; }  // TRANS = 'T' or 'C'

Illegal check_gemmt(char uplo, char ta, char tb, index_t n, index_t k, index_t lda, index_t ldb,
                    index_t ldc) {
  Illegal out;
  if (bad_letter(out, 1, "UPLO", uplo, "UL") || bad_letter(out, 2, "TRANSA", ta, "NTC") ||
      bad_letter(out, 3, "TRANSB", tb, "NTC") || bad_size(out, 4, "N", n) ||
      bad_size(out, 5, "K", k))
    return out;
  bad_leading_dim(out, 8, "LDA", lda, yes(ta) ? "K" : "N", yes(ta) ? k : n, "op(A) is n x k") ||
      bad_leading_dim(out, 10, "LDB", ldb, yes(tb) ? "N" : "K", yes(tb) ? n : k,
                      "op(B) is k x n") ||
      bad_leading_dim(out, 13, "LDC", ldc, "N", n, "C is n x n");
  return out;
}

// syrk (ldb_pos == 0) and syr2k.
Illegal check_rank_k(char uplo, char trans, index_t n, index_t k, index_t lda, int ldb_pos,
                     index_t ldb, int ldc_pos, index_t ldc) {
  Illegal out;
  if (bad_letter(out, 1, "UPLO", uplo, "UL") || bad_letter(out, 2, "TRANS", trans, "NTC") ||
      bad_size(out, 3, "N", n) || bad_size(out, 4, "K", k))
    return out;
  const bool t = yes(trans);
  const char* why = t ? "A is k x n (TRANS = 'T')" : "A is n x k (TRANS = 'N')";
  if (bad_leading_dim(out, 7, "LDA", lda, t ? "K" : "N", t ? k : n, why)) return out;
  if (ldb_pos != 0 && bad_leading_dim(out, ldb_pos, "LDB", ldb, t ? "K" : "N", t ? k : n, why))
    return out;
  bad_leading_dim(out, ldc_pos, "LDC", ldc, "N", n, "C is n x n");
  return out;
}

Illegal check_symm(char side, char uplo, index_t m, index_t n, index_t lda, index_t ldb,
                   index_t ldc) {
  Illegal out;
  if (bad_letter(out, 1, "SIDE", side, "LR") || bad_letter(out, 2, "UPLO", uplo, "UL") ||
      bad_size(out, 3, "M", m) || bad_size(out, 4, "N", n))
    return out;
  const bool left = upper_case(side) == 'L';
  bad_leading_dim(out, 7, "LDA", lda, left ? "M" : "N", left ? m : n, "A is symmetric") ||
      bad_leading_dim(out, 9, "LDB", ldb, "M", m, "B is m x n") ||
      bad_leading_dim(out, 12, "LDC", ldc, "M", m, "C is m x n");
  return out;
}

Illegal check_triangular(char side, char uplo, char trans, char diag, index_t m, index_t n,
                         index_t lda, index_t ldb) {
  Illegal out;
  if (bad_letter(out, 1, "SIDE", side, "LR") || bad_letter(out, 2, "UPLO", uplo, "UL") ||
      bad_letter(out, 3, "TRANSA", trans, "NTC") || bad_letter(out, 4, "DIAG", diag, "UN") ||
      bad_size(out, 5, "M", m) || bad_size(out, 6, "N", n))
    return out;
  const bool left = upper_case(side) == 'L';
  bad_leading_dim(out, 9, "LDA", lda, left ? "M" : "N", left ? m : n, "A is triangular") ||
      bad_leading_dim(out, 11, "LDB", ldb, "M", m, "B is m x n");
  return out;
}

// A bad call goes to the xerbla_ of Int's ABI.
template <typename Int, typename Call>
void serve_fortran(const char* routine, const char* srname, const Illegal& illegal, Call&& call) {
  serve(
      routine, illegal, [&] { report_fortran(abi_of<Int>, srname, illegal); }, call);
}

Uplo uplo_of(char c) { return upper_case(c) == 'U' ? Uplo::upper : Uplo::lower; }
Trans trans_of(char c) { return yes(c) ? Trans::yes : Trans::no; }
Side side_of(char c) { return upper_case(c) == 'L' ? Side::left : Side::right; }
Diag diag_of(char c) { return upper_case(c) == 'U' ? Diag::unit : Diag::non_unit; }

}  // namespace
}  // namespace taihu::blas

namespace tb = taihu::blas;
namespace tg = taihu::gemm;
constexpr auto kCol = tg::Layout::col_major;

#define TAIHU_FORTRAN_LEVEL3(T, P, PU, Int, NAME)                                                  \
  void NAME(P##gemmt_)(const char* uplo, const char* ta, const char* tbt, const Int* n,            \
                       const Int* k, const T* alpha, const T* a, const Int* lda, const T* b,       \
                       const Int* ldb, const T* beta, T* c, const Int* ldc, size_t, size_t,        \
                       size_t) {                                                                   \
    tb::serve_fortran<Int>(                                                                        \
        #PU "GEMMT", #PU "GEMMT", tb::check_gemmt(*uplo, *ta, *tbt, *n, *k, *lda, *ldb, *ldc),     \
        [&] {                                                                                      \
          tb::require_gemm_addressable(false, tb::yes(*ta), tb::yes(*tbt), *n, *n, *k, *lda, *ldb, \
                                       *ldc, sizeof(T), sizeof(T));                                \
          tg::P##gemmt(kCol, tb::uplo_of(*uplo), tb::trans_of(*ta), tb::trans_of(*tbt), *n, *k,    \
                       *alpha, a, *lda, b, *ldb, *beta, c, *ldc);                                  \
        });                                                                                        \
  }                                                                                                \
  void NAME(P##syrk_)(const char* uplo, const char* trans, const Int* n, const Int* k,             \
                      const T* alpha, const T* a, const Int* lda, const T* beta, T* c,             \
                      const Int* ldc, size_t, size_t) {                                            \
    tb::serve_fortran<Int>(#PU "SYRK", #PU "SYRK ",                                                \
                           tb::check_rank_k(*uplo, *trans, *n, *k, *lda, 0, 0, 10, *ldc), [&] {    \
                             tb::require_rank_k_addressable(false, tb::yes(*trans), *n, *k, *lda,  \
                                                            0, *ldc, sizeof(T));                   \
                             tg::P##syrk(kCol, tb::uplo_of(*uplo), tb::trans_of(*trans), *n, *k,   \
                                         *alpha, a, *lda, *beta, c, *ldc);                         \
                           });                                                                     \
  }                                                                                                \
  void NAME(P##syr2k_)(const char* uplo, const char* trans, const Int* n, const Int* k,            \
                       const T* alpha, const T* a, const Int* lda, const T* b, const Int* ldb,     \
                       const T* beta, T* c, const Int* ldc, size_t, size_t) {                      \
    tb::serve_fortran<Int>(#PU "SYR2K", #PU "SYR2K",                                               \
                           tb::check_rank_k(*uplo, *trans, *n, *k, *lda, 9, *ldb, 12, *ldc), [&] { \
                             tb::require_rank_k_addressable(false, tb::yes(*trans), *n, *k, *lda,  \
                                                            *ldb, *ldc, sizeof(T));                \
                             tg::P##syr2k(kCol, tb::uplo_of(*uplo), tb::trans_of(*trans), *n, *k,  \
                                          *alpha, a, *lda, b, *ldb, *beta, c, *ldc);               \
                           });                                                                     \
  }                                                                                                \
  void NAME(P##symm_)(const char* side, const char* uplo, const Int* m, const Int* n,              \
                      const T* alpha, const T* a, const Int* lda, const T* b, const Int* ldb,      \
                      const T* beta, T* c, const Int* ldc, size_t, size_t) {                       \
    tb::serve_fortran<Int>(                                                                        \
        #PU "SYMM", #PU "SYMM ", tb::check_symm(*side, *uplo, *m, *n, *lda, *ldb, *ldc), [&] {     \
          tb::require_side_addressable(false, tb::side_of(*side) == tg::Side::left, *m, *n, *lda,  \
                                       *ldb, *ldc, sizeof(T));                                     \
          tg::P##symm(kCol, tb::side_of(*side), tb::uplo_of(*uplo), *m, *n, *alpha, a, *lda, b,    \
                      *ldb, *beta, c, *ldc);                                                       \
        });                                                                                        \
  }                                                                                                \
  void NAME(P##trmm_)(const char* side, const char* uplo, const char* trans, const char* diag,     \
                      const Int* m, const Int* n, const T* alpha, const T* a, const Int* lda,      \
                      T* b, const Int* ldb, size_t, size_t, size_t, size_t) {                      \
    tb::serve_fortran<Int>(                                                                        \
        #PU "TRMM", #PU "TRMM ",                                                                   \
        tb::check_triangular(*side, *uplo, *trans, *diag, *m, *n, *lda, *ldb), [&] {               \
          tb::require_side_addressable(false, tb::side_of(*side) == tg::Side::left, *m, *n, *lda,  \
                                       *ldb, 0, sizeof(T));                                        \
          tg::P##trmm(kCol, tb::side_of(*side), tb::uplo_of(*uplo), tb::trans_of(*trans),          \
                      tb::diag_of(*diag), *m, *n, *alpha, a, *lda, b, *ldb);                       \
        });                                                                                        \
  }                                                                                                \
  void NAME(P##trsm_)(const char* side, const char* uplo, const char* trans, const char* diag,     \
                      const Int* m, const Int* n, const T* alpha, const T* a, const Int* lda,      \
                      T* b, const Int* ldb, size_t, size_t, size_t, size_t) {                      \
    tb::serve_fortran<Int>(                                                                        \
        #PU "TRSM", #PU "TRSM ",                                                                   \
        tb::check_triangular(*side, *uplo, *trans, *diag, *m, *n, *lda, *ldb), [&] {               \
          tb::require_side_addressable(false, tb::side_of(*side) == tg::Side::left, *m, *n, *lda,  \
                                       *ldb, 0, sizeof(T));                                        \
          tg::P##trsm(kCol, tb::side_of(*side), tb::uplo_of(*uplo), tb::trans_of(*trans),          \
                      tb::diag_of(*diag), *m, *n, *alpha, a, *lda, b, *ldb);                       \
        });                                                                                        \
  }

extern "C" {
TAIHU_FORTRAN_LEVEL3(float, s, S, int, TAIHU_BLAS_LP64_NAME)
TAIHU_FORTRAN_LEVEL3(double, d, D, int, TAIHU_BLAS_LP64_NAME)
TAIHU_FORTRAN_LEVEL3(float, s, S, taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
TAIHU_FORTRAN_LEVEL3(double, d, D, taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
}
#undef TAIHU_FORTRAN_LEVEL3
