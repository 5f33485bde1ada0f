// Large products checked in O(mn) with a random vector (as BLIS's testsuite does):
// C x must equal alpha A (B x) + beta C0 x. Sizes span several mc, kc and nc blocks.
#include <gtest/gtest.h>

#include <cmath>

#include "gemm_test_support.hpp"
#include "taihu/arch/threads.hpp"

namespace {

using namespace gemm_test;

template <class T>
void check_large(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k) {
  std::mt19937_64 rng(static_cast<unsigned>(m + n + k));
  const Shape s = make_shape(layout, ta, tb, m, n, k, 1);
  const auto a = random_vector<T>(a_size(s), rng), b = random_vector<T>(b_size(s), rng);
  auto c = random_vector<T>(c_size(s), rng);
  const auto c0 = c;
  const auto x = random_vector<double>(static_cast<std::size_t>(n), rng);
  const T alpha = T(0.5), beta = T(-1);
  gemm<T>(s, alpha, a.data(), b.data(), beta, c.data());
  const bool row = layout == Layout::row_major;
  auto at = [&](const std::vector<T>& v, index_t ld, bool trans, index_t i, index_t j) {
    const index_t r = trans ? j : i, cc = trans ? i : j;
    return static_cast<double>(row ? v[r * ld + cc] : v[r + cc * ld]);
  };
  std::vector<double> bx(k, 0.0), want(m, 0.0), got(m, 0.0), scale(m, 0.0);
  for (index_t p = 0; p < k; ++p)
    for (index_t j = 0; j < n; ++j) bx[p] += at(b, s.ldb, tb == Trans::yes, p, j) * x[j];
  for (index_t i = 0; i < m; ++i) {
    for (index_t p = 0; p < k; ++p) want[i] += alpha * at(a, s.lda, ta == Trans::yes, i, p) * bx[p];
    for (index_t j = 0; j < n; ++j) {
      want[i] += beta * at(c0, s.ldc, false, i, j) * x[j];
      got[i] += at(c, s.ldc, false, i, j) * x[j];
      scale[i] += x[j] * x[j];
    }
  }
  const double eps = std::numeric_limits<T>::epsilon();
  // Rounding errors of the entries of C are ~eps sqrt(k) |c| with random signs, so
  // their sum against x grows like its 2-norm; one wrong entry (|c| ~ sqrt(k)/2)
  // would exceed this bound by orders of magnitude.
  const double c_scale = std::fabs(static_cast<double>(alpha)) * std::sqrt(static_cast<double>(k)) +
                         std::fabs(static_cast<double>(beta));
  for (index_t i = 0; i < m; ++i)
    ASSERT_NEAR(got[i], want[i], 16 * eps * std::sqrt(static_cast<double>(k + n)) * std::sqrt(scale[i]) * c_scale)
        << "row " << i << " of " << m << "x" << n << "x" << k;
}

TEST(GemmLarge, SinglePrecisionAcrossBlocks) {
  TAIHU_TEST_REQUIRE_ISA();
  taihu::arch::set_num_threads(2);
  check_large<float>(Layout::col_major, Trans::no, Trans::no, 1111, 8500, 700);
  check_large<float>(Layout::row_major, Trans::yes, Trans::yes, 700, 333, 1500);
  taihu::arch::set_num_threads(0);
}

TEST(GemmLarge, DoublePrecisionAcrossBlocks) {
  TAIHU_TEST_REQUIRE_ISA();
  taihu::arch::set_num_threads(2);
  check_large<double>(Layout::col_major, Trans::yes, Trans::no, 900, 1000, 600);
  check_large<double>(Layout::row_major, Trans::no, Trans::yes, 1000, 1, 4096);
  taihu::arch::set_num_threads(0);
}

// Products large in both m and n take the B-resident loops (B's micro-panel in L1, C
// swept down its columns): ragged tiles on both edges, several mc, kc and nc blocks
// (n = 6000 > nc for SGEMM), 1 and 2 threads sharing B's blocks.
TEST(GemmLarge, BResidentOrderWithRaggedEdges) {
  TAIHU_TEST_REQUIRE_ISA();
  for (int threads : {1, 2}) {
    taihu::arch::set_num_threads(threads);
    check_large<float>(Layout::col_major, Trans::no, Trans::no, 1501, 6000, 407);
    check_large<float>(Layout::col_major, Trans::yes, Trans::no, 777, 301, 1300);
    check_large<double>(Layout::col_major, Trans::no, Trans::yes, 1203, 499, 613);
  }
  taihu::arch::set_num_threads(0);
}

}  // namespace
