// Softmax over an axis and SoftmaxWithLoss (ignore_label, the four normalization modes,
// gradients by finite differences in double), and seeded dropout (same mask at any
// thread count, Caffe's 1 / (1 - ratio) scale, keep rate, backward through the mask).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/dropout.hpp"
#include "taihu/dnn/softmax.hpp"

namespace {

using namespace taihu::dnn;
using ops_test::OpsTest;

std::vector<double> naive_softmax(index_t outer, index_t ch, index_t inner,
                                  const std::vector<float>& x) {
  std::vector<double> y(x.size());
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      double m = -1e300, s = 0;
      for (index_t c = 0; c < ch; ++c) m = std::max(m, double(x[(o * ch + c) * inner + i]));
      for (index_t c = 0; c < ch; ++c) s += std::exp(double(x[(o * ch + c) * inner + i]) - m);
      for (index_t c = 0; c < ch; ++c)
        y[(o * ch + c) * inner + i] = std::exp(double(x[(o * ch + c) * inner + i]) - m) / s;
    }
  return y;
}

TEST_F(OpsTest, SoftmaxForwardMatchesNaive) {
  for (const auto& [outer, ch, inner] : {std::tuple<index_t, index_t, index_t>{4, 10, 1},
                                         {2, 1000, 1},
                                         {3, 5, 7},
                                         {2, 3, 300},
                                         {1, 1, 9}}) {
    auto x = ops_test::random_vector<float>(outer * ch * inner, rng, -20, 20);
    x[0] = 80.0f;  // large logits stay finite
    std::vector<float> y(x.size());
    softmax_forward(outer, ch, inner, x.data(), y.data());
    ops_test::expect_close(y, naive_softmax(outer, ch, inner, x), 1e-7, 2e-6,
                           "softmax " + std::to_string(ch) + "x" + std::to_string(inner));
  }
}

TEST_F(OpsTest, SoftmaxBackwardByFiniteDifferences) {
  const index_t outer = 2, ch = 5, inner = 3;
  auto x = ops_test::random_vector<double>(outer * ch * inner, rng, -2, 2);
  const auto w = ops_test::random_vector<double>(x.size(), rng);
  std::vector<double> y(x.size()), dx(x.size());
  softmax_forward(outer, ch, inner, x.data(), y.data());
  softmax_backward(outer, ch, inner, y.data(), w.data(), dx.data());
  ops_test::expect_gradient(
      x, dx,
      [&] {
        std::vector<double> out(x.size());
        softmax_forward(outer, ch, inner, x.data(), out.data());
        return ops_test::dot(w, out);
      },
      "softmax dx");
}

TEST_F(OpsTest, SoftmaxLossFollowsCaffeNormalizationAndIgnoreLabel) {
  SoftmaxLossParams p;
  p.outer = 3;
  p.channels = 4;
  p.inner = 2;
  p.has_ignore_label = true;
  p.ignore_label = 255;
  const std::vector<float> labels{0, 3, 255, 1, 2, 255};  // [outer][inner]; 4 valid
  const auto x = ops_test::random_vector<float>(24, rng, -3, 3);
  const auto prob_ref = naive_softmax(3, 4, 2, x);
  double sum = 0;
  for (index_t o = 0; o < 3; ++o)
    for (index_t i = 0; i < 2; ++i) {
      const auto l = static_cast<index_t>(labels[o * 2 + i]);
      if (l == 255) continue;
      sum -= std::log(std::max(prob_ref[(o * 4 + l) * 2 + i], double(FLT_MIN)));
    }
  const std::pair<LossNormalization, double> modes[] = {{LossNormalization::valid, 4},
                                                        {LossNormalization::full, 6},
                                                        {LossNormalization::batch_size, 3},
                                                        {LossNormalization::none, 1}};
  std::vector<float> prob(24), dx(24);
  for (const auto& [mode, divisor] : modes) {
    p.normalization = mode;
    const float loss = softmax_loss_forward(p, x.data(), labels.data(), prob.data());
    EXPECT_NEAR(loss, sum / divisor, 1e-5) << int(mode);
    EXPECT_FLOAT_EQ(softmax_loss_normalizer(p, labels.data()), float(divisor));
    softmax_loss_backward(p, prob.data(), labels.data(), 2.0f, dx.data());
    for (index_t o = 0; o < 3; ++o)
      for (index_t i = 0; i < 2; ++i) {
        const auto l = static_cast<index_t>(labels[o * 2 + i]);
        for (index_t c = 0; c < 4; ++c) {
          const index_t at = (o * 4 + c) * 2 + i;
          const double expect =
              l == 255 ? 0.0 : 2.0 * (prob_ref[at] - (c == l ? 1.0 : 0.0)) / divisor;
          ASSERT_NEAR(dx[at], expect, 1e-6) << "mode " << int(mode) << " at " << at;
        }
      }
  }
  // All ignored: VALID clamps the divisor to 1 and the loss is 0.
  const std::vector<float> all_ignored(6, 255.0f);
  p.normalization = LossNormalization::valid;
  EXPECT_EQ(softmax_loss_forward(p, x.data(), all_ignored.data(), prob.data()), 0.0f);
  // Bad label.
  const std::vector<float> bad{0, 4, 1, 1, 1, 1};
  try {
    softmax_loss_forward(p, x.data(), bad.data(), prob.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("labels[1]"), std::string::npos) << e.what();
  }
  try {
    softmax_loss_backward(p, prob.data(), bad.data(), 1.0f, dx.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("labels[1]"), std::string::npos) << e.what();
  }
}

