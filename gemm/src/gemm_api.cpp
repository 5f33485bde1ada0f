// The public entry points: argument checks (xerbla-style messages naming the CBLAS
// parameter), row-major to column-major mapping, degenerate cases, and the choice
// between the GEMV path and the five-loop driver.
#include <omp.h>

#include <algorithm>
#include <string>

#include "driver.hpp"
#include "gemv.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm {
namespace {

[[noreturn]] void bad_parameter(const char* routine, int number, const char* name, index_t value,
                                const std::string& rule) {
  throw Error(std::string("taihu: ") + routine + ": parameter " + std::to_string(number) + " (" +
              name + ") = " + std::to_string(value) + " " + rule);
}

void check_args(const char* routine, Layout layout, Trans ta, Trans tb, index_t m, index_t n,
                index_t k, index_t lda, index_t ldb, index_t ldc) {
  if (layout != Layout::row_major && layout != Layout::col_major)
    bad_parameter(routine, 1, "layout", static_cast<index_t>(layout), "is not row_major or col_major");
  if (ta != Trans::no && ta != Trans::yes)
    bad_parameter(routine, 2, "trans_a", static_cast<index_t>(ta), "is not Trans::no or Trans::yes");
  if (tb != Trans::no && tb != Trans::yes)
    bad_parameter(routine, 3, "trans_b", static_cast<index_t>(tb), "is not Trans::no or Trans::yes");
  if (m < 0) bad_parameter(routine, 4, "m", m, "must be >= 0");
  if (n < 0) bad_parameter(routine, 5, "n", n, "must be >= 0");
  if (k < 0) bad_parameter(routine, 6, "k", k, "must be >= 0");
  const bool row = layout == Layout::row_major;
  // Stored rows (column-major) or stored columns (row-major) the leading dimension spans.
  const index_t a_span = row ? (ta == Trans::no ? k : m) : (ta == Trans::no ? m : k);
  const index_t b_span = row ? (tb == Trans::no ? n : k) : (tb == Trans::no ? k : n);
  const index_t c_span = row ? n : m;
  auto need = [&](int number, const char* name, index_t ld, index_t span) {
    if (ld < std::max<index_t>(1, span))
      bad_parameter(routine, number, name, ld,
                    "must be >= max(1, " + std::to_string(span) + ")");
  };
  need(9, "lda", lda, a_span);
  need(11, "ldb", ldb, b_span);
  need(14, "ldc", ldc, c_span);
}

template <class T>
void gemm_impl(const char* routine, Layout layout, Trans ta, Trans tb, index_t m, index_t n,
               index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c,
               index_t ldc, int threads) {
  check_args(routine, layout, ta, tb, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (c == nullptr) throw Error(std::string("taihu: ") + routine + ": parameter 13 (c) is null");
  const bool reads_ab = k > 0 && alpha != T(0);
  if (reads_ab && (a == nullptr || b == nullptr))
    throw Error(std::string("taihu: ") + routine + ": parameter " + (a ? "10 (b)" : "8 (a)") +
                " is null");
  if (layout == Layout::row_major) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
    std::swap(m, n);
    std::swap(a, b);
    std::swap(lda, ldb);
    std::swap(ta, tb);
  }
  if (!reads_ab) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  const MatrixView<T> av{a, lda, ta == Trans::yes};
  const MatrixView<T> bv{b, ldb, tb == Trans::yes};
  if (m == 1 || n == 1) {
    gemv_path(m, n, k, alpha, av, bv, beta, c, ldc);
    return;
  }
  Problem<T> pr;
  pr.m = m, pr.n = n, pr.k = k, pr.alpha = alpha, pr.beta = beta;
  pr.a = av, pr.b = bv, pr.c = c, pr.ldc = ldc;
  run_driver(pr, kernels::microkernel_of<T>(kernels::active_kernels()), threads < 0 ? threads_for_gemm(m, n, k) : threads);
}

// Batches run items in parallel when each is too small to use all threads itself.
template <class T, class Item>
void run_batch(index_t batch, index_t m, index_t n, index_t k, Item&& item) {
  if (batch <= 0) return;
  const int available = arch::threads_for_call();
  if (available > 1 && batch > 1 && threads_for_gemm(m, n, k) < available) {
#pragma omp parallel for num_threads(available) schedule(dynamic)
    for (index_t i = 0; i < batch; ++i) item(i, 1);
  } else {
    for (index_t i = 0; i < batch; ++i) item(i, -1);
  }
}

}  // namespace

void sgemm(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha,
           const float* a, index_t lda, const float* b, index_t ldb, float beta, float* c,
           index_t ldc) {
  gemm_impl("sgemm", layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, -1);
}

void dgemm(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k, double alpha,
           const double* a, index_t lda, const double* b, index_t ldb, double beta, double* c,
           index_t ldc) {
  gemm_impl("dgemm", layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, -1);
}

namespace {
template <class T>
void batch_strided(const char* routine, Layout layout, Trans ta, Trans tb, index_t m, index_t n,
                   index_t k, T alpha, const T* a, index_t lda, index_t sa, const T* b,
                   index_t ldb, index_t sb, T beta, T* c, index_t ldc, index_t sc,
                   index_t batch) {
  if (batch < 0) bad_parameter(routine, 18, "batch", batch, "must be >= 0");
  check_args(routine, layout, ta, tb, m, n, k, lda, ldb, ldc);
  run_batch<T>(batch, m, n, k, [&](index_t i, int threads) {
    gemm_impl(routine, layout, ta, tb, m, n, k, alpha, a + i * sa, lda, b + i * sb, ldb, beta,
              c + i * sc, ldc, threads);
  });
}

template <class T>
void batch_pointers(const char* routine, Layout layout, Trans ta, Trans tb, index_t m, index_t n,
                    index_t k, T alpha, const T* const* a, index_t lda, const T* const* b,
                    index_t ldb, T beta, T* const* c, index_t ldc, index_t batch) {
  if (batch < 0) bad_parameter(routine, 15, "batch", batch, "must be >= 0");
  check_args(routine, layout, ta, tb, m, n, k, lda, ldb, ldc);
  run_batch<T>(batch, m, n, k, [&](index_t i, int threads) {
    gemm_impl(routine, layout, ta, tb, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc,
              threads);
  });
}
}  // namespace

void sgemm_batch_strided(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k,
                         float alpha, const float* a, index_t lda, index_t sa, const float* b,
                         index_t ldb, index_t sb, float beta, float* c, index_t ldc, index_t sc,
                         index_t batch) {
  batch_strided("sgemm_batch_strided", layout, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb,
                beta, c, ldc, sc, batch);
}

void dgemm_batch_strided(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k,
                         double alpha, const double* a, index_t lda, index_t sa, const double* b,
                         index_t ldb, index_t sb, double beta, double* c, index_t ldc,
                         index_t sc, index_t batch) {
  batch_strided("dgemm_batch_strided", layout, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb,
                beta, c, ldc, sc, batch);
}

void sgemm_batch(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha,
                 const float* const* a, index_t lda, const float* const* b, index_t ldb,
                 float beta, float* const* c, index_t ldc, index_t batch) {
  batch_pointers("sgemm_batch", layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 batch);
}

void dgemm_batch(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k,
                 double alpha, const double* const* a, index_t lda, const double* const* b,
                 index_t ldb, double beta, double* const* c, index_t ldc, index_t batch) {
  batch_pointers("dgemm_batch", layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 batch);
}

}  // namespace taihu::gemm
