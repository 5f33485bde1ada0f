// libtaihu_blas.so through its exported C ABI, as a C or Fortran program calls it:
// cblas_sgemm/cblas_dgemm in both layouts and sgemm_/dgemm_, every transpose, padded
// leading dimensions, against a naive double-precision loop; bad arguments, each of
// which must reach this program's own xerbla_ / cblas_xerbla (defined below: they
// replace taihu's defaults through the dynamic linker, as a Fortran program's XERBLA
// does) with reference BLAS's or netlib CBLAS's parameter number, and leave C
// untouched; and the thread-control functions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "taihu_cblas.h"

namespace {

// A stored rows x cols matrix with leading dimension ld, in either layout.
struct Stored {
  int rows, cols, ld;
  bool row_major;
  std::size_t index(int i, int j) const {
    return row_major ? std::size_t(i) * ld + j : std::size_t(j) * ld + i;
  }
  std::size_t size() const { return std::size_t(ld) * (row_major ? rows : cols); }
};

// Small dyadic values: every product and sum below is exact in float.
template <typename T>
std::vector<T> filled(std::size_t n, int seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(int((i * 7 + seed * 13) % 11) - 5) / T(4);
  return v;
}

// C = alpha * op(A) * op(B) + beta * C on the stored matrices, in double.
template <typename T>
std::vector<double> naive(bool ta, bool tb, int m, int n, int k, double alpha,
                          const std::vector<T>& a, Stored sa, const std::vector<T>& b, Stored sb,
                          double beta, const std::vector<T>& c, Stored sc) {
  std::vector<double> out(c.begin(), c.end());
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) {
        sum += double(a[ta ? sa.index(p, i) : sa.index(i, p)]) *
               double(b[tb ? sb.index(j, p) : sb.index(p, j)]);
      }
      const double old = beta == 0 ? 0 : beta * double(c[sc.index(i, j)]);
      out[sc.index(i, j)] = alpha * sum + old;
    }
  }
  return out;
}

