// Pooling (Caffe's ceil rounding and last-window clip, MAX argmax mask, AVE padded
// divisor) and LRN (ACROSS_CHANNELS, WITHIN_CHANNEL): forward against Caffe-style naive
// loops written here, backward by finite differences in double, argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/dnn/lrn.hpp"
#include "taihu/dnn/pooling.hpp"

namespace {

using namespace taihu::dnn;
using ops_test::OpsTest;

PoolingShape pool(index_t n, index_t c, index_t h, index_t w, index_t k, index_t stride,
                  index_t pad, PoolMethod m) {
  return ops_test::pool_shape(n, c, h, w, k, stride, pad, m);
}

TEST_F(OpsTest, PoolingOutputSizeUsesCaffeRounding) {
  // ceil((6 - 3) / 2) + 1 = 3 (floor rounding would give 2).
  EXPECT_EQ(pool(1, 1, 6, 6, 3, 2, 0, PoolMethod::max).out_h(), 3);
  // AlexNet pool1: 55 -> 27; GoogLeNet 112, k3 s2 -> 56.
  EXPECT_EQ(pool(1, 1, 55, 55, 3, 2, 0, PoolMethod::max).out_h(), 27);
  EXPECT_EQ(pool(1, 1, 112, 112, 3, 2, 0, PoolMethod::max).out_h(), 56);
  // pad 1, k 2, s 2, in 5: ceil(5/2)+1 = 4, but the 4th window would start at 6 >= 5+1.
  EXPECT_EQ(pool(1, 1, 5, 5, 2, 2, 1, PoolMethod::max).out_h(), 3);
  // pad 1, k 3, s 2, in 7: ceil(6/2)+1 = 4, last start 6 < 8: kept.
  EXPECT_EQ(pool(1, 1, 7, 7, 3, 2, 1, PoolMethod::max).out_h(), 4);
}

// Caffe's pooling_layer.cpp loops, in double.
template <class T>
void naive_pool(const PoolingShape& s, const std::vector<T>& x, std::vector<double>& y,
                std::vector<int>& mask) {
  const index_t oh = s.out_h(), ow = s.out_w();
  y.assign(s.batch * s.channels * oh * ow, 0.0);
  mask.assign(y.size(), -1);
  for (index_t p = 0; p < s.batch * s.channels; ++p)
    for (index_t ph = 0; ph < oh; ++ph)
      for (index_t pw = 0; pw < ow; ++pw) {
        index_t hs = ph * s.stride_h - s.pad_h, ws = pw * s.stride_w - s.pad_w;
        index_t he = std::min(hs + s.kernel_h, s.height + s.pad_h);
        index_t we = std::min(ws + s.kernel_w, s.width + s.pad_w);
        const double size = double((he - hs) * (we - ws));
        hs = std::max<index_t>(hs, 0);
        ws = std::max<index_t>(ws, 0);
        he = std::min(he, s.height);
        we = std::min(we, s.width);
        const index_t o = (p * oh + ph) * ow + pw;
        double acc = s.method == PoolMethod::max ? -std::numeric_limits<double>::max() : 0.0;
        for (index_t h = hs; h < he; ++h)
          for (index_t w = ws; w < we; ++w) {
            const double v = x[(p * s.height + h) * s.width + w];
            if (s.method == PoolMethod::average) {
              acc += v;
            } else if (v > acc) {
              acc = v;
              mask[o] = int(h * s.width + w);
            }
          }
        y[o] = s.method == PoolMethod::average ? acc / size : acc;
      }
}

TEST_F(OpsTest, PoolingForwardMatchesCaffeLoops) {
  for (const auto m : {PoolMethod::max, PoolMethod::average})
    for (const auto& [h, w, k, stride, pad] :
         {std::tuple<index_t, index_t, index_t, index_t, index_t>{6, 6, 3, 2, 0},
          {5, 7, 2, 2, 1},
          {7, 7, 3, 2, 1},
          {13, 11, 3, 1, 1},
          {9, 9, 9, 1, 0},
          {8, 8, 3, 3, 2},
          // stride 2 without padding (LeNet, CIFAR-10 quick, AlexNet): the per-ISA row
          // kernels' full groups of 4, 8 or 16 outputs, a clipped last window, a
          // partial group
          {32, 32, 3, 2, 0},
          {24, 24, 2, 2, 0},
          {12, 11, 3, 2, 0},
          {9, 23, 2, 2, 0},
          {5, 67, 3, 2, 0},
          {4, 112, 3, 2, 0},
          {3, 70, 2, 2, 0},
          {3, 55, 3, 2, 0}}) {
      PoolingShape s = pool(2, 3, h, w, k, stride, pad, m);
      s.width = w;
      auto x = ops_test::random_vector<float>(s.input_elements(), rng);
      // Ties as after a ReLU: every third value 0, so the argmax order matters.
      for (std::size_t i = 0; i < x.size(); i += 3) x[i] = 0.0f;
      std::vector<float> y(s.output_elements());
      std::vector<std::int32_t> mask(y.size());
      pooling_forward(s, x.data(), y.data(), mask.data());
      std::vector<double> ref;
      std::vector<int> ref_mask;
      naive_pool(s, x, ref, ref_mask);
      const std::string what = std::string(m == PoolMethod::max ? "max" : "ave") + " h" +
                               std::to_string(h) + " k" + std::to_string(k) + " s" +
                               std::to_string(stride) + " p" + std::to_string(pad);
      ops_test::expect_close(y, ref, 1e-6, 1e-6, what);
      if (m == PoolMethod::max) {
        for (std::size_t i = 0; i < mask.size(); ++i) ASSERT_EQ(mask[i], ref_mask[i]) << what << i;
      }
    }
}

TEST_F(OpsTest, PoolingBackwardByFiniteDifferences) {
  for (const auto m : {PoolMethod::max, PoolMethod::average})
    for (const auto& [h, k, stride, pad] :
         {std::tuple<index_t, index_t, index_t, index_t>{6, 3, 2, 0},
          {5, 2, 2, 1},
          {7, 3, 2, 1},
          {6, 3, 1, 1},
          {36, 3, 2, 1}}) {  // rows of 18 outputs: AVE backward's tap loops
      const PoolingShape s = pool(2, 2, h, h, k, stride, pad, m);
      auto x = ops_test::random_vector<double>(s.input_elements(), rng);
      const auto w = ops_test::random_vector<double>(s.output_elements(), rng);
      std::vector<double> y(s.output_elements()), dx(x.size());
      std::vector<std::int32_t> mask(y.size());
      pooling_forward(s, x.data(), y.data(), mask.data());
      pooling_backward(s, w.data(), mask.data(), dx.data());
      ops_test::expect_gradient(
          x, dx,
          [&] {
            std::vector<double> out(y.size());
            pooling_forward(s, x.data(), out.data(), static_cast<std::int32_t*>(nullptr));
            return ops_test::dot(w, out);
          },
          std::string(m == PoolMethod::max ? "max" : "ave") + " pool dx, h" + std::to_string(h));
    }
}

TEST_F(OpsTest, PoolingRejectsBadShapes) {
  std::vector<float> v(64);
  try {
    pooling_forward(pool(1, 1, 4, 4, 2, 1, 2, PoolMethod::max), v.data(), v.data(), nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pad"), std::string::npos) << e.what();
  }
  try {
    pooling_forward(pool(1, 1, 4, 4, 0, 1, 0, PoolMethod::max), v.data(), v.data(), nullptr);
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel_h"), std::string::npos) << e.what();
  }
}

LrnParams lrn_params(LrnRegion region, index_t size) {
  LrnParams p;
  p.batch = 2;
  p.channels = 7;
  p.height = 5;
  p.width = 6;
  p.local_size = size;
  p.alpha = 0.3;
  p.beta = 0.75;
  p.k = 2.0;
  p.region = region;
  return p;
}

template <class T>
std::vector<double> naive_lrn(const LrnParams& p, const std::vector<T>& x) {
  std::vector<double> y(x.size());
  const index_t half = (p.local_size - 1) / 2;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.channels; ++c)
      for (index_t h = 0; h < p.height; ++h)
        for (index_t w = 0; w < p.width; ++w) {
          const auto at = [&](index_t cc, index_t hh, index_t ww) {
            return ((n * p.channels + cc) * p.height + hh) * p.width + ww;
          };
          double sum = 0, scale;
          if (p.region == LrnRegion::across_channels) {
            for (index_t cc = std::max<index_t>(0, c - half);
                 cc <= std::min(p.channels - 1, c + half); ++cc)
              sum += double(x[at(cc, h, w)]) * x[at(cc, h, w)];
            scale = p.k + p.alpha / double(p.local_size) * sum;
          } else {
            for (index_t hh = std::max<index_t>(0, h - half);
                 hh <= std::min(p.height - 1, h + half); ++hh)
              for (index_t ww = std::max<index_t>(0, w - half);
                   ww <= std::min(p.width - 1, w + half); ++ww)
                sum += double(x[at(c, hh, ww)]) * x[at(c, hh, ww)];
            scale = 1.0 + p.alpha / double(p.local_size * p.local_size) * sum;
          }
          y[at(c, h, w)] = x[at(c, h, w)] * std::pow(scale, -p.beta);
        }
  return y;
}

TEST_F(OpsTest, LrnForwardMatchesNaive) {
  for (const auto region : {LrnRegion::across_channels, LrnRegion::within_channel})
    for (const index_t size : {1, 3, 5})
      for (const double beta : {0.75, 0.6}) {
        LrnParams p = lrn_params(region, size);
        p.beta = beta;
        const auto x = ops_test::random_vector<float>(p.elements(), rng, -2, 2);
        std::vector<float> y(x.size()), scale(x.size());
        lrn_forward(p, x.data(), y.data(), scale.data());
        ops_test::expect_close(
            y, naive_lrn(p, x), 1e-6, 1e-5,
            std::string(region == LrnRegion::across_channels ? "across" : "within") + " size " +
                std::to_string(size));
      }
  // A big plane exercises the tiling across spatial positions.
  LrnParams p = lrn_params(LrnRegion::across_channels, 5);
  p.height = 37;
  p.width = 41;
  const auto x = ops_test::random_vector<float>(p.elements(), rng, -2, 2);
  std::vector<float> y(x.size()), scale(x.size());
  lrn_forward(p, x.data(), y.data(), scale.data());
  ops_test::expect_close(y, naive_lrn(p, x), 1e-6, 1e-5, "across 37x41");
}

TEST_F(OpsTest, LrnBackwardByFiniteDifferences) {
  for (const auto region : {LrnRegion::across_channels, LrnRegion::within_channel})
    for (const double beta : {0.75, 0.6}) {
      LrnParams p = lrn_params(region, 3);
      p.beta = beta;
      auto x = ops_test::random_vector<double>(p.elements(), rng, -2, 2);
      const auto w = ops_test::random_vector<double>(x.size(), rng);
      std::vector<double> y(x.size()), scale(x.size()), dx(x.size());
      lrn_forward(p, x.data(), y.data(), scale.data());
      lrn_backward(p, x.data(), y.data(), scale.data(), w.data(), dx.data());
      ops_test::expect_gradient(
          x, dx,
          [&] {
            std::vector<double> out(x.size()), sc(x.size());
            lrn_forward(p, x.data(), out.data(), sc.data());
            return ops_test::dot(w, out);
          },
          std::string("lrn dx ") + (region == LrnRegion::across_channels ? "across" : "within"));
    }
}

// The float path runs the ISA's tile kernels; a plane past one tile (kLrnTile = 4096
// pixels) and an odd batch exercise the split. The backward is checked against the double
// backward, which LrnBackwardByFiniteDifferences checks.
TEST_F(OpsTest, LrnAcrossFloatTilesMatchTheDoublePath) {
  LrnParams p = lrn_params(LrnRegion::across_channels, 5);
  p.batch = 1;
  p.height = 70;
  p.width = 64;
  const auto xd = ops_test::random_vector<double>(p.elements(), rng, -2, 2);
  const auto dyd = ops_test::random_vector<double>(p.elements(), rng, -1, 1);
  std::vector<double> yd(xd.size()), scd(xd.size()), dxd(xd.size());
  lrn_forward(p, xd.data(), yd.data(), scd.data());
  lrn_backward(p, xd.data(), yd.data(), scd.data(), dyd.data(), dxd.data());
  const std::vector<float> x(xd.begin(), xd.end()), dy(dyd.begin(), dyd.end());
  std::vector<float> y(x.size()), sc(x.size()), dx(x.size());
  lrn_forward(p, x.data(), y.data(), sc.data());
  lrn_backward(p, x.data(), y.data(), sc.data(), dy.data(), dx.data());
  ops_test::expect_close(y, naive_lrn(p, x), 1e-6, 1e-5, "across 70x64 forward");
  ops_test::expect_close(dx, dxd, 1e-6, 1e-5, "across 70x64 backward");
}

TEST_F(OpsTest, LrnRejectsEvenLocalSize) {
  std::vector<float> v(420);
  try {
    lrn_forward(lrn_params(LrnRegion::across_channels, 4), v.data(), v.data(), v.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("local_size"), std::string::npos) << e.what();
  }
}

}  // namespace
