// gemmt (and through it syrk) and syr2k: the triangle of C by recursive halving. The
// off-diagonal half of each split is one GEMM call; a diagonal block of at most
// kDiagonal columns is one small GEMM into a scratch square whose triangle is then
// added to C, so C's other triangle is never read or written.
#include <algorithm>
#include <vector>

#include "level3.hpp"

namespace taihu::gemm::level3 {
namespace {

constexpr index_t kDiagonal = 96;

// The split point: half of n rounded up to a multiple of 32 (GEMM-friendly panels).
index_t split(index_t n) { return std::min(n - 1, (n / 2 + 31) / 32 * 32); }

template <class T>
void scale_triangle(bool upper, index_t n, T beta, T* c, index_t ldc) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < n; ++j) {
    const index_t lo = upper ? 0 : j;
    const index_t hi = upper ? j + 1 : n;
    scale(hi - lo, index_t{1}, beta, c + lo + j * ldc, ldc);
  }
}

template <class T>
void diagonal_block(bool upper, index_t n, index_t k, T alpha, const OpView<T>& a,
                    const OpView<T>& b, T beta, T* c, index_t ldc, std::vector<T>& scratch) {
  T* t = scratch.data();
  gemm_cm<T>(n, n, k, alpha, a, b, T(0), t, n);
  for (index_t j = 0; j < n; ++j) {
    const index_t lo = upper ? 0 : j;
    const index_t hi = upper ? j + 1 : n;
    T* col = c + j * ldc;
    const T* tcol = t + j * n;
    if (beta == T(0)) {
      for (index_t i = lo; i < hi; ++i) col[i] = tcol[i];
    } else {
      for (index_t i = lo; i < hi; ++i) col[i] = beta * col[i] + tcol[i];
    }
  }
}

template <class T>
void gemmt_rec(bool upper, index_t n, index_t k, T alpha, const OpView<T>& a, const OpView<T>& b,
               T beta, T* c, index_t ldc, std::vector<T>& scratch) {
  if (n <= kDiagonal) {
    diagonal_block(upper, n, k, alpha, a, b, beta, c, ldc, scratch);
    return;
  }
  const index_t n1 = split(n);
  const index_t n2 = n - n1;
  gemmt_rec(upper, n1, k, alpha, a, b, beta, c, ldc, scratch);
  if (upper) {  // C12 = op(A)(0:n1, :) op(B)(:, n1:n)
    gemm_cm<T>(n1, n2, k, alpha, a, OpView<T>{b.at(0, n1), b.ld, b.trans}, beta, c + n1 * ldc,
               ldc);
  } else {  // C21 = op(A)(n1:n, :) op(B)(:, 0:n1)
    gemm_cm<T>(n2, n1, k, alpha, OpView<T>{a.at(n1, 0), a.ld, a.trans}, b, beta, c + n1, ldc);
  }
  gemmt_rec(upper, n2, k, alpha, OpView<T>{a.at(n1, 0), a.ld, a.trans},
            OpView<T>{b.at(0, n1), b.ld, b.trans}, beta, c + n1 + n1 * ldc, ldc, scratch);
}

}  // namespace

template <class T>
void gemmt(bool upper, index_t n, index_t k, T alpha, OpView<T> a, OpView<T> b, T beta, T* c,
           index_t ldc) {
  if (n == 0) return;
  if (alpha == T(0) || k == 0) {
    scale_triangle(upper, n, beta, c, ldc);
    return;
  }
  const index_t d = std::min(n, kDiagonal);
  std::vector<T> scratch(static_cast<size_t>(d * d));
  gemmt_rec(upper, n, k, alpha, a, b, beta, c, ldc, scratch);
}

template <class T>
void syr2k(bool upper, index_t n, index_t k, T alpha, OpView<T> a, OpView<T> b, T beta, T* c,
           index_t ldc) {
  // op(B)^T and op(A)^T as views: the same storage, the other transposition.
  const OpView<T> bt{b.p, b.ld, !b.trans};
  const OpView<T> at{a.p, a.ld, !a.trans};
  gemmt(upper, n, k, alpha, a, bt, beta, c, ldc);
  if (alpha != T(0) && k != 0) gemmt(upper, n, k, alpha, b, at, T(1), c, ldc);
}

template void gemmt<float>(bool, index_t, index_t, float, OpView<float>, OpView<float>, float,
                           float*, index_t);
template void gemmt<double>(bool, index_t, index_t, double, OpView<double>, OpView<double>,
                            double, double*, index_t);
template void syr2k<float>(bool, index_t, index_t, float, OpView<float>, OpView<float>, float,
                           float*, index_t);
template void syr2k<double>(bool, index_t, index_t, double, OpView<double>, OpView<double>,
                            double, double*, index_t);

}  // namespace taihu::gemm::level3
