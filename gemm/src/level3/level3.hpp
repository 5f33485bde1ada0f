// The column-major level-3 algorithms behind taihu/gemm/level3.hpp (level3_api.cpp maps
// row major onto them and checks arguments). Each is recursive or panel-blocked so that
// nearly all of its flops are GEMM calls into the five-loop driver.
#pragma once
#include <type_traits>

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
