// gemmt (and through it syrk) and syr2k: the triangle of C as one pass of the GEMM
// driver's B-resident loops that computes only the micro-tiles reaching the triangle
// (Part::lower / Part::upper in driver.hpp); tiles on the diagonal run the kernel into
// a scratch tile whose triangle is merged, so C's other triangle is never read or
// written. This replaced recursive halving into GEMM calls with 96-column diagonal
// squares (2048, 1 thread: sgemmt 0.75-0.79x -> see bench/results/
// 2026-11-28-xeon-gemm-level3-vs-mkl.md): each operand block is packed once per pass
// instead of once per recursion level, and no square is computed twice.
#include <algorithm>
#include <cmath>

#include "../driver.hpp"
#include "../kernels/microkernel.hpp"
#include "level3.hpp"

namespace taihu::gemm::level3 {
namespace {

template <class T>
void scale_triangle(bool upper, index_t n, T beta, T* c, index_t ldc) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < n; ++j) {
    const index_t lo = upper ? 0 : j;
    const index_t hi = upper ? j + 1 : n;
    scale(hi - lo, index_t{1}, beta, c + lo + j * ldc, ldc);
  }
}

// The `upper` (or lower) triangle of the n x n block at c: one driver call whose
// B-resident loops skip the micro-tiles outside the triangle and merge only the
// triangle's entries of the tiles on the diagonal (one thread: callers split threads).
template <class T>
void triangle_block(bool upper, index_t n, index_t k, T alpha, const OpView<T>& a, const OpView<T>& b,
                    T beta, T* c, index_t ldc) {
  Problem<T> pr;
  pr.m = n, pr.n = n, pr.k = k, pr.alpha = alpha, pr.beta = beta;
  pr.a = MatrixView<T>{a.p, a.ld, a.trans};
  pr.b = MatrixView<T>{b.p, b.ld, b.trans};
  pr.c = c, pr.ldc = ldc;
  pr.part = upper ? Part::upper : Part::lower;
  run_driver(pr, kernels::microkernel_of<T>(kernels::active_kernels()), 1);
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
    triangle_block(upper, n, k, alpha, a, b, beta, c, ldc);
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
    const OpView<T> b_cols{b.at(0, c0), b.ld, b.trans};
    if (upper) {
      if (c0 > 0) gemm_cm<T>(c0, w, k, alpha, a, b_cols, beta, c + c0 * ldc, ldc);
    } else if (c1 < n) {
      gemm_cm<T>(n - c1, w, k, alpha, OpView<T>{a.at(c1, 0), a.ld, a.trans}, b_cols, beta,
                 c + c1 + c0 * ldc, ldc);
    }
    triangle_block(upper, w, k, alpha, OpView<T>{a.at(c0, 0), a.ld, a.trans}, b_cols, beta,
                   c + c0 + c0 * ldc, ldc);
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
