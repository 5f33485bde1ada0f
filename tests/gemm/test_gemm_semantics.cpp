// BLAS semantics: beta == 0 never reads C, alpha == 0 never reads A or B, zero sizes,
// argument errors naming the parameter, 64-bit leading dimensions, calls from inside
// a caller's parallel region.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cmath>
#include <limits>

#include "gemm_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"

namespace {

using namespace gemm_test;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(GemmSemantics, BetaZeroIgnoresNanAndInfInC) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(1);
  for (index_t n : {1, 7, 64}) {  // GEMV path and driver
    const Shape s = make_shape(Layout::col_major, Trans::no, Trans::no, 37, n, 19, 0);
    const auto a = random_vector<float>(a_size(s), rng), b = random_vector<float>(b_size(s), rng);
    std::vector<float> c(c_size(s));
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = i % 2 ? kNaN : -kInf;
    gemm<float>(s, 1.f, a.data(), b.data(), 0.f, c.data());
    std::vector<double> want(c.size(), 0.0), bound;
    reference(s, 1.0, a, b, 0.0, want, bound);
    EXPECT_EQ(compare(s, c, want, bound, 1e-5), "");
  }
}

TEST(GemmSemantics, AlphaZeroNeverReadsAOrB) {
  TAIHU_TEST_REQUIRE_ISA();
  const Shape s = make_shape(Layout::row_major, Trans::yes, Trans::no, 9, 11, 13, 0);
  const std::vector<float> a(a_size(s), kNaN), b(b_size(s), kNaN);
  std::vector<float> c(c_size(s), 2.f);
  gemm<float>(s, 0.f, a.data(), b.data(), 0.5f, c.data());
  for (float v : c) ASSERT_EQ(v, 1.f);
  // Null A and B are fine when they are not read.
  gemm<float>(s, 0.f, nullptr, nullptr, 0.f, c.data());
  for (float v : c) ASSERT_EQ(v, 0.f);
}

TEST(GemmSemantics, ZeroSizes) {
  TAIHU_TEST_REQUIRE_ISA();
  std::vector<float> c(16, 3.f), a(16, 1.f), b(16, 1.f);
  taihu::gemm::sgemm(Layout::col_major, Trans::no, Trans::no, 0, 4, 4, 1.f, a.data(), 1, b.data(),
                     4, 0.f, c.data(), 1);
  for (float v : c) ASSERT_EQ(v, 3.f);  // m == 0: nothing touched
  taihu::gemm::sgemm(Layout::col_major, Trans::no, Trans::no, 4, 4, 0, 1.f, nullptr, 4, nullptr,
                     1, 0.5f, c.data(), 4);
  for (float v : c) ASSERT_EQ(v, 1.5f);  // k == 0: C = beta C
}

void expect_error(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no error for " << needle;
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(GemmSemantics, BadArgumentsNameTheParameter) {
  TAIHU_TEST_REQUIRE_ISA();
  std::vector<float> x(100, 1.f);
  float* p = x.data();
  using taihu::gemm::sgemm;
  expect_error([&] { sgemm(Layout::col_major, Trans::no, Trans::no, 5, 2, 2, 1, p, 3, p, 2, 0, p, 5); },
               "sgemm: parameter 9 (lda) = 3 must be >= max(1, 5)");
  expect_error([&] { sgemm(Layout::row_major, Trans::no, Trans::no, 2, 5, 2, 1, p, 2, p, 4, 0, p, 5); },
               "parameter 11 (ldb) = 4 must be >= max(1, 5)");
  expect_error([&] { sgemm(Layout::col_major, Trans::no, Trans::no, 5, 2, 2, 1, p, 5, p, 2, 0, p, 4); },
               "parameter 14 (ldc) = 4");
  expect_error([&] { sgemm(Layout::col_major, Trans::no, Trans::no, -1, 2, 2, 1, p, 5, p, 2, 0, p, 5); },
               "parameter 4 (m) = -1 must be >= 0");
  expect_error([&] { sgemm(Layout::col_major, static_cast<Trans>(7), Trans::no, 1, 1, 1, 1, p, 1, p, 1, 0, p, 1); },
               "parameter 2 (trans_a) = 7");
  expect_error([&] { sgemm(Layout::col_major, Trans::no, Trans::no, 2, 2, 2, 1, nullptr, 2, p, 2, 0, p, 2); },
               "parameter 8 (a) is null");
}

// A huge leading dimension (> 2^31 elements) on a sparse mapping: only the touched
// pages are ever allocated, so the test costs a few KiB while exercising 64-bit
// offsets in packing and in the micro-kernel's C addressing.
TEST(GemmSemantics, SixtyFourBitLeadingDimensions) {
  TAIHU_TEST_REQUIRE_ISA();
  const index_t ld = (index_t{1} << 31) + 17;
  const index_t m = 3, n = 4, k = 3;
  const std::size_t bytes = static_cast<std::size_t>(ld * std::max(n, k)) * sizeof(float);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) GTEST_SKIP() << "cannot reserve " << bytes << " bytes of address space";
  auto* big = static_cast<float*>(mem);
  // A (col-major, lda = ld): A(i, p) = i + 10 p. C (col-major, ldc = ld) shares the map.
  std::vector<float> b(k * n);
  for (index_t p = 0; p < k; ++p)
    for (index_t i = 0; i < m; ++i) big[i + p * ld] = static_cast<float>(i + 10 * p);
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < k; ++p) b[p + j * k] = static_cast<float>(1 + p + j);
  std::vector<float> c_small(m * n, 0.f);
  taihu::gemm::sgemm(Layout::col_major, Trans::no, Trans::no, m, n, k, 1.f, big, ld, b.data(), k,
                     0.f, c_small.data(), m);
  float* c_big = big + 5;  // C interleaved at rows 5.. of the same huge columns
  taihu::gemm::sgemm(Layout::col_major, Trans::no, Trans::no, m, n, k, 1.f, big, ld, b.data(), k,
                     0.f, c_big, ld);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      float want = 0;
      for (index_t p = 0; p < k; ++p) want += static_cast<float>(i + 10 * p) * static_cast<float>(1 + p + j);
      EXPECT_EQ(c_small[i + j * m], want);
      EXPECT_EQ(c_big[i + j * ld], want);
    }
  munmap(mem, bytes);
}

TEST(GemmSemantics, CallsFromInsideACallersParallelRegion) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(3);
  const Shape s = make_shape(Layout::col_major, Trans::no, Trans::yes, 150, 130, 90, 0);
  const auto a = random_vector<float>(a_size(s), rng), b = random_vector<float>(b_size(s), rng);
  std::vector<double> want(c_size(s), 0.0), bound;
  reference(s, 1.0, a, b, 0.0, want, bound);
  std::vector<std::vector<float>> out(4, std::vector<float>(c_size(s)));
  taihu::arch::set_num_threads(2);
#pragma omp parallel for num_threads(2)
  for (int t = 0; t < 4; ++t) gemm<float>(s, 1.f, a.data(), b.data(), 0.f, out[t].data());
  taihu::arch::set_num_threads(0);
  for (const auto& c : out) EXPECT_EQ(compare(s, c, want, bound, 1e-4), "");
}

}  // namespace
