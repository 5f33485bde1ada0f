// GEMV-shaped products, threads splitting the output vector.
#include "gemv.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "taihu/arch/threads.hpp"

namespace taihu::gemm {
namespace {

// y (len, unit stride) = alpha * M x + beta * y where M is `rows x cols` column-major
// (transposed: y = M^T x, len == cols; else len == rows).
template <class T>
void gemv_unit(bool transposed, index_t rows, index_t cols, T alpha, const T* mat, index_t ld,
               const T* x, T beta, T* y) {
  const kernels::GemvFn<T> fn = kernels::gemv_of<T>(kernels::active_kernels(), transposed);
  const index_t len = transposed ? cols : rows;
  const double work = static_cast<double>(rows) * static_cast<double>(cols);
  const int threads = work < 65536.0 ? 1 : std::min<int>(arch::threads_for_call(),
                                                         static_cast<int>(len / 64) + 1);
  if (threads <= 1) {
    fn(rows, cols, alpha, mat, ld, x, beta, y, 0, len);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const index_t nt = omp_get_num_threads(), tid = omp_get_thread_num();
    // Split at multiples of 16 so each thread's vector loads stay aligned alike.
    const index_t lo = (len * tid / nt) / 16 * 16;
    const index_t hi = tid == nt - 1 ? len : (len * (tid + 1) / nt) / 16 * 16;
    if (hi > lo) fn(rows, cols, alpha, mat, ld, x, beta, y, lo, hi);
  }
}

}  // namespace

template <class T>
void gemv_path(index_t m, index_t n, index_t k, T alpha, const MatrixView<T>& a,
               const MatrixView<T>& b, T beta, T* c, index_t ldc) {
  // Gather a strided vector into unit stride (x of length k).
  auto gather = [](const T* base, index_t count, index_t stride, std::vector<T>& buf) -> const T* {
    if (stride == 1) return base;
    buf.resize(static_cast<std::size_t>(count));
    for (index_t i = 0; i < count; ++i) buf[i] = base[i * stride];
    return buf.data();
  };
  std::vector<T> xbuf;
  if (n == 1) {
    // c[:, 0] = alpha op(A) x + beta c, x = op(B)[:, 0]; c is contiguous.
    const T* x = gather(b.data, k, b.trans ? b.ld : 1, xbuf);
    if (!a.trans)
      gemv_unit(false, m, k, alpha, a.data, a.ld, x, beta, c);
    else
      gemv_unit(true, k, m, alpha, a.data, a.ld, x, beta, c);
    return;
  }
  // m == 1: c[0, :] = alpha op(B)^T x + beta c, x = op(A)[0, :]; c has stride ldc.
  const T* x = gather(a.data, k, a.trans ? 1 : a.ld, xbuf);
  std::vector<T> ybuf;
  T* y = c;
  if (ldc != 1) {
    ybuf.assign(static_cast<std::size_t>(n), T(0));
    if (beta != T(0))
      for (index_t j = 0; j < n; ++j) ybuf[j] = c[j * ldc];
    y = ybuf.data();
  }
  if (!b.trans)
    gemv_unit(true, k, n, alpha, b.data, b.ld, x, beta, y);   // B is k x n
  else
    gemv_unit(false, n, k, alpha, b.data, b.ld, x, beta, y);  // B is n x k
  if (y != c)
    for (index_t j = 0; j < n; ++j) c[j * ldc] = y[j];
}

template void gemv_path<float>(index_t, index_t, index_t, float, const MatrixView<float>&,
                               const MatrixView<float>&, float, float*, index_t);
template void gemv_path<double>(index_t, index_t, index_t, double, const MatrixView<double>&,
                                const MatrixView<double>&, double, double*, index_t);

}  // namespace taihu::gemm
