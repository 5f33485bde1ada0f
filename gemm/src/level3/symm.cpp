// symm: C := alpha A B + beta C (left) or alpha B A + beta C (right), A symmetric with
// one triangle stored. A is expanded, kPanel columns (left) or rows (right) at a time,
// into a full general panel, and each panel is one GEMM call accumulating into C.
#include <algorithm>
#include <vector>

#include "level3.hpp"

namespace taihu::gemm::level3 {
namespace {

constexpr index_t kPanel = 256;

// The full symmetric matrix's (i, j) from the stored `upper` or lower triangle.
template <class T>
T sym(bool upper, const T* a, index_t lda, index_t i, index_t j) {
  const bool stored = upper ? i <= j : i >= j;
  return stored ? a[i + j * lda] : a[j + i * lda];
}

template <class T>
void symm_serial(bool left, bool upper, index_t m, index_t n, T alpha, const T* a, index_t lda,
                 const T* b, index_t ldb, T beta, T* c, index_t ldc) {
  const index_t order = left ? m : n;  // A is order x order
  const index_t width = std::min(order, kPanel);
  std::vector<T> panel(static_cast<size_t>(order * width));
  for (index_t p0 = 0; p0 < order; p0 += width) {
    const index_t w = std::min(width, order - p0);
    const T b_beta = p0 == 0 ? beta : T(1);
    if (left) {  // panel = A(:, p0:p0+w), order x w; C += alpha panel B(p0:p0+w, :)
      for (index_t j = 0; j < w; ++j)
        for (index_t i = 0; i < order; ++i) panel[i + j * order] = sym(upper, a, lda, i, p0 + j);
      gemm_cm<T>(m, n, w, alpha, OpView<T>{panel.data(), order, false},
                 OpView<T>{b + p0, ldb, false}, b_beta, c, ldc);
    } else {  // panel = A(p0:p0+w, :), w x order; C += alpha B(:, p0:p0+w) panel
      for (index_t j = 0; j < order; ++j)
        for (index_t i = 0; i < w; ++i) panel[i + j * w] = sym(upper, a, lda, p0 + i, j);
      gemm_cm<T>(m, n, w, alpha, OpView<T>{b + p0 * ldb, ldb, false},
                 OpView<T>{panel.data(), w, false}, b_beta, c, ldc);
    }
  }
}

}  // namespace

template <class T>
void symm(bool left, bool upper, index_t m, index_t n, T alpha, const T* a, index_t lda,
          const T* b, index_t ldb, T beta, T* c, index_t ldc) {
  if (m == 0 || n == 0) return;
  if (alpha == T(0)) {
    scale(m, n, beta, c, ldc);
    return;
  }
  // Slices of C's columns (left: C = A B) or rows (right: C = B A), one per thread.
  const index_t other = left ? n : m;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(left ? m : n);
  const int threads = slice_threads(flops, other, 64);
  if (threads <= 1) {
    symm_serial(left, upper, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  run_slices(even_bounds(other, threads, 16), [&](index_t lo, index_t hi) {
    if (left) {
      symm_serial(left, upper, m, hi - lo, alpha, a, lda, b + lo * ldb, ldb, beta, c + lo * ldc, ldc);
    } else {
      symm_serial(left, upper, hi - lo, n, alpha, a, lda, b + lo, ldb, beta, c + lo, ldc);
    }
  });
}

template void symm<float>(bool, bool, index_t, index_t, float, const float*, index_t,
                          const float*, index_t, float, float*, index_t);
template void symm<double>(bool, bool, index_t, index_t, double, const double*, index_t,
                           const double*, index_t, double, double*, index_t);

}  // namespace taihu::gemm::level3