// Element-wise check, padding included (it must be unchanged).
template <typename T>
void expect_near(const std::vector<double>& want, const std::vector<T>& got, double tol) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(want[i], double(got[i]), tol * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

inline void call_cblas(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n,
                       int k, float alpha, const float* a, int lda, const float* b, int ldb,
                       float beta, float* c, int ldc) {
  cblas_sgemm(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void call_cblas(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n,
                       int k, double alpha, const double* a, int lda, const double* b, int ldb,
                       double beta, double* c, int ldc) {
  cblas_dgemm(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void call_fortran(const char* ta, const char* tb, const int* m, const int* n,
                         const int* k, const float* alpha, const float* a, const int* lda,
                         const float* b, const int* ldb, const float* beta, float* c,
                         const int* ldc) {
  sgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
}
inline void call_fortran(const char* ta, const char* tb, const int* m, const int* n,
                         const int* k, const double* alpha, const double* a, const int* lda,
                         const double* b, const int* ldb, const double* beta, double* c,
                         const int* ldc) {
  dgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 1);
}

// ---------------------------------------------------------------- correct products

using CblasCase = std::tuple<CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE>;

class CblasGemm : public testing::TestWithParam<CblasCase> {
 protected:
  template <typename T>
  void run(int m, int n, int k, T alpha, T beta, double tol) {
    const auto [order, trans_a, trans_b] = GetParam();
    const bool row = order == CblasRowMajor;
    const bool ta = trans_a != CblasNoTrans;
    const bool tb = trans_b != CblasNoTrans;
    // Leading dimensions larger than needed, so padding must be skipped and kept.
    const Stored sa{ta ? k : m, ta ? m : k, (row == ta ? m : k) + 3, row};
    const Stored sb{tb ? n : k, tb ? k : n, (row == tb ? k : n) + 2, row};
    const Stored sc{m, n, (row ? n : m) + 1, row};
    const auto a = filled<T>(sa.size(), 1);
    const auto b = filled<T>(sb.size(), 2);
    auto c = filled<T>(sc.size(), 3);
    const auto want = naive(ta, tb, m, n, k, alpha, a, sa, b, sb, beta, c, sc);
    call_cblas(order, trans_a, trans_b, m, n, k, alpha, a.data(), sa.ld, b.data(), sb.ld, beta,
               c.data(), sc.ld);
    expect_near(want, c, tol);
  }
};

TEST_P(CblasGemm, SgemmMatchesNaive) {
  run<float>(7, 5, 9, 1.5f, 0.5f, 1e-5);
  run<float>(67, 45, 33, -1.0f, 0.0f, 1e-5);
}

TEST_P(CblasGemm, DgemmMatchesNaive) {
  run<double>(7, 5, 9, 1.5, 0.5, 1e-12);
  run<double>(67, 45, 33, 2.0, -1.0, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    AllLayoutsAndTransposes, CblasGemm,
    testing::Combine(testing::Values(CblasRowMajor, CblasColMajor),
                     testing::Values(CblasNoTrans, CblasTrans, CblasConjTrans),
                     testing::Values(CblasNoTrans, CblasTrans, CblasConjTrans)));

class FortranGemm : public testing::TestWithParam<std::tuple<char, char>> {
 protected:
  template <typename T>
  void run(int m, int n, int k, T alpha, T beta, double tol) {
    const auto [ca, cb] = GetParam();
    const char transa[2] = {ca, '\0'};
    const char transb[2] = {cb, '\0'};
    const bool ta = std::strchr("TtCc", ca) != nullptr;
    const bool tb = std::strchr("TtCc", cb) != nullptr;
    const Stored sa{ta ? k : m, ta ? m : k, (ta ? k : m) + 3, false};
    const Stored sb{tb ? n : k, tb ? k : n, (tb ? n : k) + 1, false};
    const Stored sc{m, n, m + 2, false};
    const auto a = filled<T>(sa.size(), 4);
    const auto b = filled<T>(sb.size(), 5);
    auto c = filled<T>(sc.size(), 6);
    const auto want = naive(ta, tb, m, n, k, alpha, a, sa, b, sb, beta, c, sc);
    call_fortran(transa, transb, &m, &n, &k, &alpha, a.data(), &sa.ld, b.data(), &sb.ld, &beta,
                 c.data(), &sc.ld);
    expect_near(want, c, tol);
  }
};

TEST_P(FortranGemm, SgemmMatchesNaive) { run<float>(6, 11, 5, 0.75f, 2.0f, 1e-5); }
TEST_P(FortranGemm, DgemmMatchesNaive) { run<double>(13, 4, 10, -0.5, 1.0, 1e-12); }

INSTANTIATE_TEST_SUITE_P(EveryTransChar, FortranGemm,
                         testing::Combine(testing::Values('N', 'n', 'T', 't', 'C', 'c'),
                                          testing::Values('N', 'n', 'T', 't', 'C', 'c')));

// BLAS semantics: beta == 0 never reads C (NaN in C does not leak).
TEST(BlasSemantics, BetaZeroIgnoresNanInC) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
  float c[4] = {NAN, NAN, NAN, NAN};
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c[i], a[i]);
}

// m == 0 or n == 0 returns at once, without a message and without touching C.
TEST(BlasSemantics, EmptyProductReturnsQuietly) {
  double c[1] = {7};
  testing::internal::CaptureStderr();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 0, 1, 1, 1.0, nullptr, 1, nullptr, 1,
              0.0, c, 1);
  const int zero = 0, one = 1;
  const double alpha = 1, beta = 0;
  dgemm_("N", "N", &one, &zero, &one, &alpha, nullptr, &one, nullptr, &one, &beta, c, &one, 1,
         1);
  EXPECT_EQ(testing::internal::GetCapturedStderr().find("taihu_blas"), std::string::npos);
  EXPECT_EQ(c[0], 7);
}

// k == 0 scales C by beta.
TEST(BlasSemantics, KZeroScalesCByBeta) {
  float c[4] = {1, 2, 3, 4};
  const float a[1] = {0}, b[1] = {0};
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 0, 1.0f, a, 2, b, 1, 3.0f, c, 2);
  EXPECT_EQ(c[0], 3);
  EXPECT_EQ(c[3], 12);
}

// ---------------------------------------------------------------- bad arguments

// What this program's error handlers received.
struct Handled {
  int calls = 0;
  std::string routine;  // srname as passed (Fortran: with its length), or rout
  int info = 0;
  std::string message;  // cblas_xerbla's form, formatted
};
Handled g_handled;

}  // namespace

