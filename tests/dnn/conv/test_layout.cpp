// Tensor descriptors (shape/stride checks, error messages) and the blocked layouts'
// reorders: element positions by the layout definitions, round trips, zero padding.
#include <gtest/gtest.h>

#include <string>

#include "conv_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/layout.hpp"
#include "taihu/dnn/tensor.hpp"

namespace {

using namespace taihu::dnn;

TEST(TensorDesc, DenseStridesAndChecks) {
  const TensorDesc t{2, 3, 4, 5};
  EXPECT_EQ(t.strides(), (std::vector<index_t>{60, 20, 5, 1}));
  EXPECT_EQ(t.elements(), 120);
  EXPECT_EQ(t.span(), 120);
  EXPECT_TRUE(t.is_dense());
  EXPECT_EQ(t.offset({1, 2, 3, 4}), 119);
  EXPECT_EQ(t.str(), "[2, 3, 4, 5]");
  t.expect_dims("conv forward", "x", {2, 3, 4, 5}, "NCHW");
  try {
    t.expect_dims("conv forward", "x", {2, 64, 4, 5}, "NCHW");
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_STREQ(e.what(), "taihu: conv forward: x dim 1 (C) is 3, expected 64");
  }
  EXPECT_THROW(t.expect_dims("op", "x", {2, 3, 4}), taihu::Error);
  EXPECT_THROW(TensorDesc({2, -1}), taihu::Error);
  EXPECT_THROW(TensorDesc({2, 3}, {1}), taihu::Error);
  EXPECT_THROW((void)t.dim(4), taihu::Error);
  const TensorDesc strided({2, 3}, {1, 2});
  EXPECT_FALSE(strided.is_dense());
  EXPECT_EQ(strided.span(), 6);
  Tensor z(TensorDesc{3, 5});
  for (index_t i = 0; i < z.elements(); ++i) EXPECT_EQ(z.data()[i], 0.0f);
}

// The activation reorders dispatch on TAIHU_ISA (skipped where the level cannot run).
class LayoutReorder : public conv_test::ConvTest {};

TEST_F(LayoutReorder, Nchw16cPositionsAndRoundTrip) {
  // partial last block (11: 8 + 3 lanes, 19: 16 + 3, 24: 16 + 8), whole blocks (32),
  // pixel tails past the 8-pixel transposes, several images.
  const index_t shapes[][4] = {{2, 11, 3, 5}, {1, 19, 5, 7}, {2, 24, 4, 4}, {1, 32, 1, 3}, {1, 5, 3, 3}};
  for (const auto& s : shapes) {
    const index_t n = s[0], c = s[1], h = s[2], w = s[3];
    SCOPED_TRACE("n " + std::to_string(n) + " c " + std::to_string(c) + " hw " + std::to_string(h * w));
    const auto src = conv_test::random_vector(n * c * h * w, 43);
    std::vector<float> blk(nchw16c_elements(n, c, h, w), -1.0f), back(src.size(), -1.0f);
    ASSERT_EQ(blk.size(), static_cast<std::size_t>(n * ((c + 15) / 16) * 16 * h * w));
    reorder_nchw_to_nchw16c(src.data(), blk.data(), n, c, h, w);
    const index_t cb = (c + 15) / 16;
    for (index_t i = 0; i < n; ++i)
      for (index_t ch = 0; ch < cb * 16; ++ch)
        for (index_t y = 0; y < h; ++y)
          for (index_t x = 0; x < w; ++x) {
            const float got = blk[(((i * cb + ch / 16) * h + y) * w + x) * 16 + ch % 16];
            ASSERT_EQ(got, ch < c ? src[((i * c + ch) * h + y) * w + x] : 0.0f);
          }
    reorder_nchw16c_to_nchw(blk.data(), back.data(), n, c, h, w);
    EXPECT_EQ(back, src);
  }
  std::vector<float> blk(nchw16c_elements(1, 3, 2, 2), -1.0f);
  EXPECT_THROW(reorder_nchw_to_nchw16c(nullptr, blk.data(), 1, 3, 2, 2), taihu::Error);
  EXPECT_THROW(reorder_nchw16c_to_nchw(blk.data(), blk.data(), 1, -3, 2, 2), taihu::Error);
}

TEST_F(LayoutReorder, Nchw8cPositionsAndRoundTrip) {
  // partial last block (11, 19, 3 channels), pixel tails past the 8-pixel transposes
  // (15 = 8 + 7, 35 = 32 + 3, 16: none), several images.
  const index_t shapes[][4] = {{2, 11, 3, 5}, {1, 19, 5, 7}, {2, 3, 4, 4}, {1, 16, 1, 3}};
  for (const auto& s : shapes) {
    const index_t n = s[0], c = s[1], h = s[2], w = s[3];
    SCOPED_TRACE("n " + std::to_string(n) + " c " + std::to_string(c) + " hw " + std::to_string(h * w));
    const auto src = conv_test::random_vector(n * c * h * w, 41);
    std::vector<float> blk(nchw8c_elements(n, c, h, w), -1.0f), back(src.size(), -1.0f);
    reorder_nchw_to_nchw8c(src.data(), blk.data(), n, c, h, w);
    const index_t cb = channel_blocks(c);
    for (index_t i = 0; i < n; ++i)
      for (index_t ch = 0; ch < cb * 8; ++ch)
        for (index_t y = 0; y < h; ++y)
          for (index_t x = 0; x < w; ++x) {
            const float got = blk[(((i * cb + ch / 8) * h + y) * w + x) * 8 + ch % 8];
            ASSERT_EQ(got, ch < c ? src[((i * c + ch) * h + y) * w + x] : 0.0f);
          }
    reorder_nchw8c_to_nchw(blk.data(), back.data(), n, c, h, w);
    EXPECT_EQ(back, src);
  }
  const index_t n = 2, c = 11, h = 3, w = 5;
  const auto src = conv_test::random_vector(n * c * h * w, 41);
  std::vector<float> blk(nchw8c_elements(n, c, h, w), -1.0f);
  EXPECT_THROW(reorder_nchw_to_nchw8c(nullptr, blk.data(), n, c, h, w), taihu::Error);
  EXPECT_THROW(reorder_nchw_to_nchw8c(src.data(), blk.data(), -1, c, h, w), taihu::Error);
}

TEST(Layout, Oihw8i8oPositionsAndRoundTrip) {
  const index_t k = 13, c = 6, kh = 3, kw = 2;
  const auto src = conv_test::random_vector(k * c * kh * kw, 42);
  std::vector<float> blk(oihw8i8o_elements(k, c, kh, kw), -1.0f), back(src.size());
  reorder_oihw_to_oihw8i8o(src.data(), blk.data(), k, c, kh, kw);
  const index_t cb = channel_blocks(c), kb = channel_blocks(k);
  EXPECT_EQ(static_cast<index_t>(blk.size()), kb * cb * kh * kw * 64);
  for (index_t o = 0; o < kb * 8; ++o)
    for (index_t i = 0; i < cb * 8; ++i)
      for (index_t p = 0; p < kh * kw; ++p) {
        const float got = blk[((((o / 8) * cb + i / 8) * kh * kw + p) * 8 + i % 8) * 8 + o % 8];
        EXPECT_EQ(got, (o < k && i < c) ? src[(o * c + i) * kh * kw + p] : 0.0f);
      }
  reorder_oihw8i8o_to_oihw(blk.data(), back.data(), k, c, kh, kw);
  EXPECT_EQ(back, src);
}

}  // namespace
