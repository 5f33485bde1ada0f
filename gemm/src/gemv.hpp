// The matrix-vector path for products with n == 1 or m == 1 (e.g. a batch-1 fully
// connected layer): no packing, one pass over the matrix at memory bandwidth.
#pragma once
#include "packing.hpp"
#include "kernels/microkernel.hpp"

namespace taihu::gemm {

// Column-major C (m x n, m == 1 or n == 1) = alpha op(A) op(B) + beta C; k >= 1.
template <class T>
void gemv_path(index_t m, index_t n, index_t k, T alpha, const MatrixView<T>& a,
               const MatrixView<T>& b, T beta, T* c, index_t ldc);

}  // namespace taihu::gemm
