// The 1x1 (pointwise) convolution path (conv_pointwise.cpp: the direct algorithm's
// forward and backward-data on 1x1 stride-1 unpadded layers, and its backward-weights
// called directly) against naive double loops, on shapes that reach every branch of its blocking: several input-channel
// blocks (> 256 channels: y accumulated across blocks), several L2 weight blocks
// (> 128 output channels per 256 input channels), a partial 4-channel output tile,
// planes whose last vectors are split into two 2-vector strips (7x7, 5x5, 9x11),
// chunks of strips, groups, batch > 1, and the output-channel split that 2 threads use
// when a batch-1 plane has too few strips; weights cached (WeightsHint::unchanged)
// and repacked (changed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "conv_pointwise.hpp"
#include "conv_test_support.hpp"
#include "pointwise_blocked_kernels.hpp"
#include "pointwise_blocked_fwd_check.hpp"
#include "pointwise_bwdw_x_check.hpp"
#include "pointwise_kernel_check.hpp"
#include "pointwise_kernels.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using conv_test::ConvDesc;
using conv_test::index_t;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDirection;
using taihu::dnn::Convolution;
using taihu::dnn::WeightsHint;

// dx[n][g*cg+c][p] = sum_k w[g*kg+k][c] dy[n][g*kg+k][p] in double.
std::vector<double> pointwise_backward_data(const ConvDesc& d, const std::vector<float>& dy,
                                            const std::vector<float>& w) {
  const index_t cg = d.c / d.groups, kg = d.k / d.groups, plane = d.h * d.w;
  std::vector<double> dx(static_cast<std::size_t>(d.n * d.c * plane), 0.0);
  for (index_t n = 0; n < d.n; ++n)
    for (index_t g = 0; g < d.groups; ++g)
      for (index_t c = 0; c < cg; ++c)
        for (index_t k = 0; k < kg; ++k) {
          const double wv = w[static_cast<std::size_t>((g * kg + k) * cg + c)];
          for (index_t p = 0; p < plane; ++p)
            dx[static_cast<std::size_t>((n * d.c + g * cg + c) * plane + p)] +=
                wv * dy[static_cast<std::size_t>((n * d.k + g * kg + k) * plane + p)];
        }
  return dx;
}

class PointwiseTest : public conv_test::ConvTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void TearDown() override { taihu::arch::set_num_threads(0); }
};

constexpr double kTol = 2e-5;

TEST_P(PointwiseTest, ForwardMatchesNaiveLoopAtOneAndTwoThreads) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = conv_test::random_vector(static_cast<std::size_t>(conv_test::x_size(d)), 11);
  auto w = conv_test::random_vector(static_cast<std::size_t>(conv_test::w_size(d)), 12);
  const auto b = conv_test::random_vector(static_cast<std::size_t>(d.k), 13);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    taihu::arch::set_num_threads(threads);
    Convolution conv(d, ConvAlgo::pointwise);
    std::vector<float> y(static_cast<std::size_t>(conv_test::y_size(d)), 7.0f);
    conv.forward(x.data(), w.data(), b.data(), y.data(), WeightsHint::changed);
    EXPECT_LT(conv_test::max_rel_error(
                  y, conv_test::conv_forward_double(d, conv_test::to_double(x), conv_test::to_double(w),
                                                    conv_test::to_double(b))),
              kTol);
    // Cached weights: the same result again without bias.
    conv.forward(x.data(), w.data(), nullptr, y.data(), WeightsHint::unchanged);
    EXPECT_LT(conv_test::max_rel_error(
                  y, conv_test::conv_forward_double(d, conv_test::to_double(x), conv_test::to_double(w), {})),
              kTol);
    // New weights, announced: repacked.
    for (auto& v : w) v = -0.5f * v + 0.25f;
    conv.forward(x.data(), w.data(), b.data(), y.data(), WeightsHint::changed);
    EXPECT_LT(conv_test::max_rel_error(
                  y, conv_test::conv_forward_double(d, conv_test::to_double(x), conv_test::to_double(w),
                                                    conv_test::to_double(b))),
              kTol);
  }
}

