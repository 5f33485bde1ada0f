// Convolution::forward with post-ops (ConvPostOps: + bias, sum with the y held on entry,
// ReLU) on every forward entry of each problem, in NCHW and in the layer's preferred
// blocked layout, at 1 and 2 threads, against two independent results:
//   - the unfused sequence in float: the same entry's forward, then y + residual, then
//     max(y, 0) by hand. bias + ReLU only changes what is stored, so it is bitwise equal;
//     with a sum the residual enters the accumulation where the kernel starts (before
//     the channel blocks' partial sums and the bias), so each output may differ by the
//     roundings of those few additions: |fused - unfused| <= 16 * 2^-24 *
//     (sum |w||x| + |bias| + |residual|) (up to 3 reduction blocks here, <= 5 roundings
//     either side);
//   - the double reference conv, then + residual, then ReLU (a looser bound: Winograd).
// It also checks which entries say they fuse (conv_fuses_post_ops, fuses_post_ops) and
// that the ReLU had work to do. Run under every TAIHU_ISA by the suite's CMake.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/layout.hpp"

namespace {

using taihu::dnn::ActLayout;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;
using taihu::dnn::ConvLayout;
using taihu::dnn::ConvPostOps;
using taihu::dnn::Convolution;

class ConvPostOpsTest : public conv_test::ConvTest, public ::testing::WithParamInterface<std::string> {};

// The caller's y (layout l) as NCHW, and back.
std::vector<float> to_nchw(const ConvDesc& d, const std::vector<float>& y, ActLayout l) {
  if (l == ActLayout::nchw) return y;
  std::vector<float> out(static_cast<std::size_t>(conv_test::y_size(d)));
  taihu::dnn::reorder_layout_to_nchw(y.data(), out.data(), l, d.n, d.k, d.out_h(), d.out_w());
  return out;
}
std::vector<float> from_nchw(const ConvDesc& d, const std::vector<float>& y, ActLayout l) {
  if (l == ActLayout::nchw) return y;
  std::vector<float> out(static_cast<std::size_t>(taihu::dnn::conv_tensor_elements(d, true, l)), 0.0f);
  taihu::dnn::reorder_nchw_to_layout(y.data(), out.data(), l, d.n, d.k, d.out_h(), d.out_w());
  return out;
}
std::vector<float> src_in(const ConvDesc& d, const std::vector<float>& x, ActLayout l) {
  if (l == ActLayout::nchw) return x;
  std::vector<float> out(static_cast<std::size_t>(taihu::dnn::conv_tensor_elements(d, false, l)), 0.0f);
  taihu::dnn::reorder_nchw_to_layout(x.data(), out.data(), l, d.n, d.c, d.h, d.w);
  return out;
}

bool direct_family(ConvAlgo a) {
  return a == ConvAlgo::direct || a == ConvAlgo::pointwise || a == ConvAlgo::pointwise_strided ||
         a == ConvAlgo::first_layer;
}

TEST_P(ConvPostOpsTest, FusedMatchesConvThenSumThenRelu) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = conv_test::random_vector(static_cast<std::size_t>(conv_test::x_size(d)), 91);
  const auto w = conv_test::random_vector(static_cast<std::size_t>(conv_test::w_size(d)), 92);
  const auto b = conv_test::random_vector(static_cast<std::size_t>(d.k), 93);
  const auto res = conv_test::random_vector(static_cast<std::size_t>(conv_test::y_size(d)), 94);
  const auto ref = conv_test::conv_forward_double(d, conv_test::to_double(x), conv_test::to_double(w),
                                                  conv_test::to_double(b));
  auto abs_of = [](std::vector<float> v) {
    for (auto& e : v) e = std::abs(e);
    return conv_test::to_double(v);
  };
  const auto ref_abs = conv_test::conv_forward_double(d, abs_of(x), abs_of(w), {});
  const auto plane = static_cast<std::size_t>(d.out_h() * d.out_w());
  const ConvPostOps relu{false, true}, sum{true, false}, sum_relu{true, true};

