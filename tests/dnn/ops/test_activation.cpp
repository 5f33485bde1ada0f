// ReLU/LeakyReLU, Sigmoid, TanH: float forward against libm in double over a wide range
// (including the saturated tails), in-place use, odd lengths that exercise vector tails,
// backward by finite differences on the double instantiation, argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/activation.hpp"

namespace {

using namespace taihu::dnn;
using ops_test::OpsTest;

TEST_F(OpsTest, ReluForwardMatchesNaive) {
  for (const index_t n : {1, 7, 33, 100003}) {
    for (const float slope : {0.0f, 0.1f}) {
      const auto x = ops_test::random_vector<float>(static_cast<std::size_t>(n), rng, -3, 3);
      std::vector<float> y(x.size());
      relu_forward(n, x.data(), y.data(), slope);
      std::vector<double> ref(x.size());
      for (std::size_t i = 0; i < x.size(); ++i)
        ref[i] = x[i] > 0 ? double(x[i]) : double(slope) * double(x[i]);
      ops_test::expect_close(y, ref, 0, 1e-7, "relu n=" + std::to_string(n));
      // In place gives the same.
      std::vector<float> z = x;
      relu_forward(n, z.data(), z.data(), slope);
      ops_test::expect_close(z, y, 0, 0, "relu in place");
    }
  }
}

TEST_F(OpsTest, SigmoidAndTanhMatchLibmAcrossTheRange) {
  std::vector<float> x;
  for (double v = -100; v <= 100; v += 0.0137) x.push_back(static_cast<float>(v));
  for (float v : {0.0f, 1e-30f, -1e-30f, 3e-4f, -3e-4f, 1e-6f}) x.push_back(v);
  const auto n = static_cast<index_t>(x.size());
  std::vector<float> s(x.size()), t(x.size());
  sigmoid_forward(n, x.data(), s.data());
  tanh_forward(n, x.data(), t.data());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double xs = x[i];
    const double sr = 1.0 / (1.0 + std::exp(-xs)), tr = std::tanh(xs);
    ASSERT_NEAR(s[i], sr, 1e-7 + 4e-7 * sr) << "sigmoid(" << xs << ")";
    ASSERT_NEAR(t[i], tr, 1e-7 + 4e-7 * std::fabs(tr)) << "tanh(" << xs << ")";
  }
}

TEST_F(OpsTest, FloatBackwardMatchesDoubleBackward) {
  const index_t n = 5001;
  const auto x = ops_test::random_vector<float>(n, rng, -4, 4);
  const auto dy = ops_test::random_vector<float>(n, rng);
  std::vector<float> y(n), dx(n);
  std::vector<double> xd = ops_test::convert<double>(x), dyd = ops_test::convert<double>(dy), yd(n),
                      dxd(n);
  sigmoid_forward(n, x.data(), y.data());
  sigmoid_backward(n, y.data(), dy.data(), dx.data());
  sigmoid_forward(n, xd.data(), yd.data());
  sigmoid_backward(n, yd.data(), dyd.data(), dxd.data());
  ops_test::expect_close(dx, dxd, 1e-6, 1e-5, "sigmoid backward float vs double");
  tanh_forward(n, x.data(), y.data());
  tanh_backward(n, y.data(), dy.data(), dx.data());
  tanh_forward(n, xd.data(), yd.data());
  tanh_backward(n, yd.data(), dyd.data(), dxd.data());
  ops_test::expect_close(dx, dxd, 1e-6, 1e-5, "tanh backward float vs double");
  relu_backward(n, x.data(), dy.data(), dx.data(), 0.25f);
  relu_backward(n, xd.data(), dyd.data(), dxd.data(), 0.25);
  ops_test::expect_close(dx, dxd, 0, 1e-7, "relu backward float vs double");
}

// Gradient of L = sum w * f(x) by central differences, f in double.
TEST_F(OpsTest, BackwardByFiniteDifferences) {
  const index_t n = 64;
  auto x = ops_test::random_vector<double>(n, rng, -3, 3);
  for (auto& v : x)
    if (std::fabs(v) < 1e-2) v = 0.5;  // keep away from the ReLU kink
  const auto w = ops_test::random_vector<double>(n, rng);
  std::vector<double> y(n), dx(n);
  const auto check = [&](auto forward, auto backward, bool backward_takes_y, const char* name) {
    forward(x, y);
    backward(backward_takes_y ? y : x, w, dx);
    ops_test::expect_gradient(
        x, dx,
        [&] {
          std::vector<double> out(n);
          forward(x, out);
          return ops_test::dot(w, out);
        },
        name);
  };
  check([&](auto& a, auto& b) { relu_forward(n, a.data(), b.data(), 0.0); },
        [&](auto& a, auto& g, auto& d) { relu_backward(n, a.data(), g.data(), d.data(), 0.0); },
        false, "relu");
  check([&](auto& a, auto& b) { relu_forward(n, a.data(), b.data(), -0.3); },
        [&](auto& a, auto& g, auto& d) { relu_backward(n, a.data(), g.data(), d.data(), -0.3); },
        false, "leaky relu");
  check([&](auto& a, auto& b) { sigmoid_forward(n, a.data(), b.data()); },
        [&](auto& a, auto& g, auto& d) { sigmoid_backward(n, a.data(), g.data(), d.data()); }, true,
        "sigmoid");
  check([&](auto& a, auto& b) { tanh_forward(n, a.data(), b.data()); },
        [&](auto& a, auto& g, auto& d) { tanh_backward(n, a.data(), g.data(), d.data()); }, true,
        "tanh");
}

TEST_F(OpsTest, ActivationArgumentErrorsNameTheArgument) {
  std::vector<float> v(4);
  try {
    relu_forward<float>(-1, v.data(), v.data());
    FAIL() << "no error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
  }
  try {
    sigmoid_backward<float>(4, v.data(), nullptr, v.data());
    FAIL() << "no error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dy"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(tanh_forward<float>(0, nullptr, nullptr));  // empty is fine
}

}  // namespace