TEST_P(PointwiseTest, BackwardDataMatchesNaiveLoopAtOneAndTwoThreads) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto dy = conv_test::random_vector(static_cast<std::size_t>(conv_test::y_size(d)), 21);
  const auto w = conv_test::random_vector(static_cast<std::size_t>(conv_test::w_size(d)), 22);
  const auto ref = pointwise_backward_data(d, dy, w);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    taihu::arch::set_num_threads(threads);
    Convolution conv(d, ConvAlgo::pointwise);
    std::vector<float> dx(static_cast<std::size_t>(conv_test::x_size(d)), 7.0f);
    conv.backward_data(dy.data(), w.data(), dx.data(), WeightsHint::changed);
    EXPECT_LT(conv_test::max_rel_error(dx, ref), kTol);
    conv.backward_data(dy.data(), w.data(), dx.data(), WeightsHint::unchanged);
    EXPECT_LT(conv_test::max_rel_error(dx, ref), kTol);
  }
}

// dW[g*kg+k][c] = sum_{n,p} dy[n][g*kg+k][p] x[n][g*cg+c][p], db[k] = sum dy, in double.
void pointwise_backward_weights(const ConvDesc& d, const std::vector<float>& x, const std::vector<float>& dy,
                                std::vector<double>& dw, std::vector<double>& db) {
  const index_t cg = d.c / d.groups, kg = d.k / d.groups, plane = d.h * d.w;
  dw.assign(static_cast<std::size_t>(d.k * cg), 0.0);
  db.assign(static_cast<std::size_t>(d.k), 0.0);
  for (index_t n = 0; n < d.n; ++n)
    for (index_t g = 0; g < d.groups; ++g)
      for (index_t k = 0; k < kg; ++k)
        for (index_t p = 0; p < plane; ++p) {
          const double v = dy[static_cast<std::size_t>((n * d.k + g * kg + k) * plane + p)];
          db[static_cast<std::size_t>(g * kg + k)] += v;
          for (index_t c = 0; c < cg; ++c)
            dw[static_cast<std::size_t>((g * kg + k) * cg + c)] +=
                v * x[static_cast<std::size_t>((n * d.c + g * cg + c) * plane + p)];
        }
}

// PointwiseConv::backward_weights directly (the direct algorithm's 1x1 entry point).
TEST_P(PointwiseTest, BackwardWeightsMatchesNaiveLoopAtOneAndTwoThreads) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = conv_test::random_vector(static_cast<std::size_t>(conv_test::x_size(d)), 31);
  const auto dy = conv_test::random_vector(static_cast<std::size_t>(conv_test::y_size(d)), 32);
  std::vector<double> dw_ref, db_ref;
  pointwise_backward_weights(d, x, dy, dw_ref, db_ref);
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    taihu::arch::set_num_threads(threads);
    taihu::dnn::conv::PointwiseConv pw(d);
    std::vector<float> dw(dw_ref.size(), 7.0f), db(db_ref.size(), 7.0f);
    pw.backward_weights(x.data(), dy.data(), dw.data(), db.data(), false);
    EXPECT_LT(conv_test::max_rel_error(dw, dw_ref), kTol);
    EXPECT_LT(conv_test::max_rel_error(db, db_ref), kTol);
    // accumulate: adds to what is there (here: the first result, so twice the sums).
    pw.backward_weights(x.data(), dy.data(), dw.data(), db.data(), true);
    for (auto& v : dw_ref) v *= 2.0;
    for (auto& v : db_ref) v *= 2.0;
    EXPECT_LT(conv_test::max_rel_error(dw, dw_ref), kTol);
    EXPECT_LT(conv_test::max_rel_error(db, db_ref), kTol);
    for (auto& v : dw_ref) v *= 0.5;
    for (auto& v : db_ref) v *= 0.5;
    pw.backward_weights(x.data(), dy.data(), dw.data(), nullptr, false);  // no bias
    EXPECT_LT(conv_test::max_rel_error(dw, dw_ref), kTol);
  }
}