// The program's own handlers: the dynamic linker binds libtaihu_blas's calls to these
// rather than to taihu's weak defaults.
extern "C" void xerbla_(const char* srname, const int* info, size_t len) {
  ++g_handled.calls;
  g_handled.routine.assign(srname, len);
  g_handled.info = *info;
}

extern "C" void cblas_xerbla(int info, const char* rout, const char* form, ...) {
  ++g_handled.calls;
  g_handled.routine = rout;
  g_handled.info = info;
  char text[512];
  va_list args;
  va_start(args, form);
  std::vsnprintf(text, sizeof text, form, args);
  va_end(args);
  g_handled.message = text;
}

namespace {

template <typename Call>
Handled handled(Call&& call) {
  g_handled = Handled{};
  testing::internal::CaptureStderr();
  call();
  const std::string printed = testing::internal::GetCapturedStderr();
  // The program's handler decides what is printed: taihu adds nothing (bar TAIHU_VERBOSE).
  if (std::getenv("TAIHU_VERBOSE") == nullptr) {
    EXPECT_EQ(printed, "");
  }
  return g_handled;
}

constexpr float kSentinel = 42.0f;

// Runs a cblas_sgemm call that must be rejected: C stays all sentinel, cblas_xerbla
// got `info` (netlib's number) once and a message containing `value`.
void expect_cblas_rejects(CBLAS_ORDER o, int ta, int tb, int m, int n, int k, int lda, int ldb,
                          int ldc, int info, const std::string& value) {
  const std::vector<float> a(64, 1.0f), b(64, 1.0f);
  std::vector<float> c(64, kSentinel);
  const Handled h = handled([&] {
    cblas_sgemm(o, static_cast<CBLAS_TRANSPOSE>(ta), static_cast<CBLAS_TRANSPOSE>(tb), m, n, k,
                1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc);
  });
  EXPECT_EQ(h.calls, 1);
  EXPECT_EQ(h.routine, "cblas_sgemm");
  EXPECT_EQ(h.info, info) << h.message;
  EXPECT_NE(h.message.find(value), std::string::npos) << h.message;
  for (float x : c) ASSERT_EQ(x, kSentinel) << "C was touched: " << h.message;
}

TEST(CblasErrors, BadLayout) {
  expect_cblas_rejects(static_cast<CBLAS_ORDER>(999), CblasNoTrans, CblasNoTrans, 2, 2, 2, 2, 2,
                       2, 1, "Layout = 999");
}

TEST(CblasErrors, BadTranspose) {
  expect_cblas_rejects(CblasColMajor, 'X', CblasNoTrans, 2, 2, 2, 2, 2, 2, 2, "TransA = 88");
  expect_cblas_rejects(CblasRowMajor, CblasTrans, 110, 2, 2, 2, 2, 2, 2, 3, "TransB = 110");
}

TEST(CblasErrors, NegativeSizesColumnMajor) {
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2, 4,
                       "M = -1, must be >= 0");
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, -3, 2, 2, 2, 2, 5, "N = -3");
  expect_cblas_rejects(CblasColMajor, CblasTrans, CblasNoTrans, 2, 2, -2, 2, 2, 2, 6, "K = -2");
}

