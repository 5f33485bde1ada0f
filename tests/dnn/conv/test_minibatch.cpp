// The minibatch entry (dnn/src/conv/conv_minibatch.hpp, formerly caffe_port's
// BatchConv): forward, backward-data and backward-weights against dnn's reference
// convolution (naive loops in double), over strides, padding, dilation, groups, 1x1
// kernels, ragged chunks and the implicit (no im2col) backward-weights shapes, at 1 and
// 2 threads, once per TAIHU_ISA level (test_dnn_conv); backward-weights accumulates into
// the existing gradients as Caffe's layers ask. Its bias gradient is bitwise the one
// every other entry computes, so a timed choice does not change the result.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using taihu::dnn::ConvDirection;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDesc;

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << what << " at " << i;
  }
}

class ThreadCount {
 public:
  explicit ThreadCount(int n) { taihu::arch::set_num_threads(n); }
  ~ThreadCount() { taihu::arch::set_num_threads(0); }
};

class Minibatch : public conv_test::ConvTest {};

TEST_F(Minibatch, MatchesReferenceInAllDirections) {
  const char* problems[] = {"mb5ic1ih12oc4oh8kh5",          "mb7ic6ih9oc5oh9kh3ph1",
                            "mb3ic4ih11oc6oh5kh3sh2",       "mb4ic6ih10oc4oh8kh3ph1dh1g2",
                            "mb3ic8ih6oc5oh6kh1",           "mb2ic3ih7iw9oc4oh4ow4kh3kw2sh2sw3ph1pw2",
                            "mb9ic2ih4oc3oh4kh3ph1",  // 9 images: ragged backward-weights chunks
                            // Implicit backward-weights (output width % 8 == 0, stride 1, no pad):
                            // channel and tap remainders, two pixel vectors per row, and 21
                            // images of 64 pixels (a block of 16 and a ragged one).
                            "mb5ic3ih12oc6oh8kh5", "mb3ic2ih10oc7oh8kh3", "mb2ic1ih20oc5oh16kh5",
                            "mb21ic4ih12oc9oh8kh5"};
  std::mt19937 rng(7);
  for (int threads : {1, 2}) {
    ThreadCount tc(threads);
    for (const char* p : problems) {
      const ConvDesc d = ConvDesc::parse(p);
      const std::string what = std::string(p) + " threads " + std::to_string(threads);
      const auto x = random_values(static_cast<std::size_t>(d.n * d.c * d.h * d.w), rng);
      const auto w = random_values(static_cast<std::size_t>(d.k * (d.c / d.groups) * d.kh * d.kw), rng);
      const auto bias = random_values(static_cast<std::size_t>(d.k), rng);
      const auto dy = random_values(static_cast<std::size_t>(d.n * d.k * d.out_h() * d.out_w()), rng);
      taihu::dnn::Convolution ref(d, ConvAlgo::reference);
      taihu::dnn::Convolution bc(d, ConvAlgo::minibatch);
      ASSERT_EQ(bc.choice(), "forward=minibatch,backward_data=minibatch,backward_weights=minibatch");

      std::vector<float> y(dy.size()), y_ref(dy.size());
      bc.forward(x.data(), w.data(), bias.data(), y.data());
      ref.forward(x.data(), w.data(), bias.data(), y_ref.data());
      expect_near_all(y, y_ref, what + " forward");

      std::vector<float> dx(x.size(), 5.f), dx_ref(x.size());
      bc.backward_data(dy.data(), w.data(), dx.data());
      ref.backward_data(dy.data(), w.data(), dx_ref.data());
      expect_near_all(dx, dx_ref, what + " backward_data");

      // Accumulates onto what is already there.
      const auto dw0 = random_values(w.size(), rng), db0 = random_values(bias.size(), rng);
      std::vector<float> dw = dw0, db = db0, dw_ref = dw0, db_ref = db0;
      bc.backward_weights(x.data(), dy.data(), dw.data(), db.data(), true);
      ref.backward_weights(x.data(), dy.data(), dw_ref.data(), db_ref.data(), true);
      expect_near_all(dw, dw_ref, what + " backward_weights dw");
      expect_near_all(db, db_ref, what + " backward_weights dbias");

      // Again without a bias: the weights alone.
      std::vector<float> dw2 = dw0;
      bc.backward_weights(x.data(), dy.data(), dw2.data(), nullptr, true);
      expect_near_all(dw2, dw_ref, what + " backward_weights without bias");

      // The bias gradient is the same sum in every entry: bitwise equal to GEMM's.
      std::vector<float> dw3(w.size()), db_min(bias.size()), db_gemm(bias.size());
      bc.backward_weights(x.data(), dy.data(), dw3.data(), db_min.data(), false);
      taihu::dnn::Convolution(d, ConvAlgo::explicit_gemm)
          .backward_weights(x.data(), dy.data(), dw3.data(), db_gemm.data(), false);
      EXPECT_EQ(db_min, db_gemm) << what;
    }
  }
}

}  // namespace
