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

// The blocked 1x1 entry on nChw8c and nChw16c tensors (native at avx2 / avx512; other
// levels run it, or the NCHW entries, between reorders): input channels across a
// 16-channel block, a partial output group, a 6-pixel tile tail, two images.
class ConvGradcheckBlocked : public ConvTest {};

TEST_F(ConvGradcheckBlocked, PointwiseBackwardMatchesFiniteDifferences) {
  const ConvDesc d = ConvDesc::parse("mb2ic19ih3iw5oc21oh3ow5kh1");
  const auto xf = random_vector(x_size(d), 31), wf = random_vector(w_size(d), 32), bf = random_vector(d.k, 33),
             rf = random_vector(y_size(d), 34);
  auto x = to_double(xf), w = to_double(wf), b = to_double(bf);
  const auto r = to_double(rf);
  auto f = [&] { return loss(d, x, w, b, r); };
  const auto gx = numeric_gradient(x, f), gw = numeric_gradient(w, f), gb = numeric_gradient(b, f);
  using taihu::dnn::ActLayout;
  for (ActLayout l : {ActLayout::nchw8c, ActLayout::nchw16c}) {
    SCOPED_TRACE(taihu::dnn::to_string(l));
    Convolution conv(d, ConvAlgo::automatic, taihu::dnn::ConvLayout{l, l});
    auto blocked = [&](const std::vector<float>& v, index_t c, bool dst) {
      std::vector<float> out(static_cast<std::size_t>(taihu::dnn::conv_tensor_elements(d, dst, l)));
      taihu::dnn::reorder_nchw_to_layout(v.data(), out.data(), l, d.n, c, d.h, d.w);
      return out;
    };
    const auto xb = blocked(xf, d.c, false), rb = blocked(rf, d.k, true);
    std::vector<float> dxb(static_cast<std::size_t>(taihu::dnn::conv_tensor_elements(d, false, l))), dx(x.size());
    conv.backward_data(rb.data(), wf.data(), dxb.data());
    taihu::dnn::reorder_layout_to_nchw(dxb.data(), dx.data(), l, d.n, d.c, d.h, d.w);
    EXPECT_LE(max_rel_error(dx, gx), 1e-4) << taihu::dnn::to_string(conv.algorithm(ConvDirection::backward_data));
    std::vector<float> dw(w.size()), db(b.size());
    conv.backward_weights(xb.data(), rb.data(), dw.data(), db.data(), false);
    EXPECT_LE(max_rel_error(dw, gw), 1e-4);
    EXPECT_LE(max_rel_error(db, gb), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, ConvGradcheck,
                         ::testing::Values("mb2ic3ih6oc4kh3ph1", "mb1ic2ih7oc3kh3sh2ph1",
                                           "g2mb1ic4ih5oc4kh3ph1", "mb1ic3ih6oc2kh1",
                                           "mb1ic2ih8oc3kh3ph2dh1", "mb1ic2ih9oc3kh5sh2ph2",
                                           "mb2ic9ih6oc10kh3ph0"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
