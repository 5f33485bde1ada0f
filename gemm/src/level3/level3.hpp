// The column-major level-3 algorithms behind taihu/gemm/level3.hpp (level3_api.cpp maps
// row major onto them and checks arguments). Nearly all of their flops run in the GEMM
// micro-kernels: through GEMM calls into the five-loop driver (recursive or
// panel-blocked splits), a triangle-only pass of the driver (gemmt/syrk/syr2k), or
// trsm's fused diagonal-block solve.
// Threads: a call big enough for several threads cuts its output into independent
// slices of equal work (trsm/trmm/symm: B's or C's columns or rows; gemmt/syrk/syr2k:
// column blocks of the triangle) and runs one slice per thread in a single parallel
// region, each slice's GEMM calls single-threaded inside it (arch::threads_for_call() is
// 1 there). Many small GEMM calls each opening their own region cost more than the
// split's duplicated packing of the shared operand.
#pragma once
#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "taihu/arch/threads.hpp"

#include "taihu/gemm/gemm.hpp"
#include "taihu/gemm/level3.hpp"

namespace taihu::gemm::level3 {

// op(X) of a stored column-major matrix: the block of op(X) at (i, j) and its entries.
template <class T>
struct OpView {
  const T* p;
  index_t ld;
  bool trans;
  const T* at(index_t i, index_t j) const { return trans ? p + j + i * ld : p + i + j * ld; }
  T operator()(index_t i, index_t j) const { return *at(i, j); }
  Trans t() const { return trans ? Trans::yes : Trans::no; }
};

// Column-major GEMM on op-views: C (m x n) := alpha op(A) op(B) + beta C.
template <class T>
void gemm_cm(index_t m, index_t n, index_t k, T alpha, const OpView<T>& a, const OpView<T>& b,
             T beta, T* c, index_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(Layout::col_major, a.t(), b.t(), m, n, k, alpha, a.p, a.ld, b.p, b.ld, beta, c, ldc);
  } else {
    dgemm(Layout::col_major, a.t(), b.t(), m, n, k, alpha, a.p, a.ld, b.p, b.ld, beta, c, ldc);
  }
}

// C := beta C over the m x n block (beta == 0 writes zeros without reading C).
template <class T>
void scale(index_t m, index_t n, T beta, T* c, index_t ldc) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < n; ++j) {
    T* col = c + j * ldc;
    if (beta == T(0)) {
      for (index_t i = 0; i < m; ++i) col[i] = T(0);
    } else {
      for (index_t i = 0; i < m; ++i) col[i] *= beta;
    }
  }
}

// Threads for a level-3 call of `flops` whose output splits along `extent` into slices
// of at least `min_slice`: 1 (serial, the GEMM calls thread themselves) when small.
inline int slice_threads(double flops, index_t extent, index_t min_slice) {
  const int available = arch::threads_for_call();
  if (available <= 1 || flops < 3.0e7) return 1;
  return static_cast<int>(std::min<index_t>(available, std::max<index_t>(1, extent / min_slice)));
}

// Runs part(lo, hi) on the ranges [bounds[t], bounds[t + 1]), one thread each, in one
// parallel region.
template <class F>
void run_slices(const std::vector<index_t>& bounds, F&& part) {
  const int parts = static_cast<int>(bounds.size()) - 1;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t)
    if (bounds[t + 1] > bounds[t]) part(bounds[t], bounds[t + 1]);
}

// `parts` equal ranges of [0, extent), cut at multiples of `align`.
inline std::vector<index_t> even_bounds(index_t extent, int parts, index_t align) {
  std::vector<index_t> b(static_cast<size_t>(parts) + 1, extent);
  b[0] = 0;
  for (int t = 1; t < parts; ++t)
    b[static_cast<size_t>(t)] = std::min(extent, (extent * t / parts + align / 2) / align * align);
  return b;
}

// The `upper` (or lower) triangle of n x n C := alpha op(A) op(B) + beta C.
template <class T>
void gemmt(bool upper, index_t n, index_t k, T alpha, OpView<T> a, OpView<T> b, T beta, T* c,
           index_t ldc);

// The triangle of C := alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C; op(A) is n x k.
template <class T>
void syr2k(bool upper, index_t n, index_t k, T alpha, OpView<T> a, OpView<T> b, T beta, T* c,
           index_t ldc);

template <class T>
void symm(bool left, bool upper, index_t m, index_t n, T alpha, const T* a, index_t lda,
          const T* b, index_t ldb, T beta, T* c, index_t ldc);

template <class T>
void trmm(bool left, bool upper, bool trans, bool unit, index_t m, index_t n, T alpha,
          const T* a, index_t lda, T* b, index_t ldb);

template <class T>
void trsm(bool left, bool upper, bool trans, bool unit, index_t m, index_t n, T alpha,
          const T* a, index_t lda, T* b, index_t ldb);

}  // namespace taihu::gemm::level3
