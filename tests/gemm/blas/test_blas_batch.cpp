// cblas_?gemm_batch_strided and cblas_?gemm_batch (MKL's signatures) from
// libtaihu_blas.so: every problem against a naive double loop, both layouts, several
// groups of different shapes; bad arguments reach this program's own cblas_xerbla with
// the parameter's position and nothing is computed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "taihu_cblas.h"

namespace {

int g_calls = 0, g_info = 0;
std::string g_routine;

}  // namespace

extern "C" void cblas_xerbla(int info, const char* rout, const char* /*form*/, ...) {
  ++g_calls, g_info = info, g_routine = rout;
}

namespace {

// C (m x n, ld ldc) = alpha op(A) op(B) + beta C in double, either layout.
void naive(bool row, bool ta, bool tb, int m, int n, int k, double alpha, const double* a,
           int lda, const double* b, int ldb, double beta, std::vector<double>& c, int ldc) {
  auto at = [row](const double* x, int ld, int i, int j) { return row ? x[i * ld + j] : x[i + j * ld]; };
  std::vector<double> out = c;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += (ta ? at(a, lda, p, i) : at(a, lda, i, p)) * (tb ? at(b, ldb, j, p) : at(b, ldb, p, j));
      const std::size_t e = row ? std::size_t(i) * ldc + j : std::size_t(j) * ldc + i;
      out[e] = alpha * s + beta * c[e];
    }
  c = out;
}

TEST(BlasBatch, StridedMatchesNaiveBothLayouts) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (bool row : {false, true})
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const int m = 13, n = 9, k = 17, batch = 5;
      const int lda = (row != ta ? k : m) + 2, ldb = (row != tb ? n : k) + 1, ldc = (row ? n : m) + 3;
      const int sa = lda * (row != ta ? m : k) + 4, sb = ldb * (row != tb ? k : n), sc = ldc * (row ? m : n) + 1;
      std::vector<double> a(std::size_t(sa) * batch), b(std::size_t(sb) * batch), c(std::size_t(sc) * batch);
      for (auto* v : {&a, &b, &c})
        for (auto& x : *v) x = u(rng);
      std::vector<double> want = c;
      for (int i = 0; i < batch; ++i) {
        std::vector<double> ci(want.begin() + i * sc, want.begin() + (i + 1) * sc);
        naive(row, ta, tb, m, n, k, 0.5, a.data() + i * sa, lda, b.data() + i * sb, ldb, -2.0, ci, ldc);
        std::copy(ci.begin(), ci.end(), want.begin() + i * sc);
      }
      cblas_dgemm_batch_strided(row ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                                tb ? CblasTrans : CblasNoTrans, m, n, k, 0.5, a.data(), lda, sa,
                                b.data(), ldb, sb, -2.0, c.data(), ldc, sc, batch);
      for (std::size_t e = 0; e < c.size(); ++e) ASSERT_NEAR(c[e], want[e], 1e-12) << "element " << e;
    }
}

