// taihu::gemm by element type (sgemm for float, dgemm for double), row-major, for the
// operators templated on T (inner product, LSTM).
#pragma once
#include <type_traits>

#include "taihu/arch/threads.hpp"
#include "taihu/dnn/ops_common.hpp"
#include "taihu/gemm/gemm.hpp"

namespace taihu::dnn::ops {

// C[m][n] = alpha * op(A) op(B) + beta * C, row-major.
template <class T>
void gemm_rm(bool trans_a, bool trans_b, index_t m, index_t n, index_t k, T alpha, const T* a,
             index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc) {
  const auto ta = trans_a ? gemm::Trans::yes : gemm::Trans::no;
  const auto tb = trans_b ? gemm::Trans::yes : gemm::Trans::no;
  if constexpr (std::is_same_v<T, float>)
    gemm::sgemm(gemm::Layout::row_major, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    gemm::dgemm(gemm::Layout::row_major, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// out[j] (+)= sum over rows of a[row][j], a is [rows][cols]; accumulation in double.
template <class T>
void column_sums(index_t rows, index_t cols, const T* a, T* out, bool accumulate) {
#pragma omp parallel for schedule(static) if (rows * cols > 65536) \
    num_threads(arch::threads_for_call())
  for (index_t j0 = 0; j0 < cols; j0 += 64) {
    const index_t j1 = j0 + 64 < cols ? j0 + 64 : cols;
    double acc[64] = {};
    for (index_t r = 0; r < rows; ++r) {
      const T* ar = a + r * cols;
      for (index_t j = j0; j < j1; ++j) acc[j - j0] += static_cast<double>(ar[j]);
    }
    for (index_t j = j0; j < j1; ++j)
      out[j] = static_cast<T>(acc[j - j0]) + (accumulate ? out[j] : T(0));
  }
}

}  // namespace taihu::dnn::ops
