// trmm and trsm by recursive halving of the triangle (as ReLAPACK and BLIS's trsm
// variants): each split turns the off-diagonal block into one GEMM update of the other
// half of B. A diagonal block of at most kDiagonal is expanded into a dense square
// (zeros outside the triangle, ones on a unit diagonal; inverted by substitution for
// trsm, as OpenBLAS's trsm kernels use the inverted diagonal) and applied to a copy of
// its slice of B by one more GEMM. Only A's `uplo` triangle is read (and not its
// diagonal when unit); B outside its m x n block is never touched.
#include <algorithm>
#include <vector>

#include "level3.hpp"

namespace taihu::gemm::level3 {
namespace {

constexpr index_t kDiagonal = 64;

index_t split(index_t n) { return std::min(n - 1, (n / 2 + 31) / 32 * 32); }

template <class T>
struct Triangle {
  OpView<T> op;    // op(A)
  bool lower;      // op(A) is lower triangular (uplo and trans together)
  bool unit;
  bool solve;      // trsm (else trmm)
  bool left;
  index_t other;   // B's extent along the side A does not multiply (n if left, m if right)
  std::vector<T> dense;  // kDiagonal^2
  std::vector<T> copy;   // kDiagonal * other
};

// dense (s x s) := op(A)(o:o+s, o:o+s) as a full square, inverted for trsm.
template <class T>
void expand_diagonal(Triangle<T>& tr, index_t o, index_t s) {
  T* d = tr.dense.data();
  for (index_t j = 0; j < s; ++j)
    for (index_t i = 0; i < s; ++i) {
      const bool inside = tr.lower ? i > j : i < j;
      d[i + j * s] = inside ? tr.op(o + i, o + j) : T(0);
    }
  for (index_t i = 0; i < s; ++i) d[i + i * s] = tr.unit ? T(1) : tr.op(o + i, o + i);
  if (!tr.solve) return;
  // Column j of the inverse solves D x = e_j; x overwrites a copy of e_j.
  std::vector<T> inv(static_cast<size_t>(s * s), T(0));
  for (index_t j = 0; j < s; ++j) {
    T* x = inv.data() + j * s;
    x[j] = T(1);
    if (tr.lower) {
      for (index_t l = j; l < s; ++l) {
        x[l] /= d[l + l * s];
        for (index_t i = l + 1; i < s; ++i) x[i] -= d[i + l * s] * x[l];
      }
    } else {
      for (index_t l = j; l >= 0; --l) {
        x[l] /= d[l + l * s];
        for (index_t i = 0; i < l; ++i) x[i] -= d[i + l * s] * x[l];
      }
    }
  }
  std::copy(inv.begin(), inv.end(), tr.dense.begin());
}

// B's slice := alpha dense B's slice (left) or alpha B's slice dense (right).
template <class T>
void diagonal_block(Triangle<T>& tr, index_t o, index_t s, T alpha, T* b, index_t ldb) {
  expand_diagonal(tr, o, s);
  const index_t rows = tr.left ? s : tr.other;
  const index_t cols = tr.left ? tr.other : s;
  T* copy = tr.copy.data();
  for (index_t j = 0; j < cols; ++j) std::copy(b + j * ldb, b + j * ldb + rows, copy + j * rows);
  const OpView<T> d{tr.dense.data(), s, false};
  const OpView<T> c{copy, rows, false};
  if (tr.left) {
    gemm_cm<T>(s, cols, s, alpha, d, c, T(0), b, ldb);
  } else {
    gemm_cm<T>(rows, s, s, alpha, c, d, T(0), b, ldb);
  }
}

// The triangle op(A)(o:o+s, o:o+s) applied to B's slice starting at b.
template <class T>
void recurse(Triangle<T>& tr, index_t o, index_t s, T alpha, T* b, index_t ldb) {
  if (s <= kDiagonal) {
    diagonal_block(tr, o, s, alpha, b, ldb);
    return;
  }
  const index_t s1 = split(s);
  const index_t s2 = s - s1;
  T* b1 = b;
  T* b2 = tr.left ? b + s1 : b + s1 * ldb;
  const OpView<T> a12{tr.op.at(o, o + s1), tr.op.ld, tr.op.trans};  // s1 x s2
  const OpView<T> a21{tr.op.at(o + s1, o), tr.op.ld, tr.op.trans};  // s2 x s1
  const OpView<T> v1{b1, ldb, false};
  const OpView<T> v2{b2, ldb, false};
  const index_t other = tr.other;
  // Whether the first half is done first: the half whose result the other needs.
  // trsm: lower-left and upper-right solve B1 first; trmm the opposite, since it needs
  // the other half's old values.
  const bool first_half_first = tr.solve ? (tr.lower == tr.left) : (tr.lower != tr.left);
  if (tr.solve) {
    if (first_half_first) {
      recurse(tr, o, s1, alpha, b1, ldb);
      if (tr.left) gemm_cm<T>(s2, other, s1, T(-1), a21, v1, alpha, b2, ldb);
      else gemm_cm<T>(other, s2, s1, T(-1), v1, a12, alpha, b2, ldb);
      recurse(tr, o + s1, s2, T(1), b2, ldb);
    } else {
      recurse(tr, o + s1, s2, alpha, b2, ldb);
      if (tr.left) gemm_cm<T>(s1, other, s2, T(-1), a12, v2, alpha, b1, ldb);
      else gemm_cm<T>(other, s1, s2, T(-1), v2, a21, alpha, b1, ldb);
      recurse(tr, o, s1, T(1), b1, ldb);
    }
  } else if (first_half_first) {  // B1 := A11 B1 + A12 B2 (left upper), B1 A11 + B2 A21
    recurse(tr, o, s1, alpha, b1, ldb);
    if (tr.left) gemm_cm<T>(s1, other, s2, alpha, a12, v2, T(1), b1, ldb);
    else gemm_cm<T>(other, s1, s2, alpha, v2, a21, T(1), b1, ldb);
    recurse(tr, o + s1, s2, alpha, b2, ldb);
  } else {  // B2 := A21 B1 + A22 B2 (left lower), B1 A12 + B2 A22 (right upper)
    recurse(tr, o + s1, s2, alpha, b2, ldb);
    if (tr.left) gemm_cm<T>(s2, other, s1, alpha, a21, v1, T(1), b2, ldb);
    else gemm_cm<T>(other, s2, s1, alpha, v1, a12, T(1), b2, ldb);
    recurse(tr, o, s1, alpha, b1, ldb);
  }
}

template <class T>
void triangular_serial(bool solve, bool left, bool upper, bool trans, bool unit, index_t m,
                       index_t n, T alpha, const T* a, index_t lda, T* b, index_t ldb) {
  const index_t order = left ? m : n;
  Triangle<T> tr{OpView<T>{a, lda, trans}, upper == trans, unit, solve, left, left ? n : m, {},
                 {}};
  const index_t d = std::min(order, kDiagonal);
  tr.dense.resize(static_cast<size_t>(d * d));
  tr.copy.resize(static_cast<size_t>(d * tr.other));
  recurse(tr, 0, order, alpha, b, ldb);
}

// B's columns (left) or rows (right) are independent problems: one slice per thread.
template <class T>
void triangular(bool solve, bool left, bool upper, bool trans, bool unit, index_t m, index_t n,
                T alpha, const T* a, index_t lda, T* b, index_t ldb) {
  if (m == 0 || n == 0) return;
  if (alpha == T(0)) {
    scale(m, n, T(0), b, ldb);
    return;
  }
  const index_t order = left ? m : n, other = left ? n : m;
  const double flops = static_cast<double>(order) * static_cast<double>(order) * static_cast<double>(other);
  const int threads = slice_threads(flops, other, 64);
  if (threads <= 1) {
    triangular_serial(solve, left, upper, trans, unit, m, n, alpha, a, lda, b, ldb);
    return;
  }
  run_slices(even_bounds(other, threads, 16), [&](index_t lo, index_t hi) {
    if (left) {
      triangular_serial(solve, left, upper, trans, unit, m, hi - lo, alpha, a, lda, b + lo * ldb, ldb);
    } else {
      triangular_serial(solve, left, upper, trans, unit, hi - lo, n, alpha, a, lda, b + lo, ldb);
    }
  });
}

}  // namespace

template <class T>
void trmm(bool left, bool upper, bool trans, bool unit, index_t m, index_t n, T alpha,
          const T* a, index_t lda, T* b, index_t ldb) {
  triangular(false, left, upper, trans, unit, m, n, alpha, a, lda, b, ldb);
}

template <class T>
void trsm(bool left, bool upper, bool trans, bool unit, index_t m, index_t n, T alpha,
          const T* a, index_t lda, T* b, index_t ldb) {
  triangular(true, left, upper, trans, unit, m, n, alpha, a, lda, b, ldb);
}

template void trmm<float>(bool, bool, bool, bool, index_t, index_t, float, const float*, index_t,
                          float*, index_t);
template void trmm<double>(bool, bool, bool, bool, index_t, index_t, double, const double*,
                           index_t, double*, index_t);
template void trsm<float>(bool, bool, bool, bool, index_t, index_t, float, const float*, index_t,
                          float*, index_t);
template void trsm<double>(bool, bool, bool, bool, index_t, index_t, double, const double*,
                           index_t, double*, index_t);

}  // namespace taihu::gemm::level3
