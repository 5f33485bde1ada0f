// libtaihu_blas.so through its exported C ABI, as a C or Fortran program calls it:
// cblas_sgemm/cblas_dgemm in both layouts and sgemm_/dgemm_, every transpose, padded
// leading dimensions, against a naive double-precision loop; and bad arguments, each
// of which must print one xerbla line naming the routine, the parameter number in
// CBLAS or Fortran numbering, its name and value, and leave C untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
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

// What a bad call printed: the taihu_blas lines only (TAIHU_VERBOSE may add others).
struct Report {
  std::string text;
  int lines = 0;
};

template <typename Call>
Report capture(Call&& call) {
  testing::internal::CaptureStderr();
  call();
  const std::string all = testing::internal::GetCapturedStderr();
  Report r;
  std::size_t start = 0;
  while (start < all.size()) {
    std::size_t end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    const std::string line = all.substr(start, end - start);
    if (line.rfind("taihu_blas:", 0) == 0) {
      r.text += line;
      ++r.lines;
    }
    start = end + 1;
  }
  return r;
}

constexpr float kSentinel = 42.0f;

// Runs a cblas_sgemm call that must be rejected: C stays all sentinel and one line
// names `expected` (e.g. "parameter number 9 (lda)") and `value` (e.g. "lda = 1").
void expect_cblas_rejects(CBLAS_ORDER o, int ta, int tb, int m, int n, int k, int lda, int ldb,
                          int ldc, const std::string& expected, const std::string& value) {
  const std::vector<float> a(64, 1.0f), b(64, 1.0f);
  std::vector<float> c(64, kSentinel);
  const Report r = capture([&] {
    cblas_sgemm(o, static_cast<CBLAS_TRANSPOSE>(ta), static_cast<CBLAS_TRANSPOSE>(tb), m, n, k,
                1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc);
  });
  EXPECT_EQ(r.lines, 1) << r.text;
  EXPECT_NE(r.text.find("On entry to cblas_sgemm " + expected + " had an illegal value"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find(value), std::string::npos) << r.text;
  for (float x : c) ASSERT_EQ(x, kSentinel) << "C was touched: " << r.text;
}

TEST(CblasErrors, BadLayout) {
  expect_cblas_rejects(static_cast<CBLAS_ORDER>(999), CblasNoTrans, CblasNoTrans, 2, 2, 2, 2, 2,
                       2, "parameter number 1 (Layout)", "Layout = 999");
}

TEST(CblasErrors, BadTranspose) {
  expect_cblas_rejects(CblasColMajor, 'X', CblasNoTrans, 2, 2, 2, 2, 2, 2,
                       "parameter number 2 (TransA)", "TransA = 88");
  expect_cblas_rejects(CblasRowMajor, CblasTrans, 110, 2, 2, 2, 2, 2, 2,
                       "parameter number 3 (TransB)", "TransB = 110");
}

TEST(CblasErrors, NegativeSizes) {
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2,
                       "parameter number 4 (M)", "M = -1, must be >= 0");
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, -3, 2, 2, 2, 2,
                       "parameter number 5 (N)", "N = -3");
  expect_cblas_rejects(CblasColMajor, CblasTrans, CblasNoTrans, 2, 2, -2, 2, 2, 2,
                       "parameter number 6 (K)", "K = -2");
}

TEST(CblasErrors, LeadingDimensionsTooSmall) {
  // Column major, A not transposed: lda >= M.
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 5, 2, 3, 4, 3, 5,
                       "parameter number 9 (lda)", "lda = 4, must be >= max(1, M) = 5");
  // Row major, A not transposed: lda >= K (A's rows are K long).
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 5, 2, 3, 2, 2, 2,
                       "parameter number 9 (lda)", "lda = 2, must be >= max(1, K) = 3");
  // Row major, B transposed: ldb >= K.
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasTrans, 2, 4, 3, 3, 2, 4,
                       "parameter number 11 (ldb)", "ldb = 2, must be >= max(1, K) = 3");
  // ldc: >= M in column major, >= N in row major.
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 3, 2, 2,
                       "parameter number 14 (ldc)", "ldc = 2, must be >= max(1, M) = 3");
  expect_cblas_rejects(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 2, 3, 2,
                       "parameter number 14 (ldc)", "ldc = 2, must be >= max(1, N) = 3");
  // An empty matrix still needs ld >= 1.
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 2, 2, 0, 2, 1,
                       "parameter number 9 (lda)", "lda = 0, must be >= max(1, M) = 1");
}