// pack4 (dY^T as 4-channel blocks for backward-weights), each ISA's kernel against the
// definition: every row count mod 4 (a zero-filled partial block), columns below,
// at and past the 8-wide vector body, a source stride wider than the columns, and
// nothing written between one block's columns and the next block.
TEST(PointwisePack4, EveryKernelMatchesTheDefinition) {
  using taihu::dnn::conv::PwPack4Kernel;
  std::vector<std::pair<const char*, PwPack4Kernel>> kernels{{"generic", &taihu::dnn::conv::pw_pack4_generic}};
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx2, taihu::arch::cpu_features()))
    kernels.emplace_back("avx2", &taihu::dnn::conv::pw_pack4_avx2);
  for (const auto& [name, pack4] : kernels)
    for (index_t rows : {1, 3, 4, 5, 8, 11})
      for (index_t cols : {1, 7, 8, 9, 19}) {
        SCOPED_TRACE(std::string(name) + " rows " + std::to_string(rows) + " cols " + std::to_string(cols));
        const index_t stride = cols + 3, block = cols * 4 + 5, blocks = (rows + 3) / 4;
        const auto src = conv_test::random_vector(static_cast<std::size_t>(rows * stride), 41);
        std::vector<float> dst(static_cast<std::size_t>(blocks * block), -9.0f);
        pack4(src.data(), stride, rows, cols, dst.data(), block);
        for (index_t b = 0; b < blocks; ++b)
          for (index_t j = 0; j < block; ++j) {
            const float got = dst[static_cast<std::size_t>(b * block + j)];
            if (j >= cols * 4) {
              EXPECT_EQ(got, -9.0f) << "block " << b << " slot " << j << " written";
              continue;
            }
            const index_t i = 4 * b + j % 4;
            const float want = i < rows ? src[static_cast<std::size_t>(i * stride + j / 4)] : 0.0f;
            EXPECT_EQ(got, want) << "block " << b << " column " << j / 4 << " lane " << j % 4;
          }
      }
}

// The forward micro-kernel called directly with several tiles per call (consecutive
// 4-channel output blocks on one strip), the last tile partial, weights a padded tile
// stride apart, the first tile copying the strip (the later ones then read the copy),
// bias or accumulation, and prefetch rows running on across tiles: every output
// against a double loop, nothing written past the valid rows, the copy exact. Every
// kernel this CPU runs (AVX-512's with its 32-pixel strips and 8-row tile pairs: odd
// tile counts end on a single 4-row tile); pointwise_kernel_check.hpp has the check,
// which test_conv_avx512_emulated.cpp also runs through SIMDe.
TEST(PointwiseKernel, SeveralTilesPerCallMatchTheDefinition) {
  using taihu::dnn::conv::PwFwdKernel;
  struct Kernel {
    const char* name;
    PwFwdKernel fn;
    int width, lanes;
  };
  std::vector<Kernel> kernels{{"generic", &taihu::dnn::conv::pw_fwd_generic, taihu::dnn::conv::kPwPixels, 8}};
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx2, taihu::arch::cpu_features()))
    kernels.push_back({"avx2", &taihu::dnn::conv::pw_fwd_avx2, taihu::dnn::conv::kPwPixels, 8});
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features()))
    kernels.push_back({"avx512", &taihu::dnn::conv::pw_fwd_avx512, taihu::dnn::conv::kPwPixelsAvx512, 16});
  for (const auto& k : kernels) {
    SCOPED_TRACE(k.name);
    pointwise_kernel_check::several_tiles_match_definition(k.fn, k.width, k.lanes);
  }
}

// The nChw16c forward kernels (PwbFwdArgs) called directly: the portable loops, and
// AVX-512's intrinsics and inline-assembly tiles where this CPU has them;
// pointwise_blocked_fwd_check.hpp has the check, which test_conv_avx512_emulated.cpp also
// runs through SIMDe.
TEST(PointwiseBlocked16ForwardKernel, EveryKernelMatchesTheDefinition) {
  {
    SCOPED_TRACE("generic");
    pointwise_blocked_fwd_check::every_run_matches_definition(&taihu::dnn::conv::pwb16_fwd_generic);
  }
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features())) {
    {
      SCOPED_TRACE("avx512");
      pointwise_blocked_fwd_check::every_run_matches_definition(&taihu::dnn::conv::pwb16_fwd_avx512);
    }
    SCOPED_TRACE("avx512 assembly");
    pointwise_blocked_fwd_check::every_run_matches_definition(&taihu::dnn::conv::pwb16_fwd_avx512_asm);
  }
}

