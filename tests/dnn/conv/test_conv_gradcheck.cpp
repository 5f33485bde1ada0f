// Backward passes of every algorithm against finite-difference gradients of an
// independent double-precision forward convolution, on tiny shapes:
// L = sum(y * r) for a fixed random r, so dL/dx = backward_data(r), dL/dw and dL/db =
// backward_weights(x, r). Central differences in double (L is linear, so the
// difference quotient is exact up to rounding).
#include <gtest/gtest.h>

#include "conv_test_support.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using namespace conv_test;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDirection;
using taihu::dnn::Convolution;

double loss(const ConvDesc& d, const std::vector<double>& x, const std::vector<double>& w,
            const std::vector<double>& b, const std::vector<double>& r) {
  const auto y = conv_forward_double(d, x, w, b);
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
  return s;
}

// Central difference of L along every entry of v.
std::vector<double> numeric_gradient(std::vector<double>& v, const std::function<double()>& f) {
  const double h = 1e-3;
  std::vector<double> g(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    const double up = f();
    v[i] = keep - h;
    const double down = f();
    v[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

class ConvGradcheck : public ConvTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ConvGradcheck, BackwardMatchesFiniteDifferences) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto xf = random_vector(x_size(d), 21), wf = random_vector(w_size(d), 22),
             bf = random_vector(d.k, 23), rf = random_vector(y_size(d), 24);
  auto x = to_double(xf), w = to_double(wf), b = to_double(bf);
  const auto r = to_double(rf);
  auto f = [&] { return loss(d, x, w, b, r); };
  const auto gx = numeric_gradient(x, f), gw = numeric_gradient(w, f), gb = numeric_gradient(b, f);

  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::backward_data)) {
    std::vector<float> dx(x.size());
    Convolution(d, a).backward_data(rf.data(), wf.data(), dx.data());
    EXPECT_LE(max_rel_error(dx, gx), 1e-4) << d.str() << " " << taihu::dnn::to_string(a);
  }
  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::backward_weights)) {
    std::vector<float> dw(w.size()), db(b.size());
    Convolution(d, a).backward_weights(xf.data(), rf.data(), dw.data(), db.data(), false);
    EXPECT_LE(max_rel_error(dw, gw), 1e-4) << d.str() << " " << taihu::dnn::to_string(a);
    EXPECT_LE(max_rel_error(db, gb), 1e-4) << d.str() << " " << taihu::dnn::to_string(a);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, ConvGradcheck,
                         ::testing::Values("mb2ic3ih6oc4kh3ph1", "mb1ic2ih7oc3kh3sh2ph1",
                                           "g2mb1ic4ih5oc4kh3ph1", "mb1ic3ih6oc2kh1",
                                           "mb1ic2ih8oc3kh3ph2dh1", "mb1ic2ih9oc3kh5sh2ph2",
                                           "mb2ic9ih6oc10kh3ph0"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
