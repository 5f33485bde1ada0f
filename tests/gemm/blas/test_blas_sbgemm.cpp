// bf16-in / fp32-out GEMM from libtaihu_blas.so: cblas_sbgemm (OpenBLAS's name),
// cblas_gemm_bf16bf16f32 (MKL's) and sbgemm_ against a double-precision product of the
// same bf16-rounded inputs, every layout and transposition, odd k and edges, shapes that
// cross the kernel's depth and row blocks and use 2 threads; BLAS semantics (beta == 0
// never reads C, alpha == 0 never reads A or B) and bad arguments reaching this
// program's own xerbla_ / cblas_xerbla. ctest runs it once per TAIHU_ISA level; at
// avx512 on a CPU with AVX-512 BF16 the vdpbf16ps kernel must be the one chosen.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/gemm/bf16.hpp"
#include "taihu_cblas.h"

namespace {

int g_cblas_calls = 0, g_cblas_info = 0, g_xerbla_calls = 0, g_xerbla_info = 0;
std::string g_xerbla_name;

}  // namespace

extern "C" void cblas_xerbla(int info, const char* /*rout*/, const char* /*form*/, ...) {
  ++g_cblas_calls, g_cblas_info = info;
}
extern "C" void xerbla_(const char* srname, const int* info, size_t len) {
  ++g_xerbla_calls, g_xerbla_info = *info, g_xerbla_name.assign(srname, len);
}

namespace {

using taihu::gemm::bf16;
using taihu::gemm::bf16_to_float;
using taihu::gemm::float_to_bf16;

struct Case {
  bool row, ta, tb;
  int m, n, k;
  float alpha, beta;
};

std::vector<bf16> random_bf16(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<bf16> v(count);
  for (auto& x : v) x = float_to_bf16(u(rng));
  return v;
}

using Entry = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, float,
                       const taihu_bfloat16*, int, const taihu_bfloat16*, int, float, float*, int);

// Runs `entry` on case `t` and checks every element against the double product with
// fp32 summation's error bound (k roundings of the running sum).
void check_case(Entry entry, const Case& t, std::mt19937& rng) {
  const int lda = (t.row != t.ta ? t.k : t.m) + 3, ldb = (t.row != t.tb ? t.n : t.k) + 1;
  const int ldc = (t.row ? t.n : t.m) + 2;
  const std::vector<bf16> a = random_bf16(std::size_t(lda) * (t.row != t.ta ? t.m : t.k), rng);
  const std::vector<bf16> b = random_bf16(std::size_t(ldb) * (t.row != t.tb ? t.k : t.n), rng);
  std::vector<float> c(std::size_t(ldc) * (t.row ? t.m : t.n));
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : c) x = u(rng);
  const std::vector<float> c0 = c;
  auto at = [&](const std::vector<bf16>& x, int ld, int i, int j) {
    return double(bf16_to_float(t.row ? x[std::size_t(i) * ld + j] : x[i + std::size_t(j) * ld]));
  };
  entry(t.row ? CblasRowMajor : CblasColMajor, t.ta ? CblasTrans : CblasNoTrans,
        t.tb ? CblasTrans : CblasNoTrans, t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), ldb,
        t.beta, c.data(), ldc);
  int bad = 0;
  for (int i = 0; i < t.m; ++i)
    for (int j = 0; j < t.n; ++j) {
      double s = 0, mag = 0;
      for (int p = 0; p < t.k; ++p) {
        const double x = t.ta ? at(a, lda, p, i) : at(a, lda, i, p);
        const double y = t.tb ? at(b, ldb, j, p) : at(b, ldb, p, j);
        s += x * y, mag += std::fabs(x * y);
      }
      const std::size_t e = t.row ? std::size_t(i) * ldc + j : i + std::size_t(j) * ldc;
      const double want = t.alpha * s + t.beta * double(c0[e]);
      const double tol = (t.k + 2) * 6e-8 * (std::fabs(t.alpha) * mag + std::fabs(t.beta * c0[e])) + 1e-30;
      if (!(std::fabs(c[e] - want) <= tol) && ++bad <= 3)
        ADD_FAILURE() << "C(" << i << "," << j << ") = " << c[e] << ", want " << want << " (tol " << tol
                      << "), row " << t.row << " ta " << t.ta << " tb " << t.tb << " " << t.m << "x"
                      << t.n << "x" << t.k;
    }
  // Padding between columns (or rows) of C is never written.
  for (int outer = 0; outer < (t.row ? t.m : t.n); ++outer)
    for (int inner = t.row ? t.n : t.m; inner < ldc; ++inner)
      ASSERT_EQ(c[std::size_t(outer) * ldc + inner], c0[std::size_t(outer) * ldc + inner]);
}