// The nChw16c input-lanes backward-weights tile (PwbBwdwXArgs) called directly: the
// portable loops, and AVX-512's tiles where this CPU has them (every shape of the 3 x 8
// and of the 1 x 16 tile through the dispatch tables); pointwise_bwdw_x_check.hpp has the check, which
// test_conv_avx512_emulated.cpp also runs through SIMDe.
TEST(PointwiseBlocked16BackwardWeightsTile, EveryKernelMatchesTheDefinition) {
  {
    SCOPED_TRACE("generic");
    pointwise_bwdw_x_check::every_tile_matches_definition(&taihu::dnn::conv::pwb16_bwdw_x_generic);
  }
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features())) {
    SCOPED_TRACE("avx512");
    pointwise_bwdw_x_check::every_tile_matches_definition(&taihu::dnn::conv::pwb16_bwdw_x_avx512);
  }
  {
    SCOPED_TRACE("generic 1 x 16");
    pointwise_bwdw_x_check::every_tile_matches_definition<1, taihu::dnn::conv::kPwb16XWideRows>(
        &taihu::dnn::conv::pwb16_bwdw_x_generic);
  }
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features())) {
    SCOPED_TRACE("avx512 1 x 16");
    pointwise_bwdw_x_check::every_tile_matches_definition<1, taihu::dnn::conv::kPwb16XWideRows>(
        &taihu::dnn::conv::pwb16_bwdw_x16_avx512);
  }
}

// The nChw16c bias-gradient sums of one dY block (PwbBiasSumsKernel), each ISA's against
// a double sum, adding to what s holds, and AVX-512's bitwise equal to the portable
// loops (the summation order is the contract): pixel counts below, at and past an
// 8-pixel run and the 32-pixel body, with tails.
TEST(PointwiseBlocked16BiasSums, EveryKernelMatchesTheDefinition) {
  const bool avx512 = taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features());
  for (std::int64_t pixels : {1, 7, 8, 9, 31, 32, 33, 49, 70}) {
    SCOPED_TRACE("pixels " + std::to_string(pixels));
    const auto dy = conv_test::random_vector(static_cast<std::size_t>(pixels * 16), 40 + static_cast<std::uint64_t>(pixels));
    std::vector<double> want(16, 0.5), generic(16, 0.5), simd(16, 0.5);
    for (std::int64_t p = 0; p < pixels; ++p)
      for (std::size_t l = 0; l < 16; ++l) want[l] += dy[static_cast<std::size_t>(p) * 16 + l];
    taihu::dnn::conv::pwb16_bias_sums_generic(dy.data(), pixels, generic.data());
    for (std::size_t l = 0; l < 16; ++l) EXPECT_NEAR(generic[l], want[l], 1e-5) << "generic, lane " << l;
    if (!avx512) continue;
    taihu::dnn::conv::pwb16_bias_sums_avx512(dy.data(), pixels, simd.data());
    for (std::size_t l = 0; l < 16; ++l) EXPECT_EQ(simd[l], generic[l]) << "avx512, lane " << l;
  }
}

// nChw16c backward-weights' bias gradient (summed inside the input-lanes pass, block by
// block): against the double sums, accumulating onto what db holds, and bitwise the
// same at one and two threads; 21 output channels (a partial block whose pad lanes hold
// junk), two images, and planes that take the 1 x 16 tile (4x4), the 3 x 8 tile (17x17:
// two pixel chunks on Intel) and two 4096-pixel chunks (65x65, AMD). Where nChw16c is not
// native (TAIHU_ISA below avx512) the same checks run on the entry between reorders.
TEST(PointwiseBlocked16BackwardWeights, BiasGradientAccumulatesAndAgreesAcrossThreads) {
  using taihu::dnn::ActLayout;
  for (const char* p : {"mb2ic40ih4oc21oh4kh1", "mb2ic20ih17oc21oh17kh1", "mb1ic16ih65oc21oh65kh1"}) {
    SCOPED_TRACE(p);
    const ConvDesc d = ConvDesc::parse(p);
    const index_t plane = d.h * d.w, kb = (d.k + 15) / 16, cb = (d.c + 15) / 16;
    const auto x = conv_test::random_vector(static_cast<std::size_t>(conv_test::x_size(d)), 51);
    const auto dy = conv_test::random_vector(static_cast<std::size_t>(conv_test::y_size(d)), 52);
    std::vector<float> xl(static_cast<std::size_t>(d.n * cb * plane * 16), 7.0f);
    std::vector<float> dyl(static_cast<std::size_t>(d.n * kb * plane * 16), 7.0f);  // junk in the pad lanes
    taihu::dnn::reorder_nchw_to_layout(x.data(), xl.data(), ActLayout::nchw16c, d.n, d.c, d.h, d.w);
    taihu::dnn::reorder_nchw_to_layout(dy.data(), dyl.data(), ActLayout::nchw16c, d.n, d.k, d.h, d.w);
    std::vector<double> want(static_cast<std::size_t>(d.k), 0.25);
    for (index_t n = 0; n < d.n; ++n)
      for (index_t k = 0; k < d.k; ++k)
        for (index_t q = 0; q < plane; ++q)
          want[static_cast<std::size_t>(k)] += dy[static_cast<std::size_t>((n * d.k + k) * plane + q)];
    std::vector<float> db1;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      taihu::arch::set_num_threads(threads);
      Convolution conv(d, ConvAlgo::automatic, {ActLayout::nchw16c, ActLayout::nchw16c});
      std::vector<float> dw(static_cast<std::size_t>(d.k * d.c), 0.0f), db(static_cast<std::size_t>(d.k), 0.25f);
      conv.backward_weights(xl.data(), dyl.data(), dw.data(), db.data(), /*accumulate=*/true);
      EXPECT_LT(conv_test::max_rel_error(db, want), 1e-5);
      if (threads == 1)
        db1 = db;
      else
        EXPECT_EQ(db, db1);
    }
  }
  taihu::arch::set_num_threads(0);
}

