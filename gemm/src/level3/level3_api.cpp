// The public level-3 entry points (taihu/gemm/level3.hpp): argument checks (taihu::Error
// naming the argument), and row major mapped onto the column-major algorithms by the
// usual identities: a row-major matrix is its transpose stored column major, so
//   gemmt: swap A and B and their transpositions, other triangle
//   syrk/syr2k: other triangle, other transposition
//   symm/trmm/trsm: other side, other triangle, m and n swapped (trans unchanged).
#include <string>

#include "level3.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::gemm {
namespace {

void check(bool ok, const char* routine, const char* what) {
  if (!ok) throw Error(std::string("taihu: ") + routine + ": " + what);
}

void check_size(const char* routine, const char* name, index_t value) {
  if (value < 0)
    throw Error(std::string("taihu: ") + routine + ": " + name + " = " + std::to_string(value) +
                " must be >= 0");
}

void check_ld(const char* routine, const char* name, index_t ld, index_t span) {
  if (ld < (span > 1 ? span : 1))
    throw Error(std::string("taihu: ") + routine + ": " + name + " = " + std::to_string(ld) +
                " must be >= max(1, " + std::to_string(span) + ")");
}

void check_enums(const char* routine, Layout layout) {
  check(layout == Layout::row_major || layout == Layout::col_major, routine,
        "layout is not row_major or col_major");
}
void check_enum(const char* routine, Uplo u) {
  check(u == Uplo::upper || u == Uplo::lower, routine, "uplo is not upper or lower");
}
void check_enum(const char* routine, Trans t) {
  check(t == Trans::no || t == Trans::yes, routine, "trans is not Trans::no or Trans::yes");
}
void check_enum(const char* routine, Side s) {
  check(s == Side::left || s == Side::right, routine, "side is not left or right");
}
void check_enum(const char* routine, Diag d) {
  check(d == Diag::unit || d == Diag::non_unit, routine, "diag is not unit or non_unit");
}

// Extent of a stored r x c matrix along its leading dimension.
index_t span(Layout layout, index_t rows, index_t cols) {
  return layout == Layout::row_major ? cols : rows;
}

template <class T>
void gemmt_impl(const char* routine, Layout layout, Uplo uplo, Trans ta, Trans tb, index_t n,
                index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta,
                T* c, index_t ldc) {
  check_enums(routine, layout);
  check_enum(routine, uplo), check_enum(routine, ta), check_enum(routine, tb);
  check_size(routine, "n", n), check_size(routine, "k", k);
  const bool ya = ta == Trans::yes, yb = tb == Trans::yes;
  check_ld(routine, "lda", lda, ya ? span(layout, k, n) : span(layout, n, k));
  check_ld(routine, "ldb", ldb, yb ? span(layout, n, k) : span(layout, k, n));
  check_ld(routine, "ldc", ldc, n);
  bool upper = uplo == Uplo::upper;
  if (layout == Layout::row_major) {
    level3::gemmt<T>(!upper, n, k, alpha, level3::OpView<T>{b, ldb, yb},
                     level3::OpView<T>{a, lda, ya}, beta, c, ldc);
  } else {
    level3::gemmt<T>(upper, n, k, alpha, level3::OpView<T>{a, lda, ya},
                     level3::OpView<T>{b, ldb, yb}, beta, c, ldc);
  }
}

// syrk (b == nullptr) and syr2k.
template <class T>
void rank_k_impl(const char* routine, Layout layout, Uplo uplo, Trans trans, index_t n,
                 index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta,
                 T* c, index_t ldc) {
  check_enums(routine, layout);
  check_enum(routine, uplo), check_enum(routine, trans);
  check_size(routine, "n", n), check_size(routine, "k", k);
  const bool t = trans == Trans::yes;
  const index_t need = t ? span(layout, k, n) : span(layout, n, k);
  check_ld(routine, "lda", lda, need);
  if (b != nullptr) check_ld(routine, "ldb", ldb, need);
  check_ld(routine, "ldc", ldc, n);
  bool upper = uplo == Uplo::upper;
  bool tt = t;
  if (layout == Layout::row_major) upper = !upper, tt = !tt;
  const level3::OpView<T> av{a, lda, tt};
  if (b == nullptr) {
    level3::gemmt<T>(upper, n, k, alpha, av, level3::OpView<T>{a, lda, !tt}, beta, c, ldc);
  } else {
    level3::syr2k<T>(upper, n, k, alpha, av, level3::OpView<T>{b, ldb, tt}, beta, c, ldc);
  }
}

template <class T>
void symm_impl(const char* routine, Layout layout, Side side, Uplo uplo, index_t m, index_t n,
               T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c,
               index_t ldc) {
  check_enums(routine, layout);
  check_enum(routine, side), check_enum(routine, uplo);
  check_size(routine, "m", m), check_size(routine, "n", n);
  const bool left = side == Side::left;
  check_ld(routine, "lda", lda, left ? m : n);
  check_ld(routine, "ldb", ldb, span(layout, m, n));
  check_ld(routine, "ldc", ldc, span(layout, m, n));
  const bool upper = uplo == Uplo::upper;
  if (layout == Layout::row_major) {
    level3::symm<T>(!left, !upper, n, m, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    level3::symm<T>(left, upper, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

template <class T>
void triangular_impl(bool solve, const char* routine, Layout layout, Side side, Uplo uplo,
                     Trans trans, Diag diag, index_t m, index_t n, T alpha, const T* a,
                     index_t lda, T* b, index_t ldb) {
  check_enums(routine, layout);
  check_enum(routine, side), check_enum(routine, uplo), check_enum(routine, trans);
  check_enum(routine, diag);
  check_size(routine, "m", m), check_size(routine, "n", n);
  const bool left = side == Side::left;
  check_ld(routine, "lda", lda, left ? m : n);
  check_ld(routine, "ldb", ldb, span(layout, m, n));
  const bool upper = uplo == Uplo::upper, t = trans == Trans::yes, unit = diag == Diag::unit;
  const bool row = layout == Layout::row_major;
  auto run = solve ? &level3::trsm<T> : &level3::trmm<T>;
  if (row) {
    run(!left, !upper, t, unit, n, m, alpha, a, lda, b, ldb);
  } else {
    run(left, upper, t, unit, m, n, alpha, a, lda, b, ldb);
  }
}

}  // namespace

#define TAIHU_LEVEL3_BOTH(T, P)                                                                 \
  void P##gemmt(Layout layout, Uplo uplo, Trans ta, Trans tb, index_t n, index_t k, T alpha,   \
                const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc) { \
    gemmt_impl<T>(#P "gemmt", layout, uplo, ta, tb, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  \
  }                                                                                             \
  void P##syrk(Layout layout, Uplo uplo, Trans trans, index_t n, index_t k, T alpha, const T* a, \
               index_t lda, T beta, T* c, index_t ldc) {                                        \
    rank_k_impl<T>(#P "syrk", layout, uplo, trans, n, k, alpha, a, lda, nullptr, 0, beta, c,    \
                   ldc);                                                                        \
  }                                                                                             \
  void P##syr2k(Layout layout, Uplo uplo, Trans trans, index_t n, index_t k, T alpha,          \
                const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc) { \
    rank_k_impl<T>(#P "syr2k", layout, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc); \
  }                                                                                             \
  void P##symm(Layout layout, Side side, Uplo uplo, index_t m, index_t n, T alpha, const T* a, \
               index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc) {               \
    symm_impl<T>(#P "symm", layout, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);     \
  }                                                                                             \
  void P##trmm(Layout layout, Side side, Uplo uplo, Trans trans, Diag diag, index_t m,          \
               index_t n, T alpha, const T* a, index_t lda, T* b, index_t ldb) {                \
    triangular_impl<T>(false, #P "trmm", layout, side, uplo, trans, diag, m, n, alpha, a, lda, \
                       b, ldb);                                                                 \
  }                                                                                             \
  void P##trsm(Layout layout, Side side, Uplo uplo, Trans trans, Diag diag, index_t m,          \
               index_t n, T alpha, const T* a, index_t lda, T* b, index_t ldb) {                \
    triangular_impl<T>(true, #P "trsm", layout, side, uplo, trans, diag, m, n, alpha, a, lda,  \
                       b, ldb);                                                                 \
  }

TAIHU_LEVEL3_BOTH(float, s)
TAIHU_LEVEL3_BOTH(double, d)
#undef TAIHU_LEVEL3_BOTH

}  // namespace taihu::gemm
