// Batched variants and the pre-packed operand equal independent single calls, and
// results are bitwise identical on 1 and 2 threads.
#include <gtest/gtest.h>

#include <limits>

#include "gemm_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/packed.hpp"

namespace {

using namespace gemm_test;

TEST(GemmBatch, StridedAndPointerArraysEqualSingleCalls) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(7);
  for (Layout layout : {Layout::col_major, Layout::row_major}) {
    const Shape s = make_shape(layout, Trans::no, Trans::yes, 23, 31, 17, 2);
    const index_t batch = 5, sa = a_size(s) + 3, sb = b_size(s), sc = c_size(s) + 1;
    const auto a = random_vector<float>(sa * batch, rng), b = random_vector<float>(sb * batch, rng);
    const auto c0 = random_vector<float>(sc * batch, rng);
    auto single = c0, strided = c0, pointers = c0;
    for (index_t i = 0; i < batch; ++i)
      gemm<float>(s, 0.5f, a.data() + i * sa, b.data() + i * sb, 2.f, single.data() + i * sc);
    taihu::gemm::sgemm_batch_strided(s.layout, s.ta, s.tb, s.m, s.n, s.k, 0.5f, a.data(), s.lda, sa,
                                     b.data(), s.ldb, sb, 2.f, strided.data(), s.ldc, sc, batch);
    std::vector<const float*> ap, bp;
    std::vector<float*> cp;
    for (index_t i = 0; i < batch; ++i) {
      ap.push_back(a.data() + i * sa);
      bp.push_back(b.data() + i * sb);
      cp.push_back(pointers.data() + i * sc);
    }
    taihu::gemm::sgemm_batch(s.layout, s.ta, s.tb, s.m, s.n, s.k, 0.5f, ap.data(), s.lda, bp.data(),
                             s.ldb, 2.f, cp.data(), s.ldc, batch);
    EXPECT_EQ(single, strided);
    EXPECT_EQ(single, pointers);
  }
}

TEST(GemmPacked, PackedAEqualsUnpacked) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(9);
  for (Layout layout : {Layout::col_major, Layout::row_major})
    for (Trans ta : {Trans::no, Trans::yes})
      for (Trans tb : {Trans::no, Trans::yes}) {
        const Shape s = make_shape(layout, ta, tb, 131, 77, 700, 1);
        const auto a = random_vector<double>(a_size(s), rng), b = random_vector<double>(b_size(s), rng);
        const auto c0 = random_vector<double>(c_size(s), rng);
        auto plain = c0, packed = c0;
        gemm<double>(s, -1.0, a.data(), b.data(), 0.5, plain.data());
        const taihu::gemm::PackedA<double> pa(layout, ta, s.m, s.k, a.data(), s.lda);
        EXPECT_EQ(pa.rows(), s.m);
        EXPECT_EQ(pa.depth(), s.k);
        for (int rep = 0; rep < 2; ++rep) {  // packed once, used twice
          packed = c0;
          taihu::gemm::gemm_packed(layout, pa, tb, s.n, -1.0, b.data(), s.ldb, 0.5, packed.data(), s.ldc);
          EXPECT_EQ(plain, packed) << "layout " << static_cast<int>(layout) << " ta " << (ta == Trans::yes)
                                   << " tb " << (tb == Trans::yes);
        }
      }
}

// repack: new values of A into the same storage give the product of the new A (and
// none of the old one's values survive: every packed element is rewritten).
TEST(GemmPacked, RepackTakesTheNewValues) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(11);
  for (Layout layout : {Layout::col_major, Layout::row_major})
    for (Trans ta : {Trans::no, Trans::yes}) {
      const Shape s = make_shape(layout, ta, Trans::no, 45, 19, 600, 3);  // several depth blocks, panel tails
      const auto a1 = random_vector<float>(a_size(s), rng), a2 = random_vector<float>(a_size(s), rng);
      const auto b = random_vector<float>(b_size(s), rng);
      std::vector<float> plain(c_size(s), 0.f), packed(c_size(s), 0.f);
      gemm<float>(s, 1.f, a2.data(), b.data(), 0.f, plain.data());
      taihu::gemm::PackedA<float> pa(layout, ta, s.m, s.k, a1.data(), s.lda);
      pa.repack(a2.data());
      taihu::gemm::gemm_packed(layout, pa, Trans::no, s.n, 1.f, b.data(), s.ldb, 0.f, packed.data(), s.ldc);
      EXPECT_EQ(plain, packed) << "layout " << static_cast<int>(layout) << " ta " << (ta == Trans::yes);
      EXPECT_THROW(pa.repack(nullptr), taihu::Error);
    }
}

