// The Pooling layer's 2x2 stride-2 MAX kernels (caffe_port/src/layers/pool2x2.hpp)
// against a naive window loop (values, argmax mask with Caffe's first-wins ties) and
// against dnn::pooling_forward/backward bit for bit, on LeNet's shapes, rows whose
// output width is not a multiple of 4, ties and -0.0 gradients, at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "layers/pool2x2.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/pooling.hpp"

namespace {

using taihu::dnn::PoolingShape;

PoolingShape shape(long n, long c, long h, long w) {
  PoolingShape s;
  s.batch = n; s.channels = c; s.height = h; s.width = w;
  s.kernel_h = s.kernel_w = 2;
  s.stride_h = s.stride_w = 2;
  s.method = taihu::dnn::PoolMethod::max;
  return s;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check(const PoolingShape& s, int threads) {
  taihu::arch::set_num_threads(threads);
  std::mt19937 rng(static_cast<unsigned>(s.height * 131 + s.width + threads));
  // Values on a coarse grid, so windows often hold ties.
  std::uniform_int_distribution<int> grid(-3, 3);
  const auto in = static_cast<std::size_t>(s.input_elements()), out = static_cast<std::size_t>(s.output_elements());
  std::vector<float> x(in), dy(out);
  for (float& v : x) v = 0.5f * static_cast<float>(grid(rng));
  for (std::size_t i = 0; i < out; ++i) dy[i] = i % 7 == 0 ? -0.0f : 0.25f * static_cast<float>(grid(rng));
  std::vector<float> y(out), dx(in, 7.f), ref_y(out), ref_dx(in);
  std::vector<std::int32_t> mask(out), ref_mask(out);
  ASSERT_TRUE(taihu::caffe::pool2x2_applies(s));
  taihu::caffe::max_pool2x2_forward(s, x.data(), y.data(), mask.data());
  taihu::caffe::max_pool2x2_backward(s, dy.data(), mask.data(), dx.data());
  taihu::dnn::pooling_forward<float>(s, x.data(), ref_y.data(), ref_mask.data());
  taihu::dnn::pooling_backward<float>(s, dy.data(), ref_mask.data(), ref_dx.data());

  const long oh = s.height / 2, ow = s.width / 2;
  for (long p = 0; p < s.batch * s.channels; ++p)
    for (long ph = 0; ph < oh; ++ph)
      for (long pw = 0; pw < ow; ++pw) {
        // Naive: first strict maximum in row-then-column order.
        float best = std::numeric_limits<float>::lowest();
        std::int32_t arg = -1;
        for (long dh = 0; dh < 2; ++dh)
          for (long dw = 0; dw < 2; ++dw) {
            const long at = (2 * ph + dh) * s.width + 2 * pw + dw;
            if (x[static_cast<std::size_t>(p * s.height * s.width + at)] > best) {
              best = x[static_cast<std::size_t>(p * s.height * s.width + at)];
              arg = static_cast<std::int32_t>(at);
            }
          }
        const auto o = static_cast<std::size_t>(p * oh * ow + ph * ow + pw);
        ASSERT_EQ(y[o], best) << "plane " << p << " (" << ph << ", " << pw << ")";
        ASSERT_EQ(mask[o], arg) << "plane " << p << " (" << ph << ", " << pw << ")";
      }
  for (std::size_t i = 0; i < out; ++i) ASSERT_EQ(mask[i], ref_mask[i]) << i;
  for (std::size_t i = 0; i < out; ++i) ASSERT_TRUE(same_bits(y[i], ref_y[i])) << i;
  for (std::size_t i = 0; i < in; ++i) ASSERT_TRUE(same_bits(dx[i], ref_dx[i])) << i << ": " << dx[i] << " vs " << ref_dx[i];
  taihu::arch::set_num_threads(0);
}

TEST(CaffePool2x2, MatchesNaiveAndDnnOnLeNetShapes) {
  for (int t : {1, 2}) {
    check(shape(4, 20, 24, 24), t);
    check(shape(4, 50, 8, 8), t);
  }
}

TEST(CaffePool2x2, RaggedRowsAndSmallPlanes) {
  for (int t : {1, 2}) {
    check(shape(3, 2, 6, 10), t);   // ow 5: one vector step and a scalar tail
    check(shape(2, 3, 2, 2), t);    // one window
    check(shape(1, 1, 4, 14), t);   // ow 7
  }
}

TEST(CaffePool2x2, AppliesOnlyToItsGeometry) {
  EXPECT_FALSE(taihu::caffe::pool2x2_applies(shape(1, 1, 5, 4)));  // odd height: Caffe's ceil window
  PoolingShape s = shape(1, 1, 4, 4);
  s.kernel_w = 3;
  EXPECT_FALSE(taihu::caffe::pool2x2_applies(s));
  s = shape(1, 1, 4, 4);
  s.pad_h = 1;
  EXPECT_FALSE(taihu::caffe::pool2x2_applies(s));
}

}  // namespace