TEST(BlasBatch, GroupsMatchNaive) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-1, 1);
  // Two groups: 3 problems 5x7x4 (NoTrans, Trans), 2 problems 20x3x33 (Trans, NoTrans).
  const CBLAS_TRANSPOSE ta[] = {CblasNoTrans, CblasTrans}, tb[] = {CblasTrans, CblasNoTrans};
  const int m[] = {5, 20}, n[] = {7, 3}, k[] = {4, 33}, sizes[] = {3, 2};
  const int lda[] = {5, 33}, ldb[] = {7, 33}, ldc[] = {6, 20};
  const float alpha[] = {1.5f, -1}, beta[] = {0, 0.25f};
  std::vector<std::vector<float>> as, bs, cs;
  std::vector<const float*> ap, bp;
  std::vector<float*> cp;
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < sizes[g]; ++i) {
      as.emplace_back(std::size_t(lda[g]) * (ta[g] == CblasTrans ? m[g] : k[g]));
      bs.emplace_back(std::size_t(ldb[g]) * (tb[g] == CblasTrans ? k[g] : n[g]));
      cs.emplace_back(std::size_t(ldc[g]) * n[g]);
    }
  for (auto* v : {&as, &bs, &cs})
    for (auto& x : *v)
      for (auto& y : x) y = u(rng);
  for (std::size_t i = 0; i < as.size(); ++i)
    ap.push_back(as[i].data()), bp.push_back(bs[i].data()), cp.push_back(cs[i].data());
  std::vector<std::vector<double>> want;
  std::size_t p = 0;
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < sizes[g]; ++i, ++p) {
      std::vector<double> a(as[p].begin(), as[p].end()), b(bs[p].begin(), bs[p].end()), c(cs[p].begin(), cs[p].end());
      naive(false, ta[g] == CblasTrans, tb[g] == CblasTrans, m[g], n[g], k[g], alpha[g], a.data(), lda[g], b.data(), ldb[g], beta[g], c, ldc[g]);
      want.push_back(c);
    }
  cblas_sgemm_batch(CblasColMajor, ta, tb, m, n, k, alpha, ap.data(), lda, bp.data(), ldb, beta, cp.data(), ldc, 2, sizes);
  for (std::size_t i = 0; i < cs.size(); ++i)
    for (std::size_t e = 0; e < cs[i].size(); ++e) ASSERT_NEAR(cs[i][e], want[i][e], 1e-4) << "problem " << i << " element " << e;
}

TEST(BlasBatch, BadArgumentsReportPositionAndComputeNothing) {
  std::vector<float> a(64, 1), b(64, 1), c(64, 7);
  auto strided = [&](int m, int lda, int batch, int info) {
    g_calls = 0;
    cblas_sgemm_batch_strided(CblasColMajor, CblasNoTrans, CblasNoTrans, m, 2, 2, 1, a.data(), lda, 8, b.data(), 2, 8, 0, c.data(), 4, 8, batch);
    EXPECT_EQ(g_calls, 1);
    EXPECT_EQ(g_info, info);
    EXPECT_EQ(g_routine, "cblas_sgemm_batch_strided");
  };
  strided(-1, 4, 2, 4);
  strided(4, 3, 2, 9);
  strided(4, 4, -1, 18);
  const CBLAS_TRANSPOSE no[] = {CblasNoTrans, CblasNoTrans};
  const int m[] = {2, 4}, n[] = {2, 2}, k[] = {2, 2}, ld_ok[] = {2, 4}, ld_bad[] = {2, 3}, sizes[] = {1, 1};
  const float one[] = {1, 1}, zero[] = {0, 0};
  const float* ap[] = {a.data(), a.data()};
  float* cp[] = {c.data(), c.data() + 32};
  g_calls = 0;
  cblas_sgemm_batch(CblasColMajor, no, no, m, n, k, one, ap, ld_ok, ap, ld_ok, zero, cp, ld_bad, 2, sizes);
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(g_info, 14);  // ldc of the second group
  EXPECT_EQ(g_routine, "cblas_sgemm_batch");
  for (float x : c) EXPECT_EQ(x, 7.0f);  // the first group's good problem did not run
  g_calls = 0;
  const int bad_sizes[] = {1, -1};
  cblas_sgemm_batch(CblasColMajor, no, no, m, n, k, one, ap, ld_ok, ap, ld_ok, zero, cp, ld_ok, 2, bad_sizes);
  EXPECT_EQ(g_info, 16);
  g_calls = 0;
  cblas_sgemm_batch(CblasColMajor, no, no, m, n, k, one, ap, ld_ok, ap, ld_ok, zero, cp, ld_ok, -1, sizes);
  EXPECT_EQ(g_info, 15);
  for (float x : c) EXPECT_EQ(x, 7.0f);
}

}  // namespace