// netlib's cblas_sgemm hands a row-major call to Fortran SGEMM as (N, M, B, A), so
// M is reported as 5 and N as 4 (its cblas_xerbla swaps them back for printing).
TEST(CblasErrors, NegativeSizesRowMajorAsNetlib) {
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2, 5, "M = -1");
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, -3, 2, 2, 2, 2, 4, "N = -3");
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, -2, 2, 2, 2, 6, "K = -2");
  // Both bad: netlib's Fortran sees N first.
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 2, 2, 2, 4, "N = -1");
}

TEST(CblasErrors, LeadingDimensionsTooSmall) {
  // Column major, A not transposed: lda >= M.
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 5, 2, 3, 4, 3, 5, 9,
                       "lda = 4, must be >= max(1, M) = 5");
  // Row major, A not transposed: lda >= K (A's rows are K long); netlib's number 11.
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 5, 2, 3, 2, 2, 2, 11,
                       "lda = 2, must be >= max(1, K) = 3");
  // Row major, B transposed: ldb >= K; netlib's number 9.
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasTrans, 2, 4, 3, 3, 2, 4, 9,
                       "ldb = 2, must be >= max(1, K) = 3");
  // ldc: >= M in column major, >= N in row major.
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 3, 2, 2, 14,
                       "ldc = 2, must be >= max(1, M) = 3");
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 2, 3, 2, 14,
                       "ldc = 2, must be >= max(1, N) = 3");
  // An empty matrix still needs ld >= 1.
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 2, 2, 0, 2, 1, 9,
                       "lda = 0, must be >= max(1, M) = 1");
}

TEST(CblasErrors, OnlyTheFirstBadArgumentIsReported) {
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 0, 0, 0, 4, "M = -1");
}

TEST(CblasErrors, DgemmNamesItself) {
  std::vector<double> c(4, 5.0);
  const double a[4] = {}, b[4] = {};
  const Handled h = handled([&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 1, b, 2, 0.0,
                c.data(), 2);
  });
  EXPECT_EQ(h.calls, 1);
  EXPECT_EQ(h.routine, "cblas_dgemm");
  EXPECT_EQ(h.info, 9);
  for (double x : c) EXPECT_EQ(x, 5.0);
}

// Runs an sgemm_ call that must be rejected: xerbla_("SGEMM ", info, 6) once.
void expect_fortran_rejects(const char* ta, const char* tb, int m, int n, int k, int lda,
                            int ldb, int ldc, int info) {
  const std::vector<float> a(64, 1.0f), b(64, 1.0f);
  std::vector<float> c(64, kSentinel);
  const float alpha = 1, beta = 0;
  const Handled h = handled([&] {
    sgemm_(ta, tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, c.data(), &ldc, 1,
           1);
  });
  EXPECT_EQ(h.calls, 1);
  EXPECT_EQ(h.routine, "SGEMM ");  // reference BLAS's CHARACTER*6 name
  EXPECT_EQ(h.info, info);
  for (float x : c) ASSERT_EQ(x, kSentinel) << "C was touched";
}

TEST(FortranErrors, BadTransChar) {
  expect_fortran_rejects("X", "N", 2, 2, 2, 2, 2, 2, 1);
  expect_fortran_rejects("T", "x", 2, 2, 2, 2, 2, 2, 2);
  expect_fortran_rejects("\x01", "N", 2, 2, 2, 2, 2, 2, 1);
}

TEST(FortranErrors, NegativeSizes) {
  expect_fortran_rejects("N", "N", -1, 2, 2, 2, 2, 2, 3);
  expect_fortran_rejects("N", "N", 2, -1, 2, 2, 2, 2, 4);
  expect_fortran_rejects("N", "N", 2, 2, -7, 2, 2, 2, 5);
}

TEST(FortranErrors, LeadingDimensionsTooSmall) {
  expect_fortran_rejects("N", "N", 5, 2, 3, 4, 3, 5, 8);   // LDA >= M
  expect_fortran_rejects("t", "N", 5, 2, 3, 2, 3, 5, 8);   // LDA >= K
  expect_fortran_rejects("N", "C", 2, 4, 3, 2, 3, 2, 10);  // LDB >= N
  expect_fortran_rejects("N", "N", 4, 2, 3, 4, 3, 3, 13);  // LDC >= M
}