TEST_F(OpsTest, SoftmaxLossGradientByFiniteDifferences) {
  SoftmaxLossParams p;
  p.outer = 2;
  p.channels = 3;
  p.inner = 2;
  p.has_ignore_label = true;
  p.ignore_label = 1;
  p.normalization = LossNormalization::valid;
  const std::vector<double> labels{0, 1, 2, 2};
  auto x = ops_test::random_vector<double>(12, rng, -2, 2);
  std::vector<double> prob(12), dx(12);
  softmax_loss_forward(p, x.data(), labels.data(), prob.data());
  softmax_loss_backward(p, prob.data(), labels.data(), 1.0, dx.data());
  ops_test::expect_gradient(
      x, dx,
      [&] {
        std::vector<double> pr(12);
        return softmax_loss_forward(p, x.data(), labels.data(), pr.data());
      },
      "softmax loss dx");
}

TEST_F(OpsTest, SoftmaxRejectsBadSizes) {
  std::vector<float> v(8);
  try {
    softmax_forward(2, 0, 4, v.data(), v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("channels"), std::string::npos) << e.what();
  }
  try {
    softmax_backward(2, 4, -1, v.data(), v.data(), v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("inner"), std::string::npos) << e.what();
  }
}

TEST_F(OpsTest, DropoutIsReproducibleAcrossThreadCountsAndScalesLikeCaffe) {
  const index_t n = 200003;
  const auto x = ops_test::random_vector<float>(n, rng, 0.5, 1.5);
  DropoutParams p;
  p.ratio = 0.3;
  p.seed = 42;
  p.stream = 7;
  std::vector<float> y1(n), y2(n);
  std::vector<std::uint8_t> m1(n), m2(n), m3(n);
  taihu::arch::set_num_threads(1);
  dropout_forward_training(p, n, x.data(), y1.data(), m1.data());
  taihu::arch::set_num_threads(2);
  dropout_forward_training(p, n, x.data(), y2.data(), m2.data());
  taihu::arch::set_num_threads(0);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(y1, y2);
  dropout_mask(p, n, m3.data());  // the scalar path agrees with the vector kernels
  EXPECT_EQ(m1, m3);
  index_t kept = 0;
  for (index_t i = 0; i < n; ++i) {
    kept += m1[i];
    ASSERT_FLOAT_EQ(y1[i], m1[i] ? x[i] / 0.7f : 0.0f) << i;
  }
  EXPECT_NEAR(double(kept) / double(n), 0.7, 0.005);
  // Another stream gives another mask.
  p.stream = 8;
  dropout_mask(p, n, m3.data());
  EXPECT_NE(m1, m3);
  // Backward passes gradients through the kept units with the same scale.
  p.stream = 7;
  const auto dy = ops_test::random_vector<float>(n, rng);
  std::vector<float> dx(n);
  dropout_backward(p, n, m1.data(), dy.data(), dx.data());
  for (index_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(dx[i], m1[i] ? dy[i] / 0.7f : 0.0f);
  // Inference: identity with scale_train, (1 - ratio) without.
  std::vector<float> yi(n);
  p.scale_train = false;
  dropout_forward_inference(p, n, x.data(), yi.data());
  for (index_t i = 0; i < n; i += 997) ASSERT_FLOAT_EQ(yi[i], x[i] * 0.7f);
  dropout_forward_training(p, n, x.data(), y1.data(), nullptr);
  for (index_t i = 0; i < n; i += 997) ASSERT_FLOAT_EQ(y1[i], m1[i] ? x[i] : 0.0f);
  p.ratio = 1.0;
  try {
    dropout_forward_training(p, n, x.data(), y1.data(), nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("ratio"), std::string::npos) << e.what();
  }
}

}  // namespace