TEST(CblasErrors, OnlyTheFirstBadArgumentIsReported) {
  expect_cblas_rejects(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 0, 0, 0,
                       "parameter number 4 (M)", "M = -1");
}

TEST(CblasErrors, DgemmNamesItself) {
  std::vector<double> c(4, 5.0);
  const double a[4] = {}, b[4] = {};
  const Report r = capture([&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 1, b, 2, 0.0,
                c.data(), 2);
  });
  EXPECT_EQ(r.lines, 1);
  EXPECT_NE(r.text.find("On entry to cblas_dgemm parameter number 9 (lda)"), std::string::npos)
      << r.text;
  for (double x : c) EXPECT_EQ(x, 5.0);
}

// Runs an sgemm_ call that must be rejected (Fortran numbering).
void expect_fortran_rejects(const char* ta, const char* tb, int m, int n, int k, int lda,
                            int ldb, int ldc, const std::string& expected,
                            const std::string& value) {
  const std::vector<float> a(64, 1.0f), b(64, 1.0f);
  std::vector<float> c(64, kSentinel);
  const float alpha = 1, beta = 0;
  const Report r = capture([&] {
    sgemm_(ta, tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, c.data(), &ldc, 1,
           1);
  });
  EXPECT_EQ(r.lines, 1) << r.text;
  EXPECT_NE(r.text.find("On entry to SGEMM " + expected + " had an illegal value"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find(value), std::string::npos) << r.text;
  for (float x : c) ASSERT_EQ(x, kSentinel) << "C was touched: " << r.text;
}

TEST(FortranErrors, BadTransChar) {
  expect_fortran_rejects("X", "N", 2, 2, 2, 2, 2, 2, "parameter number 1 (TRANSA)",
                         "TRANSA = 'X', must be 'N', 'T' or 'C'");
  expect_fortran_rejects("T", "x", 2, 2, 2, 2, 2, 2, "parameter number 2 (TRANSB)",
                         "TRANSB = 'x'");
  expect_fortran_rejects("\x01", "N", 2, 2, 2, 2, 2, 2, "parameter number 1 (TRANSA)",
                         "TRANSA = byte 0x01");
}

TEST(FortranErrors, NegativeSizes) {
  expect_fortran_rejects("N", "N", -1, 2, 2, 2, 2, 2, "parameter number 3 (M)", "M = -1");
  expect_fortran_rejects("N", "N", 2, -1, 2, 2, 2, 2, "parameter number 4 (N)", "N = -1");
  expect_fortran_rejects("N", "N", 2, 2, -7, 2, 2, 2, "parameter number 5 (K)", "K = -7");
}

TEST(FortranErrors, LeadingDimensionsTooSmall) {
  expect_fortran_rejects("N", "N", 5, 2, 3, 4, 3, 5, "parameter number 8 (LDA)",
                         "LDA = 4, must be >= max(1, M) = 5 (TRANSA = 'N')");
  expect_fortran_rejects("t", "N", 5, 2, 3, 2, 3, 5, "parameter number 8 (LDA)",
                         "LDA = 2, must be >= max(1, K) = 3 (TRANSA = 't')");
  expect_fortran_rejects("N", "C", 2, 4, 3, 2, 3, 2, "parameter number 10 (LDB)",
                         "LDB = 3, must be >= max(1, N) = 4 (TRANSB = 'C')");
  expect_fortran_rejects("N", "N", 4, 2, 3, 4, 3, 3, "parameter number 13 (LDC)",
                         "LDC = 3, must be >= max(1, M) = 4");
}

TEST(FortranErrors, DgemmNamesItself) {
  std::vector<double> c(4, 5.0);
  const double a[4] = {}, b[4] = {}, alpha = 1, beta = 0;
  const int two = 2, minus = -2;
  const Report r = capture([&] {
    dgemm_("N", "N", &two, &two, &minus, &alpha, a, &two, b, &two, &beta, c.data(), &two, 1, 1);
  });
  EXPECT_EQ(r.lines, 1);
  EXPECT_NE(r.text.find("On entry to DGEMM parameter number 5 (K) had an illegal value: K = -2"),
            std::string::npos)
      << r.text;
  for (double x : c) EXPECT_EQ(x, 5.0);
}

}  // namespace