  struct Case {
    ConvAlgo algo;
    ConvLayout layout;
  };
  std::vector<Case> cases;
  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::forward)) cases.push_back({a, ConvLayout{}});
  const ConvLayout pref = taihu::dnn::preferred_layout(d);
  if (!(pref == ConvLayout{})) {
    cases.push_back({ConvAlgo::automatic, pref});
    cases.push_back({ConvAlgo::reference, pref});  // an NCHW entry between reorders: a pass
    for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::forward))
      if (direct_family(a)) cases.push_back({a, pref});  // fused into the NCHW copy (or native)
  }
  for (int threads : {1, 2}) {
    taihu::arch::set_num_threads(threads);
    for (const Case& c : cases) {
      const std::string what = std::string(taihu::dnn::to_string(c.algo)) + " in " + taihu::dnn::to_string(c.layout) +
                               ", " + std::to_string(threads) + " threads";
      SCOPED_TRACE(what);
      Convolution conv(d, c.algo, c.layout);
      const ConvAlgo ran = conv.algorithm(ConvDirection::forward);
      if (c.algo != ConvAlgo::automatic) {
        ASSERT_EQ(ran, c.algo);
      }
      for (const ConvPostOps& post : {relu, sum, sum_relu}) {
        ASSERT_EQ(conv.fuses_post_ops(post), taihu::dnn::conv_fuses_post_ops(ran, d, post, c.layout));
        // The direct family fuses everything on NCHW outputs; first_layer writing nChw8c
        // in place fuses the ReLU only; every other entry runs a pass.
        if (c.layout == ConvLayout{}) {
          EXPECT_EQ(conv.fuses_post_ops(post), direct_family(ran)) << "sum " << post.sum << " relu " << post.relu;
        }
      }
      if (ran == ConvAlgo::first_layer && c.layout.dst == ActLayout::nchw8c) {
        EXPECT_TRUE(conv.fuses_post_ops(relu));
        EXPECT_FALSE(conv.fuses_post_ops(sum));
      }
      const auto xs = src_in(d, x, c.layout.src);
      std::vector<float> yl(static_cast<std::size_t>(taihu::dnn::conv_tensor_elements(d, true, c.layout.dst)), 7.0f);
      conv.forward(xs.data(), w.data(), b.data(), yl.data());
      const auto unfused = to_nchw(d, yl, c.layout.dst);
      for (const ConvPostOps& post : {relu, sum, sum_relu}) {
        SCOPED_TRACE(std::string("post-ops") + (post.sum ? " sum" : "") + (post.relu ? " relu" : ""));
        yl = post.sum ? from_nchw(d, res, c.layout.dst)
                      : std::vector<float>(yl.size(), 7.0f);
        conv.forward(xs.data(), w.data(), b.data(), yl.data(), post, taihu::dnn::WeightsHint::unchanged);
        if (c.layout.dst != ActLayout::nchw) {  // [n][k / B][plane][B]: lanes past k stay zero
          const std::size_t B = c.layout.dst == ActLayout::nchw8c ? 8 : 16;
          const std::size_t kb = (static_cast<std::size_t>(d.k) + B - 1) / B;
          for (std::size_t i = 0; i < yl.size(); ++i)
            if (i / (plane * B) % kb * B + i % B >= static_cast<std::size_t>(d.k)) {
              ASSERT_EQ(yl[i], 0.0f) << "padding lane " << i;
            }
        }
        const auto y = to_nchw(d, yl, c.layout.dst);
        int zeros = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
          const float pre = post.sum ? unfused[i] + res[i] : unfused[i];
          const float want = post.relu ? (0.0f > pre ? 0.0f : pre) : pre;
          zeros += post.relu && want == 0.0f;
          if (!post.sum) {
            ASSERT_EQ(y[i], want) << "element " << i;
          } else {
            const double bias_i = b[i / plane % static_cast<std::size_t>(d.k)];
            const double bound = 16.0 * std::ldexp(1.0, -24) * (ref_abs[i] + std::abs(bias_i) + std::abs(res[i]));
            ASSERT_LE(std::abs(double(y[i]) - want), bound) << "element " << i;
          }
          const double exact_pre = post.sum ? ref[i] + res[i] : ref[i];
          const double exact = post.relu && exact_pre < 0 ? 0.0 : exact_pre;
          ASSERT_NEAR(y[i], exact, 1e-3 * (1 + ref_abs[i] + std::abs(res[i]))) << "element " << i;
        }
        if (post.relu) {
          EXPECT_GT(zeros, 0);
          EXPECT_LT(zeros, static_cast<int>(y.size()));
        }
      }
    }
  }
  taihu::arch::set_num_threads(0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvPostOpsTest,
    ::testing::Values("mb2ic40ih12oc20kh3ph1",      // direct: 3 reduction blocks; Winograd, GEMM
                      "g2mb1ic8ih10iw9oc12kh3ph1",  // groups, partial tiles
                      "mb1ic3ih23oc40kh7sh2ph3",    // first_layer (strided), NCHW and nChw8c out
                      "mb2ic3ih12oc32kh5ph2",       // first_layer stride 1, 32-channel tiles
                      "mb2ic64ih9oc20kh1",          // pointwise, pointwise_blocked
                      "mb1ic16ih14oc24kh1sh2"),     // pointwise_strided
    [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