TEST(FortranErrors, DgemmNamesItself) {
  std::vector<double> c(4, 5.0);
  const double a[4] = {}, b[4] = {}, alpha = 1, beta = 0;
  const int two = 2, minus = -2;
  const Handled h = handled([&] {
    dgemm_("N", "N", &two, &two, &minus, &alpha, a, &two, b, &two, &beta, c.data(), &two, 1, 1);
  });
  EXPECT_EQ(h.calls, 1);
  EXPECT_EQ(h.routine, "DGEMM ");
  EXPECT_EQ(h.info, 5);
  for (double x : c) EXPECT_EQ(x, 5.0);
}

// ---------------------------------------------------------------- thread control

// Restores taihu's default thread count when a test ends.
struct DefaultThreadsAfter {
  ~DefaultThreadsAfter() {
    taihu_set_num_threads(0);
    mkl_set_num_threads_local(0);
  }
};

TEST(ThreadControl, TaihuSetAndGet) {
  DefaultThreadsAfter restore;
  taihu_set_num_threads(3);
  EXPECT_EQ(taihu_get_num_threads(), 3);
  EXPECT_EQ(openblas_get_num_threads(), 3);
  EXPECT_EQ(mkl_get_max_threads(), 3);
  taihu_set_num_threads(0);
  const int fallback = taihu_get_num_threads();
  EXPECT_GE(fallback, 1);
  taihu_set_num_threads(-4);  // < 1: the default, never an error
  EXPECT_EQ(taihu_get_num_threads(), fallback);
}

TEST(ThreadControl, PeerNamesSetTaihusCount) {
  DefaultThreadsAfter restore;
  openblas_set_num_threads(2);
  EXPECT_EQ(taihu_get_num_threads(), 2);
  goto_set_num_threads(5);
  EXPECT_EQ(taihu_get_num_threads(), 5);
  mkl_set_num_threads(1);
  EXPECT_EQ(taihu_get_num_threads(), 1);
  MKL_Set_Num_Threads(4);
  EXPECT_EQ(taihu_get_num_threads(), 4);
  bli_thread_set_num_threads(int64_t{3});
  EXPECT_EQ(taihu_get_num_threads(), 3);
  bli_thread_set_num_threads(int64_t{1} << 40);  // dim_t is 64-bit: clamped, not truncated
  EXPECT_EQ(taihu_get_num_threads(), 1 << 16);
}

TEST(ThreadControl, MklLocalIsPerThreadAndReturnsThePrevious) {
  DefaultThreadsAfter restore;
  taihu_set_num_threads(4);
  EXPECT_EQ(mkl_set_num_threads_local(2), 0);  // none was set
  EXPECT_EQ(taihu_get_num_threads(), 2);
  int other = 0;
  std::thread([&] { other = taihu_get_num_threads(); }).join();
  EXPECT_EQ(other, 4);  // another thread sees the process count
  EXPECT_EQ(mkl_set_num_threads_local(-1), 2);  // negative: no change
  EXPECT_EQ(mkl_set_num_threads_local(0), 2);   // 0: removed
  EXPECT_EQ(taihu_get_num_threads(), 4);
}

// The count set through the ABI is what a GEMM call uses, and the product is right.
TEST(ThreadControl, GemmRunsAtTheSetCount) {
  DefaultThreadsAfter restore;
  for (int threads : {1, 2}) {
    openblas_set_num_threads(threads);
    const int m = 96, n = 80, k = 64;
    const Stored sa{m, k, m, false}, sb{k, n, k, false}, sc{m, n, m, false};
    const auto a = filled<float>(sa.size(), 7);
    const auto b = filled<float>(sb.size(), 8);
    std::vector<float> c(sc.size(), 0.0f);
    const auto want = naive(false, false, m, n, k, 1.0, a, sa, b, sb, 0.0, c, sc);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), m, b.data(),
                k, 0.0f, c.data(), m);
    expect_near(want, c, 1e-5);
  }
}

}  // namespace
