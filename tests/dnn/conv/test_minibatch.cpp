// The minibatch entry (dnn/src/conv/conv_minibatch.hpp, formerly caffe_port's
// BatchConv): forward, backward-data and backward-weights against dnn's reference
// convolution (naive loops in double), over strides, padding, dilation, groups, 1x1
// kernels, ragged chunks and the implicit (no im2col) backward-weights shapes, at 1 and
// 2 threads, once per TAIHU_ISA level (test_dnn_conv); backward-weights accumulates into
// the existing gradients as Caffe's layers ask. Its bias gradient is bitwise the one
// every other entry computes, so a timed choice does not change the result. The shapes
// cover the AVX-512 kernels' half vectors and remainders (TAIHU_ISA=avx512), and the
// backward directions are also checked by finite differences; both with and without
// TAIHU_MINIBATCH_AVX512_ALL=1 (the AVX-512 forward and packed forms, off by default).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
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
                            "mb21ic4ih12oc9oh8kh5",
                            // AVX-512's two-segment vectors: an odd segment per image and an
                            // odd step count in the packed streams (3 x 8 outputs) or 9 segments of
                            // width 24 in the implicit backward-weights, pairs
                            // that straddle output rows (width 24, LeNet conv1's), and
                            // 9 taps (a 6-tap tile and a remainder) over 13 channels.
                            "mb3ic2ih5iw10oc5oh3ow8kh3", "mb2ic1ih12iw28oc6oh8ow24kh5", "mb2ic1ih7iw28oc6oh3ow24kh5",
                            "mb3ic1ih10oc13oh8kh3",
                            // 17 images of 7 8-pixel segments: the forward's last block of
                            // 24 segments is 23 = 8 + 8 + 7 (a 7-segment AVX-512 tile).
                            "mb17ic2ih9iw10oc5oh7ow8kh3",
                            // The small backward-weights kernel's pixel tail (9 x 7 plane).
                            "mb3ic2ih9iw7oc5oh9ow7kh3ph1",
                            // One image on 2 threads, 8-pixel rows: backward-data splits the
                            // input channels (5: 2 + 3; 2 groups of 4).
                            "mb1ic5ih12oc6oh8kh5", "mb1ic8ih10oc4oh8kh3g2",
                            // LeNet conv1 at batch 1: 72 pixel vectors, one forward block on one
                            // thread, blocks of 24 on two.
                            "mb1ic1ih28oc20oh24kh5"};
  std::mt19937 rng(7);
  for (const char* all_avx512 : {"0", "1"})  // TAIHU_MINIBATCH_AVX512_ALL: every AVX-512 form
  for (int threads : {1, 2}) {
    ::setenv("TAIHU_MINIBATCH_AVX512_ALL", all_avx512, 1);
    ThreadCount tc(threads);
    for (const char* p : problems) {
      const ConvDesc d = ConvDesc::parse(p);
      const std::string what = std::string(p) + " threads " + std::to_string(threads) + " all-avx512 " + all_avx512;
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
  ::unsetenv("TAIHU_MINIBATCH_AVX512_ALL");
}

// Backward passes of the minibatch entry by central differences of an independent double
// forward (L = sum(y * r), linear, so the quotient is exact up to rounding) on shapes
// that take its own kernels, which test_conv_gradcheck's shapes do not reach: the
// implicit forward and backward-weights (widths 8 and 16), the packed streams (width
// 8, input width <= 16), the 8-pixel-row col2im, and the small backward-weights kernel.
TEST_F(Minibatch, BackwardMatchesFiniteDifferences) {
  using namespace conv_test;
  const char* problems[] = {"mb2ic2ih10oc3oh8kh3", "mb2ic1ih6iw18oc3oh4ow16kh3", "mb3ic2ih5iw10oc5oh3ow8kh3",
                            "mb2ic3ih6oc4oh6kh3ph1"};
  for (const char* p : problems) {
    const ConvDesc d = ConvDesc::parse(p);
    const auto xf = random_vector(x_size(d), 31), wf = random_vector(w_size(d), 32), bf = random_vector(d.k, 33),
               rf = random_vector(y_size(d), 34);
    auto x = to_double(xf), w = to_double(wf), b = to_double(bf);
    const auto r = to_double(rf);
    const auto loss = [&] {
      const auto y = conv_forward_double(d, x, w, b);
      double s = 0;
      for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
      return s;
    };
    const auto numeric = [&](std::vector<double>& v) {
      std::vector<double> g(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double keep = v[i];
        v[i] = keep + 1e-3;
        const double up = loss();
        v[i] = keep - 1e-3;
        const double down = loss();
        v[i] = keep;
        g[i] = (up - down) / 2e-3;
      }
      return g;
    };
    const auto gx = numeric(x), gw = numeric(w), gb = numeric(b);
    for (const char* all_avx512 : {"0", "1"}) {
      ::setenv("TAIHU_MINIBATCH_AVX512_ALL", all_avx512, 1);
      taihu::dnn::Convolution conv(d, ConvAlgo::minibatch);
      std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
      conv.backward_data(rf.data(), wf.data(), dx.data());
      conv.backward_weights(xf.data(), rf.data(), dw.data(), db.data(), false);
      EXPECT_LE(max_rel_error(dx, gx), 1e-4) << p << " dx all-avx512 " << all_avx512;
      EXPECT_LE(max_rel_error(dw, gw), 1e-4) << p << " dw all-avx512 " << all_avx512;
      EXPECT_LE(max_rel_error(db, gb), 1e-4) << p << " dbias all-avx512 " << all_avx512;
    }
  }
  ::unsetenv("TAIHU_MINIBATCH_AVX512_ALL");
}

}  // namespace