TEST(GemmThreads, OneAndTwoThreadsAreBitwiseIdentical) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(11);
  const Shape s = make_shape(Layout::row_major, Trans::no, Trans::no, 64, 3136, 576, 0);
  const auto a = random_vector<float>(a_size(s), rng), b = random_vector<float>(b_size(s), rng);
  std::vector<float> c1(c_size(s)), c2(c_size(s));
  taihu::arch::set_num_threads(1);
  gemm<float>(s, 1.f, a.data(), b.data(), 0.f, c1.data());
  taihu::arch::set_num_threads(2);
  gemm<float>(s, 1.f, a.data(), b.data(), 0.f, c2.data());
  taihu::arch::set_num_threads(0);
  EXPECT_EQ(c1, c2);
}

// Enough rows for the row-split threading (each thread packs its own A blocks): still
// bitwise identical to one thread, ragged edges, k across kc blocks, packed A too.
TEST(GemmThreads, RowSplitIsBitwiseIdenticalToOneThread) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(13);
  for (Trans ta : {Trans::no, Trans::yes}) {
    const Shape s = make_shape(Layout::col_major, ta, Trans::no, 301, 203, 450, 3);
    const auto a = random_vector<double>(a_size(s), rng), b = random_vector<double>(b_size(s), rng);
    const auto c0 = random_vector<double>(c_size(s), rng);
    auto c1 = c0, c2 = c0, p1 = c0, p2 = c0;
    const taihu::gemm::PackedA<double> pa(s.layout, ta, s.m, s.k, a.data(), s.lda);
    taihu::arch::set_num_threads(1);
    gemm<double>(s, 0.75, a.data(), b.data(), -0.5, c1.data());
    taihu::gemm::gemm_packed(s.layout, pa, s.tb, s.n, 0.75, b.data(), s.ldb, -0.5, p1.data(), s.ldc);
    taihu::arch::set_num_threads(2);
    gemm<double>(s, 0.75, a.data(), b.data(), -0.5, c2.data());
    taihu::gemm::gemm_packed(s.layout, pa, s.tb, s.n, 0.75, b.data(), s.ldb, -0.5, p2.data(), s.ldc);
    taihu::arch::set_num_threads(0);
    EXPECT_EQ(c1, c2) << "ta " << (ta == Trans::yes);
    EXPECT_EQ(p1, p2) << "ta " << (ta == Trans::yes);
    EXPECT_EQ(c1, p1) << "ta " << (ta == Trans::yes);
  }
}

// A deep product with a small C (k >= 4 kc, m x n <= 256 x 256) is summed in two
// halves of the depth: right against the double reference for both layouts and
// transposes, beta = 0 never reads C, and 1 and 2 threads stay bitwise identical.
TEST(GemmThreads, DepthSplitIsRightAndBitwiseIdenticalToOneThread) {
  TAIHU_TEST_REQUIRE_ISA();
  std::mt19937_64 rng(17);
  for (Layout layout : {Layout::col_major, Layout::row_major})
    for (Trans ta : {Trans::no, Trans::yes})
      for (double beta : {0.0, -0.5}) {
        const Shape s = make_shape(layout, ta, Trans::no, 150, 91, 2100, 1);
        const auto a = random_vector<float>(a_size(s), rng), b = random_vector<float>(b_size(s), rng);
        auto c0 = random_vector<float>(c_size(s), rng);
        if (beta == 0.0) c0[0] = std::numeric_limits<float>::quiet_NaN();
        std::vector<double> want(c0.begin(), c0.end()), bound;
        reference(s, 1.5, a, b, beta, want, bound);
        auto c1 = c0, c2 = c0, p2 = c0;
        const taihu::gemm::PackedA<float> pa(s.layout, ta, s.m, s.k, a.data(), s.lda);
        taihu::arch::set_num_threads(1);
        gemm<float>(s, 1.5f, a.data(), b.data(), static_cast<float>(beta), c1.data());
        taihu::arch::set_num_threads(2);
        gemm<float>(s, 1.5f, a.data(), b.data(), static_cast<float>(beta), c2.data());
        taihu::gemm::gemm_packed(s.layout, pa, s.tb, s.n, 1.5f, b.data(), s.ldb, static_cast<float>(beta),
                                 p2.data(), s.ldc);
        taihu::arch::set_num_threads(0);
        const std::string err = compare(s, c1, want, bound, 4e-7 * static_cast<double>(s.k + 2));
        EXPECT_TRUE(err.empty()) << err;
        EXPECT_EQ(c1, c2) << "layout " << static_cast<int>(layout) << " ta " << (ta == Trans::yes)
                          << " beta " << beta;
        EXPECT_EQ(c1, p2) << "packed A, layout " << static_cast<int>(layout) << " ta " << (ta == Trans::yes)
                          << " beta " << beta;
      }
}

}  // namespace
