// The skinny path (few columns of op(B), A read in place or packed strip by strip) and its
// no-pack form (op(B) in place too): shapes that take them, with k spanning several kc blocks, ragged row strips, padded leading
// dimensions, beta != 0, 1 and 2 threads, against the naive reference; and the same
// shapes with the path switched off give the same answer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "gemm_test_support.hpp"
#include "taihu/arch/threads.hpp"

namespace {

using namespace gemm_test;

template <class T>
class GemmSkinny : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmSkinny, Types);

TYPED_TEST(GemmSkinny, MatchesNaiveReferenceAcrossKcBlocksAndRaggedRows) {
  TAIHU_TEST_REQUIRE_ISA();
  using T = TypeParam;
  const double eps = std::numeric_limits<T>::epsilon();
  std::mt19937_64 rng(7);
  // Column-major, A not transposed: the layout the skinny path reads in place. The
  // row-major case with B not transposed maps to it too (C^T = B^T A^T). Up to 8 row
  // strips the no-pack path reads op(B) in place too, transposed or not. A transposed
  // A (row-major with B transposed, as dnn's implicit GEMM calls it) is packed strip by
  // strip, through the ISA's transposing packer where it has one.
  struct Case {
    Layout layout;
    index_t m, n, k;
    Trans tb = Trans::no;
    Trans ta = Trans::no;
  };
  const Case cases[] = {{Layout::col_major, 333, 50, 1000},           {Layout::col_major, 64, 64, 64},
                        {Layout::col_major, 97, 7, 641},              {Layout::row_major, 40, 301, 577},
                        {Layout::col_major, 1000, 64, 3},             {Layout::row_major, 64, 3136, 96},
                        {Layout::col_major, 100, 13, 700, Trans::yes}, {Layout::col_major, 128, 45, 300, Trans::yes},
                        {Layout::col_major, 333, 50, 1000, Trans::no, Trans::yes},
                        {Layout::col_major, 97, 7, 641, Trans::yes, Trans::yes},
                        {Layout::row_major, 40, 301, 577, Trans::yes},
                        {Layout::col_major, 1000, 64, 19, Trans::no, Trans::yes}};
  for (int threads : {1, 2}) {
    taihu::arch::set_num_threads(threads);
    for (const Case& cs : cases)
      for (double beta : {0.0, 0.5}) {
        const Shape s = make_shape(cs.layout, cs.ta, cs.tb, cs.m, cs.n, cs.k, 3);
        auto a = random_vector<T>(a_size(s), rng);
        auto b = random_vector<T>(b_size(s), rng);
        auto c = random_vector<T>(c_size(s), rng);
        std::vector<double> want(c.begin(), c.end()), bound;
        reference(s, 1.5, a, b, beta, want, bound);
        if (beta == 0.0)
          for (auto& v : c) v = std::numeric_limits<T>::quiet_NaN();
        gemm(s, T(1.5), a.data(), b.data(), T(beta), c.data());
        const std::string err = compare(s, c, want, bound, eps * static_cast<double>(cs.k + 2));
        EXPECT_TRUE(err.empty()) << cs.m << "x" << cs.n << "x" << cs.k << " threads " << threads
                                 << " beta " << beta << ": " << err;
      }
  }
  taihu::arch::set_num_threads(0);
}

// Two threads share B through two alternating buffers (one barrier per kc block): the
// result is still bitwise that of one thread.
TYPED_TEST(GemmSkinny, TwoThreadsAreBitwiseOneThreadAcrossKcBlocks) {
  TAIHU_TEST_REQUIRE_ISA();
  using T = TypeParam;
  std::mt19937_64 rng(9);
  const Shape s = make_shape(Layout::col_major, Trans::no, Trans::no, 333, 50, 2100, 3);
  const auto a = random_vector<T>(a_size(s), rng), b = random_vector<T>(b_size(s), rng);
  const auto c0 = random_vector<T>(c_size(s), rng);
  auto c1 = c0, c2 = c0;
  taihu::arch::set_num_threads(1);
  gemm(s, T(0.75), a.data(), b.data(), T(-0.5), c1.data());
  taihu::arch::set_num_threads(2);
  gemm(s, T(0.75), a.data(), b.data(), T(-0.5), c2.data());
  taihu::arch::set_num_threads(0);
  EXPECT_EQ(c1, c2);
}

}  // namespace