// The direct input-lanes backward-weights' tap interleave (TapInterleaveKernel):
// dst[c * taps + t] (+)= src[t * tap_stride + c], checked element by element (floats
// are moved or added once: exact) for 1, 9 (3x3), 16 and 25 (5x5: a second 16-tap
// chunk) taps and channel counts with partial 16-channel blocks; nothing past the run
// written.
TEST(DirectInputLanesTapInterleave, EveryKernelMatchesTheDefinition) {
  using taihu::dnn::conv::TapInterleaveKernel;
  std::vector<std::pair<const char*, TapInterleaveKernel>> kernels{
      {"generic", &taihu::dnn::conv::tap_interleave_generic}};
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features()))
    kernels.emplace_back("avx512", &taihu::dnn::conv::tap_interleave_avx512);
  for (const auto& [name, kernel] : kernels)
    for (std::int64_t taps : {1, 9, 16, 25})
      for (std::int64_t channels : {5, 16, 40})
        for (bool accumulate : {false, true}) {
          SCOPED_TRACE(std::string(name) + " taps " + std::to_string(taps) + " channels " + std::to_string(channels) +
                       " accumulate " + std::to_string(accumulate));
          const std::int64_t stride = 53;
          std::vector<float> src(static_cast<std::size_t>(taps * stride));
          for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.25f - 7.0f;
          std::vector<float> dst(static_cast<std::size_t>(channels * taps + 17));
          for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = static_cast<float>(i % 13) + 0.5f;
          const std::vector<float> before = dst;
          kernel(src.data(), stride, taps, channels, dst.data(), accumulate);
          for (std::int64_t c = 0; c < channels; ++c)
            for (std::int64_t t = 0; t < taps; ++t) {
              const auto at = static_cast<std::size_t>(c * taps + t);
              const float v = src[static_cast<std::size_t>(t * stride + c)];
              ASSERT_EQ(dst[at], accumulate ? before[at] + v : v) << "channel " << c << " tap " << t;
            }
          for (std::size_t i = static_cast<std::size_t>(channels * taps); i < dst.size(); ++i)
            ASSERT_EQ(dst[i], before[i]) << "written past the run at " << i;
        }
}

