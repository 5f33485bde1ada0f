// BatchNorm (Caffe semantics): training forward and statistics against naive loops,
// Caffe's moving-average blobs over several iterations and the inference statistics
// derived from them, backward (training and global statistics) by finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/batch_norm.hpp"

namespace {

using namespace taihu::dnn;
using ops_test::OpsTest;

TEST_F(OpsTest, BatchNormTrainingForwardMatchesNaive) {
  const BatchNormShape s{3, 5, 37};
  const float eps = 1e-5f;
  const auto x = ops_test::random_vector<float>(s.elements(), rng, -2, 3);
  std::vector<float> y(x.size()), mean(5), var(5);
  batch_norm_forward_training(s, eps, x.data(), y.data(), mean.data(), var.data());
  for (index_t c = 0; c < 5; ++c) {
    double m = 0, v = 0;
    for (index_t n = 0; n < 3; ++n)
      for (index_t i = 0; i < 37; ++i) m += x[(n * 5 + c) * 37 + i];
    m /= 111;
    for (index_t n = 0; n < 3; ++n)
      for (index_t i = 0; i < 37; ++i) v += std::pow(x[(n * 5 + c) * 37 + i] - m, 2);
    v /= 111;
    EXPECT_NEAR(mean[c], m, 1e-6);
    EXPECT_NEAR(var[c], v, 1e-6);
    for (index_t n = 0; n < 3; ++n)
      for (index_t i = 0; i < 37; ++i) {
        const index_t at = (n * 5 + c) * 37 + i;
        ASSERT_NEAR(y[at], (x[at] - m) / std::sqrt(v + eps), 1e-5) << at;
      }
  }
  // In place gives the same.
  std::vector<float> z = x, mean2(5), var2(5);
  batch_norm_forward_training(s, eps, z.data(), z.data(), mean2.data(), var2.data());
  ops_test::expect_close(z, y, 0, 0, "batch norm in place");
}

TEST_F(OpsTest, BatchNormMovingAveragesFollowCaffe) {
  const BatchNormShape s{2, 3, 4};  // m = 8
  const double fraction = 0.9;
  std::vector<double> mean_sum(3, 0.0), var_sum(3, 0.0), factor(1, 0.0);
  std::vector<double> ref_mean(3, 0.0), ref_var(3, 0.0);
  double ref_factor = 0;
  std::vector<double> y(s.elements()), mean(3), var(3);
  for (int iter = 0; iter < 3; ++iter) {
    const auto x = ops_test::random_vector<double>(s.elements(), rng, -1, 2);
    batch_norm_forward_training(s, 1e-5, x.data(), y.data(), mean.data(), var.data());
    batch_norm_update_moving_average(s, fraction, mean.data(), var.data(), mean_sum.data(),
                                     var_sum.data(), factor.data());
    // Caffe: blobs[2] = blobs[2] * f + 1; blobs[0] = mean + f blobs[0];
    //        blobs[1] = var * m / (m - 1) + f blobs[1].
    ref_factor = ref_factor * fraction + 1;
    for (int c = 0; c < 3; ++c) {
      ref_mean[c] = mean[c] + fraction * ref_mean[c];
      ref_var[c] = var[c] * 8.0 / 7.0 + fraction * ref_var[c];
    }
  }
  EXPECT_NEAR(factor[0], ref_factor, 1e-14);
  ops_test::expect_close(mean_sum, ref_mean, 1e-14, 1e-14, "mean_sum");
  ops_test::expect_close(var_sum, ref_var, 1e-14, 1e-14, "var_sum");
  std::vector<double> gm(3), gv(3);
  batch_norm_global_stats(3, mean_sum.data(), var_sum.data(), factor[0], gm.data(), gv.data());
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(gm[c], ref_mean[c] / ref_factor, 1e-14);
    EXPECT_NEAR(gv[c], ref_var[c] / ref_factor, 1e-14);
  }
  // factor 0 (a fresh net) gives zero statistics, as Caffe.
  batch_norm_global_stats(3, mean_sum.data(), var_sum.data(), 0.0, gm.data(), gv.data());
  EXPECT_EQ(gm, std::vector<double>(3, 0.0));
  // Inference uses the given statistics.
  const auto x = ops_test::random_vector<double>(s.elements(), rng);
  batch_norm_global_stats(3, mean_sum.data(), var_sum.data(), factor[0], gm.data(), gv.data());
  batch_norm_forward_inference(s, 1e-5, gm.data(), gv.data(), x.data(), y.data());
  for (index_t n = 0; n < 2; ++n)
    for (index_t c = 0; c < 3; ++c)
      for (index_t i = 0; i < 4; ++i) {
        const index_t at = (n * 3 + c) * 4 + i;
        EXPECT_NEAR(y[at], (x[at] - gm[c]) / std::sqrt(gv[c] + 1e-5), 1e-12);
      }
}

TEST_F(OpsTest, BatchNormBackwardByFiniteDifferences) {
  const BatchNormShape s{3, 2, 5};
  const double eps = 1e-3;
  auto x = ops_test::random_vector<double>(s.elements(), rng, -1, 2);
  const auto w = ops_test::random_vector<double>(s.elements(), rng);
  std::vector<double> y(x.size()), mean(2), var(2), dx(x.size());
  batch_norm_forward_training(s, eps, x.data(), y.data(), mean.data(), var.data());
  batch_norm_backward(s, eps, y.data(), var.data(), w.data(), dx.data(), false);
  ops_test::expect_gradient(
      x, dx,
      [&] {
        std::vector<double> out(x.size()), m(2), v(2);
        batch_norm_forward_training(s, eps, x.data(), out.data(), m.data(), v.data());
        return ops_test::dot(w, out);
      },
      "batch norm training dx");
  // Global statistics: the statistics are constants.
  const std::vector<double> gm{0.3, -0.2}, gv{0.7, 1.9};
  batch_norm_backward(s, eps, static_cast<const double*>(nullptr), gv.data(), w.data(), dx.data(),
                      true);
  ops_test::expect_gradient(
      x, dx,
      [&] {
        std::vector<double> out(x.size());
        batch_norm_forward_inference(s, eps, gm.data(), gv.data(), x.data(), out.data());
        return ops_test::dot(w, out);
      },
      "batch norm global-stats dx");
  // Float backward agrees with double.
  const auto xf = ops_test::convert<float>(x), wf = ops_test::convert<float>(w);
  std::vector<float> yf(x.size()), mf(2), vf(2), dxf(x.size());
  batch_norm_forward_training(s, float(eps), xf.data(), yf.data(), mf.data(), vf.data());
  batch_norm_backward(s, float(eps), yf.data(), vf.data(), wf.data(), dxf.data(), false);
  batch_norm_forward_training(s, eps, x.data(), y.data(), mean.data(), var.data());
  batch_norm_backward(s, eps, y.data(), var.data(), w.data(), dx.data(), false);
  ops_test::expect_close(dxf, dx, 1e-5, 1e-4, "batch norm float vs double");
}

TEST_F(OpsTest, BatchNormRejectsBadArguments) {
  std::vector<float> v(8);
  try {
    batch_norm_forward_training(BatchNormShape{2, 0, 4}, 1e-5f, v.data(), v.data(), v.data(),
                                v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("channels"), std::string::npos) << e.what();
  }
  try {
    batch_norm_forward_training(BatchNormShape{2, 1, 4}, -1.0f, v.data(), v.data(), v.data(),
                                v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("eps"), std::string::npos) << e.what();
  }
}

}  // namespace