TEST(Sbgemm, MatchesFp32ReferenceEveryLayoutAndTransposition) {
  std::mt19937 rng(11);
  for (bool row : {false, true})
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 1, tb = tr & 2;
      check_case(&cblas_sbgemm, {row, ta, tb, 37, 29, 33, 1.0f, 0.0f}, rng);   // edges, odd k
      check_case(&cblas_sbgemm, {row, ta, tb, 5, 3, 1, -0.5f, 2.0f}, rng);     // k = 1
      check_case(&cblas_sbgemm, {row, ta, tb, 64, 24, 64, 0.75f, -1.0f}, rng);  // whole tiles
    }
}

TEST(Sbgemm, BlocksAndTwoThreads) {
  std::mt19937 rng(12);
  // k crosses the 512 depth block (odd remainder), m several 32-row panels split
  // between 2 threads, n an edge of the 12-column tile.
  check_case(&cblas_sbgemm, {false, false, false, 300, 130, 517, 1.0f, 0.5f}, rng);
  check_case(&cblas_sbgemm, {true, true, false, 97, 250, 1030, -1.0f, 0.0f}, rng);
}

TEST(Sbgemm, MklNameMatchesOpenBlasNameBitwise) {
  std::mt19937 rng(13);
  const int m = 45, n = 31, k = 77;
  const std::vector<bf16> a = random_bf16(std::size_t(m) * k, rng), b = random_bf16(std::size_t(k) * n, rng);
  std::vector<float> c1(std::size_t(m) * n, 1.0f), c2 = c1;
  cblas_sbgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, 1.5f, a.data(), m, b.data(), n, 0.25f, c1.data(), m);
  cblas_gemm_bf16bf16f32(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, 1.5f, a.data(), m, b.data(), n,
                         0.25f, c2.data(), m);
  EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)));
  check_case(&cblas_gemm_bf16bf16f32, {true, false, true, 40, 19, 21, 2.0f, 1.0f}, rng);
}

TEST(Sbgemm, FortranInterfaceMatchesCblas) {
  std::mt19937 rng(14);
  const int m = 23, n = 17, k = 40;
  const std::vector<bf16> a = random_bf16(std::size_t(k) * m, rng), b = random_bf16(std::size_t(k) * n, rng);
  std::vector<float> c1(std::size_t(m) * n, 0.5f), c2 = c1;
  const float alpha = 1.25f, beta = -1.0f;
  sbgemm_("T", "n", &m, &n, &k, &alpha, a.data(), &k, b.data(), &k, &beta, c1.data(), &m, 1, 1);
  cblas_sbgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a.data(), k, b.data(), k, beta,
               c2.data(), m);
  EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)));
}

TEST(Sbgemm, BetaZeroNeverReadsCAlphaZeroNeverReadsAB) {
  const int m = 33, n = 13, k = 9;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<bf16> a(std::size_t(m) * k, float_to_bf16(1.0f)), b(std::size_t(k) * n, float_to_bf16(2.0f));
  std::vector<float> c(std::size_t(m) * n, nan);
  cblas_sbgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m);
  for (float x : c) ASSERT_EQ(x, 18.0f);
  std::fill(a.begin(), a.end(), float_to_bf16(nan));
  cblas_sbgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 0.0f, a.data(), m, b.data(), k, 0.5f, c.data(), m);
  for (float x : c) ASSERT_EQ(x, 9.0f);
}

TEST(Sbgemm, BadArgumentsReachXerblaAndLeaveCUntouched) {
  std::vector<bf16> a(64), b(64);
  std::vector<float> c(64, 3.0f);
  g_cblas_calls = 0;
  cblas_sbgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a.data(), 3, b.data(), 4, 0.0f, c.data(), 4);
  EXPECT_EQ(g_cblas_calls, 1);
  EXPECT_EQ(g_cblas_info, 9);  // lda < M
  cblas_gemm_bf16bf16f32(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 4, 4, 1.0f, a.data(), 4, b.data(), 4,
                         0.0f, c.data(), 4);
  EXPECT_EQ(g_cblas_calls, 2);
  EXPECT_EQ(g_cblas_info, 4);
  const int m = 4, n = 4, k = 4, ldc = 2;
  const float one = 1.0f, zero = 0.0f;
  g_xerbla_calls = 0;
  sbgemm_("N", "N", &m, &n, &k, &one, a.data(), &m, b.data(), &k, &zero, c.data(), &ldc, 1, 1);
  EXPECT_EQ(g_xerbla_calls, 1);
  EXPECT_EQ(g_xerbla_info, 13);
  EXPECT_EQ(g_xerbla_name.substr(0, 6), "SBGEMM");
  for (float x : c) ASSERT_EQ(x, 3.0f);
}

TEST(Sbgemm, UsesVdpbf16psWhereTheCpuHasIt) {
  const std::string name = taihu::gemm::sbgemm_kernel_name();
  const bool hw = taihu::arch::cpu_features().avx512bf16 &&
                  taihu::arch::active_isa() == taihu::arch::Isa::avx512;
  EXPECT_EQ(hw, name.find("vdpbf16ps") != std::string::npos) << name;
}

}  // namespace