// Fused post-ops (ConvPostOps: + bias, sum with the y held on entry, ReLU, applied in the
// kernels' output tiles) against the unfused sequence in float: the forward pass with
// bias, then y + residual, then max(y, 0). Without sum the operations and their order
// are the same, so the results are bitwise equal; with sum the residual enters the
// accumulation at its start instead of after the bias (and the channel blocks' partial
// sums T_i are added to it), so each output may differ by the roundings of those few
// additions, at most 3 on either side: |fused - unfused| <= 8 * 2^-24 * (sum |w||x| +
// |bias| + |residual|).
// Shapes with one and two input-channel blocks (the ReLU waits for the last), 1 and 2
// threads; both also against the double reference.
TEST(PointwisePostOps, FusedMatchesUnfusedWithinFloatRounding) {
  for (const char* problem : {"mb2ic64ih9oc20kh1", "mb1ic300ih7oc42kh1", "mb1ic16ih30oc24kh1"}) {
    SCOPED_TRACE(problem);
    const ConvDesc d = ConvDesc::parse(problem);
    const auto x = conv_test::random_vector(static_cast<std::size_t>(conv_test::x_size(d)), 81);
    const auto w = conv_test::random_vector(static_cast<std::size_t>(conv_test::w_size(d)), 82);
    const auto b = conv_test::random_vector(static_cast<std::size_t>(d.k), 83);
    const auto res = conv_test::random_vector(static_cast<std::size_t>(conv_test::y_size(d)), 84);
    const auto ref = conv_test::conv_forward_double(d, conv_test::to_double(x), conv_test::to_double(w),
                                                    conv_test::to_double(b));
    auto abs_of = [](std::vector<float> v) {
      for (auto& e : v) e = std::abs(e);
      return conv_test::to_double(v);
    };
    const auto ref_abs = conv_test::conv_forward_double(d, abs_of(x), abs_of(w), {});
    const auto plane = static_cast<std::size_t>(d.out_h() * d.out_w());
    for (int threads : {1, 2}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      taihu::arch::set_num_threads(threads);
      taihu::dnn::conv::PointwiseConv pw(d);
      std::vector<float> unfused(res.size()), y(res.size(), 3.0f);
      pw.forward(x.data(), w.data(), b.data(), unfused.data(), WeightsHint::changed);
      // bias + ReLU: bitwise the unfused ReLU of the biased output.
      pw.forward(x.data(), w.data(), b.data(), y.data(), WeightsHint::unchanged, {false, true});
      int relu_zeros = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        const float want = unfused[i] > 0.0f ? unfused[i] : 0.0f;
        relu_zeros += want == 0.0f;
        ASSERT_EQ(y[i], want) << "bias + ReLU, element " << i;
        ASSERT_NEAR(y[i], ref[i] > 0 ? ref[i] : 0.0, kTol * (1 + std::abs(ref[i]))) << "element " << i;
      }
      EXPECT_GT(relu_zeros, 0);  // the ReLU had something to do
      EXPECT_LT(relu_zeros, static_cast<int>(y.size()));
      // bias + sum + ReLU, y holding the residual on entry.
      y = res;
      pw.forward(x.data(), w.data(), b.data(), y.data(), WeightsHint::unchanged, {true, true});
      for (std::size_t i = 0; i < y.size(); ++i) {
        const float sum = unfused[i] + res[i];
        const float want = sum > 0.0f ? sum : 0.0f;
        const double bias_i = b[i / plane % static_cast<std::size_t>(d.k)];
        const double bound = 8.0 * std::ldexp(1.0, -24) * (ref_abs[i] + std::abs(bias_i) + std::abs(res[i]));
        ASSERT_LE(std::abs(double(y[i]) - want), bound) << "bias + sum + ReLU, element " << i;
        const double exact = ref[i] + res[i];
        ASSERT_NEAR(y[i], exact > 0 ? exact : 0.0, kTol * (1 + std::abs(exact))) << "element " << i;
      }
    }
  }
  taihu::arch::set_num_threads(0);
}

class PointwiseChoice : public conv_test::ConvTest {};

TEST_F(PointwiseChoice, OneByOneStrideOneLayersTakeThePointwiseEntry) {
  // The path under test is the one the automatic choice runs for ResNet's 1x1 layers.
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic1024ih14oc256oh14kh1")).algorithm(), ConvAlgo::pointwise);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PointwiseTest,
    ::testing::Values("mb1ic300ih7oc42kh1",       // 2 channel blocks, 7x7 split tail, partial tile
                      "mb1ic256ih7oc522kh1",      // 5 L2 weight blocks, last tile 2 channels
                      "mb2ic64ih14oc200kh1",      // 14x14 split tail, 2 images
                      "g2mb1ic40ih9iw11oc36kh1",  // groups, 99 pixels (split tail)
                      "mb3ic520ih5oc12kh1",       // 3 channel blocks, 5x5: 16 + 9 pixels
                      "mb1ic24ih20iw21oc10kh1",   // 18 strips: 3 chunks, masked end
                      "mb2ic33ih1oc5kh1",         // one pixel per plane
                      "mb1ic1030ih3iw4oc300kh1",  // 5 channel blocks x 3 weight blocks, 12 pixels
                      "mb2ic70ih19oc1100kh1"),    // bwd-weights: several reduction chunks
                                                  //   across an image boundary
    [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
