// Random shapes (odd sizes 1..300, every transpose, both layouts, padded leading
// dimensions, alpha and beta in {0, 1, -1, 0.5}) against the naive reference, on
// 1 and 2 threads, for the ISA level in TAIHU_ISA.
#include <gtest/gtest.h>

#include <limits>

#include "gemm_test_support.hpp"
#include "taihu/arch/threads.hpp"

namespace {

using namespace gemm_test;

template <class T>
class GemmRandom : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmRandom, Types);

index_t random_extent(std::mt19937_64& rng) {
  // Mostly small and odd (edge tiles, the GEMV path at 1), sometimes up to 300.
  const int pick = static_cast<int>(rng() % 8);
  if (pick == 0) return 1;
  if (pick <= 4) return 1 + static_cast<index_t>(rng() % 40);
  return 1 + static_cast<index_t>(rng() % 300);
}

TYPED_TEST(GemmRandom, MatchesNaiveReference) {
  TAIHU_TEST_REQUIRE_ISA();
  using T = TypeParam;
  const double tol = 8 * std::numeric_limits<T>::epsilon();
  const double scalars[] = {0.0, 1.0, -1.0, 0.5};
  std::mt19937_64 rng(42);
  int case_id = 0;
  for (int threads : {1, 2}) {
    taihu::arch::set_num_threads(threads);
    for (Layout layout : {Layout::col_major, Layout::row_major})
      for (Trans ta : {Trans::no, Trans::yes})
        for (Trans tb : {Trans::no, Trans::yes})
          for (int rep = 0; rep < 6; ++rep, ++case_id) {
            const index_t m = random_extent(rng), n = random_extent(rng), k = random_extent(rng);
            const Shape s = make_shape(layout, ta, tb, m, n, k, rng() % 3 == 0 ? 3 : 0);
            const double alpha = case_id % 5 == 4 ? 0.0 : scalars[1 + case_id % 3];
            const double beta = scalars[(case_id / 2) % 4];
            const auto a = random_vector<T>(a_size(s), rng);
            const auto b = random_vector<T>(b_size(s), rng);
            auto c = random_vector<T>(c_size(s), rng);
            std::vector<double> want(c.begin(), c.end()), bound;
            reference(s, alpha, a, b, beta, want, bound);
            const auto before = c;
            gemm<T>(s, static_cast<T>(alpha), a.data(), b.data(), static_cast<T>(beta), c.data());
            const std::string err = compare(s, c, want, bound, tol * static_cast<double>(k + 2));
            ASSERT_TRUE(err.empty()) << err << " alpha=" << alpha << " beta=" << beta
                                     << " threads=" << threads;
            // Padding of C (beyond the logical rows/columns) must be untouched.
            const index_t inner = layout == Layout::row_major ? n : m;
            for (std::size_t i = 0; i < c.size(); ++i)
              if (static_cast<index_t>(i % s.ldc) >= inner) {
                ASSERT_EQ(c[i], before[i]) << "padding element " << i << " written";
              }
          }
  }
  taihu::arch::set_num_threads(0);
}

}  // namespace
