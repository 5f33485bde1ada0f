// Portable reference kernels: plain C++ loops (8x4 tile) the compiler may vectorize
// for the baseline ISA. Used when TAIHU_ISA=generic or on CPUs without AVX2.
#include "kernels/microkernel.hpp"

namespace taihu::gemm::kernels {
namespace {

template <class T, int MR, int NR>
void generic_microkernel(index_t k, T alpha, const T* a, index_t a_step, const T* b, T beta, T* c,
                         index_t ldc) {
  T acc[NR][MR] = {};
  for (index_t p = 0; p < k; ++p, a += a_step, b += NR)
    for (int j = 0; j < NR; ++j)
      for (int i = 0; i < MR; ++i) acc[j][i] += a[i] * b[j];
  for (int j = 0; j < NR; ++j)
    for (int i = 0; i < MR; ++i) {
      T& cij = c[i + j * ldc];
      cij = beta == T(0) ? alpha * acc[j][i] : alpha * acc[j][i] + beta * cij;
    }
}

template <class T>
void generic_gemv_n(index_t /*rows*/, index_t cols, T alpha, const T* a, index_t lda, const T* x,
                    T beta, T* y, index_t row0, index_t row1) {
  for (index_t i = row0; i < row1; ++i) {
    T s = 0;
    for (index_t p = 0; p < cols; ++p) s += a[i + p * lda] * x[p];
    y[i] = beta == T(0) ? alpha * s : alpha * s + beta * y[i];
  }
}

template <class T>
void generic_gemv_t(index_t rows, index_t /*cols*/, T alpha, const T* a, index_t lda, const T* x,
                    T beta, T* y, index_t col0, index_t col1) {
  for (index_t j = col0; j < col1; ++j) {
    T s = 0;
    for (index_t i = 0; i < rows; ++i) s += a[i + j * lda] * x[i];
    y[j] = beta == T(0) ? alpha * s : alpha * s + beta * y[j];
  }
}

}  // namespace

const KernelSet kGenericKernels = {
    {&generic_microkernel<float, 8, 4>, 8, 4},
    {&generic_microkernel<double, 8, 4>, 8, 4},
    &generic_gemv_n<float>, &generic_gemv_t<float>,
    &generic_gemv_n<double>, &generic_gemv_t<double>};

}  // namespace taihu::gemm::kernels
