// gemmt (and through it syrk) and syr2k: the triangle of C by recursive halving. The
// off-diagonal half of each split is one GEMM call; a diagonal block of at most
// kDiagonal columns is one small GEMM into a scratch square whose triangle is then
// added to C, so C's other triangle is never read or written.
#include <algorithm>
#include <cmath>
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

// Column c where the triangle's area left of it is `fraction` of the whole, rounded
// to a multiple of 32: upper columns grow (area c^2 / 2), lower ones shrink.
index_t triangle_cut(bool upper, index_t n, double fraction) {
  const double x = upper ? std::sqrt(fraction) : 1.0 - std::sqrt(1.0 - fraction);
  const auto c = static_cast<index_t>(x * static_cast<double>(n) + 16.0) / 32 * 32;
  return std::clamp<index_t>(c, 0, n);
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
  const double flops = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = slice_threads(flops, n, 128);
  if (threads <= 1) {
    std::vector<T> scratch(static_cast<size_t>(std::min(n, kDiagonal) * std::min(n, kDiagonal)));
    gemmt_rec(upper, n, k, alpha, a, b, beta, c, ldc, scratch);
    return;
  }
  // Column blocks of equal triangle area; each is its diagonal triangle plus the
  // rectangle above (upper) or below (lower) it.
  std::vector<index_t> bounds(static_cast<size_t>(threads) + 1, n);
  bounds[0] = 0;
  for (int t = 1; t < threads; ++t)
    bounds[static_cast<size_t>(t)] = triangle_cut(upper, n, double(t) / threads);
  run_slices(bounds, [&](index_t c0, index_t c1) {
    const index_t w = c1 - c0;
    std::vector<T> scratch(static_cast<size_t>(std::min(w, kDiagonal) * std::min(w, kDiagonal)));
    const OpView<T> b_cols{b.at(0, c0), b.ld, b.trans};
    if (upper) {
      if (c0 > 0) gemm_cm<T>(c0, w, k, alpha, a, b_cols, beta, c + c0 * ldc, ldc);
    } else if (c1 < n) {
      gemm_cm<T>(n - c1, w, k, alpha, OpView<T>{a.at(c1, 0), a.ld, a.trans}, b_cols, beta,
                 c + c1 + c0 * ldc, ldc);
    }
    gemmt_rec(upper, w, k, alpha, OpView<T>{a.at(c0, 0), a.ld, a.trans}, b_cols, beta,
              c + c0 + c0 * ldc, ldc, scratch);
  });
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
