// The ordered implementation list: `automatic` is the first supporting, profitable
// entry (checked against the heuristic's measured choices on real layers), the direct
// kernels are separate entries, blocked layouts go through the list, timed selection
// follows its agreement callback, and the saved choice round-trips (including the form
// caffe_port's snapshots wrote before the choice moved into dnn). The verbose line is
// checked by the ctest dnn_conv.verbose_exec_line (this binary under TAIHU_VERBOSE=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace {

using conv_test::max_rel_error;
using conv_test::random_vector;
using taihu::dnn::ActLayout;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;
using taihu::dnn::ConvLayout;
using taihu::dnn::Convolution;

class ConvList : public conv_test::ConvTest {};

std::size_t x_size(const ConvDesc& d) { return static_cast<std::size_t>(d.n * d.c * d.h * d.w); }
std::size_t w_size(const ConvDesc& d) { return static_cast<std::size_t>(d.k * (d.c / d.groups) * d.kh * d.kw); }
std::size_t y_size(const ConvDesc& d) { return static_cast<std::size_t>(d.n * d.k * d.out_h() * d.out_w()); }

// The measured heuristic on the benchmark's layers, one entry per kernel family.
TEST_F(ConvList, AutomaticTakesTheMeasuredEntry) {
  struct Case {
    const char* problem;
    ConvAlgo fwd, bwd_data, bwd_weights;
  };
  // On AVX-512, 1x1 stride-1 backward-weights on NCHW takes GEMM (conv_list.cpp's
  // gemm_for_1x1_weights), and 3x3 layers of >= 256 x 256 channels with fewer than 48
  // 4x4 tiles F(2x2) forward and backward-data (winograd_4x4_profitable).
  const bool avx512 = taihu::arch::active_isa() == taihu::arch::Isa::avx512;
  // Backward-weights of wide 3x3 layers at batch 1 there: direct_input_lanes (on AMD
  // only below 48 4x4 tiles: res3's 49 go to F(4x4)).
  const bool amd = taihu::arch::cpu_features().amd();
  // LeNet at batch 1 on AMD with SIMD: the minibatch entry's small-batch rule.
  const bool amd_small = amd && taihu::arch::active_isa() >= taihu::arch::Isa::avx2;
  const ConvAlgo lenet_b1 = amd_small ? ConvAlgo::minibatch : ConvAlgo::direct;
  const ConvAlgo res4_3x3 = avx512 ? ConvAlgo::winograd_2x2 : ConvAlgo::winograd_4x4;
  const ConvAlgo res3_bwdw = avx512 && !amd ? ConvAlgo::direct_input_lanes : ConvAlgo::winograd_4x4;
  // (res4 at AVX2 and on AMD at AVX-512: F(2x2), winograd_2x2_profitable.)
  const bool simd = taihu::arch::active_isa() >= taihu::arch::Isa::avx2;
  const ConvAlgo res4_bwdw = avx512 && !amd ? ConvAlgo::direct_input_lanes
                             : simd         ? ConvAlgo::winograd_2x2
                                            : ConvAlgo::direct;
  const ConvAlgo res5_3x3 = !avx512                                    ? ConvAlgo::winograd_4x4
                            : taihu::arch::threads_for_call() >= 2 ? ConvAlgo::direct_weight_lanes
                                                                   : ConvAlgo::winograd_2x2;
  const ConvAlgo res5_bwdw = avx512 ? ConvAlgo::direct_input_lanes
                             : taihu::arch::active_isa() == taihu::arch::Isa::avx2 ? ConvAlgo::explicit_gemm
                                                                                   : ConvAlgo::direct;
  const Case cases[] = {
      {"mb1ic128ih28oc128oh28kh3ph1", ConvAlgo::winograd_4x4, ConvAlgo::winograd_4x4, res3_bwdw},
      {"mb1ic256ih14oc256oh14kh3ph1", res4_3x3, res4_3x3, res4_bwdw},
      // res5 backward-weights at AVX2: GEMM (gemm_for_small_3x3_weights)
      {"mb1ic512ih7oc512oh7kh3ph1", res5_3x3, res5_3x3, res5_bwdw},
      {"mb32ic256ih14oc256oh14kh3ph1", ConvAlgo::winograd_4x4, ConvAlgo::winograd_4x4, ConvAlgo::winograd_4x4},
      {"mb1ic256ih56oc64oh56kh1", ConvAlgo::pointwise, ConvAlgo::pointwise,
       avx512 ? ConvAlgo::explicit_gemm : ConvAlgo::direct},
      {"mb1ic1024ih14oc256oh14kh1", ConvAlgo::pointwise, ConvAlgo::pointwise,
       avx512 ? ConvAlgo::explicit_gemm : ConvAlgo::pointwise},
      {"mb1ic64ih56oc256oh56kh1", ConvAlgo::pointwise, ConvAlgo::pointwise, ConvAlgo::explicit_gemm},
      {"mb1ic256ih56oc512kh1sh2", ConvAlgo::pointwise_strided, ConvAlgo::explicit_gemm, ConvAlgo::explicit_gemm},
      {"mb1ic3ih224oc64oh112kh7sh2ph3", ConvAlgo::first_layer, ConvAlgo::explicit_gemm, ConvAlgo::direct},
      {"mb64ic3ih32oc32oh32kh5ph2", ConvAlgo::first_layer, ConvAlgo::minibatch, ConvAlgo::direct},
      {"mb1ic1ih28oc20oh24kh5", lenet_b1, ConvAlgo::explicit_gemm, lenet_b1},
      // (minibatch at 1 and 2 threads: minibatch_small_batch's 2-thread figures)
      {"mb1ic20ih12oc50oh8kh5", ConvAlgo::direct, amd_small ? ConvAlgo::minibatch : ConvAlgo::explicit_gemm,
       ConvAlgo::direct},
      {"mb64ic20ih12oc50oh8kh5", ConvAlgo::minibatch, ConvAlgo::minibatch, ConvAlgo::direct},
      {"mb64ic1ih28oc20oh24kh5", ConvAlgo::direct, ConvAlgo::explicit_gemm, ConvAlgo::minibatch},
      {"g2mb1ic96ih27oc256oh27kh5ph2", ConvAlgo::winograd_2x2, ConvAlgo::winograd_2x2, ConvAlgo::winograd_2x2},
      {"mb1ic128ih56oc128kh3sh2ph1", ConvAlgo::implicit_gemm, ConvAlgo::explicit_gemm, ConvAlgo::direct},
  };
  // nChw16c at AVX-512: ResNet-50 res5's and res4's 1x1 backward-weights (49 and 196
  // pixels) run the native blocked kernel (its input-lanes tile).
  if (avx512) {
    const ConvLayout blocked16{taihu::dnn::ActLayout::nchw16c, taihu::dnn::ActLayout::nchw16c};
    const Convolution res5(ConvDesc::parse("mb1ic2048ih7oc512oh7kh1"), ConvAlgo::automatic, blocked16);
    EXPECT_EQ(res5.algorithm(ConvDirection::forward), ConvAlgo::pointwise_blocked) << res5.choice();
    EXPECT_EQ(res5.algorithm(ConvDirection::backward_weights), ConvAlgo::pointwise_blocked) << res5.choice();
    const Convolution res4(ConvDesc::parse("mb1ic1024ih14oc256oh14kh1"), ConvAlgo::automatic, blocked16);
    EXPECT_EQ(res4.algorithm(ConvDirection::backward_weights), ConvAlgo::pointwise_blocked) << res4.choice();
  }
  for (const Case& c : cases) {
    const Convolution conv(ConvDesc::parse(c.problem));
    EXPECT_EQ(conv.algorithm(ConvDirection::forward), c.fwd) << c.problem << " " << conv.choice();
    EXPECT_EQ(conv.algorithm(ConvDirection::backward_data), c.bwd_data) << c.problem << " " << conv.choice();
    EXPECT_EQ(conv.algorithm(ConvDirection::backward_weights), c.bwd_weights) << c.problem << " " << conv.choice();
  }
}

// Each direct kernel is an entry of its own, listed only where it applies.
TEST_F(ConvList, DirectKernelsAreSeparateEntries) {
  auto has = [](const char* p, ConvDirection dir, ConvAlgo a) {
    const auto c = taihu::dnn::conv_candidates(ConvDesc::parse(p), dir);
    return std::find(c.begin(), c.end(), a) != c.end();
  };
  EXPECT_TRUE(has("mb1ic16ih8oc8kh1", ConvDirection::forward, ConvAlgo::pointwise));
  EXPECT_FALSE(has("mb1ic16ih8oc8kh1", ConvDirection::forward, ConvAlgo::direct));
  EXPECT_TRUE(has("mb1ic16ih8oc8kh1", ConvDirection::backward_weights, ConvAlgo::direct));
  EXPECT_TRUE(has("mb1ic16ih8oc8kh1sh2", ConvDirection::forward, ConvAlgo::pointwise_strided));
  EXPECT_FALSE(has("mb1ic16ih8oc8kh1sh2", ConvDirection::backward_data, ConvAlgo::pointwise_strided));
  EXPECT_TRUE(has("mb1ic3ih20oc8kh3sh2", ConvDirection::forward, ConvAlgo::first_layer));
  EXPECT_FALSE(has("mb1ic3ih20oc8kh3sh2", ConvDirection::backward_weights, ConvAlgo::first_layer));
  EXPECT_FALSE(has("mb1ic16ih8oc8kh3", ConvDirection::forward, ConvAlgo::first_layer));
  // The blocked 1x1 entry runs only on nChw8c tensors, never in an NCHW list.
  EXPECT_FALSE(has("mb1ic16ih8oc8kh1", ConvDirection::forward, ConvAlgo::pointwise_blocked));
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights}) {
    EXPECT_TRUE(has("mb2ic5ih9oc6kh3ph1", dir, ConvAlgo::minibatch));
    EXPECT_EQ(taihu::dnn::conv_candidates(ConvDesc::parse("mb2ic5ih9oc6kh3ph1"), dir).back(), ConvAlgo::reference);
  }
}

// Blocked layouts choose through the list: native entries first.
TEST_F(ConvList, BlockedLayoutsGoThroughTheList) {
  const ConvLayout blocked{ActLayout::nchw8c, ActLayout::nchw8c}, first{ActLayout::nchw, ActLayout::nchw8c};
  const Convolution pw(ConvDesc::parse("mb1ic64ih14oc32kh1"), ConvAlgo::automatic, blocked);
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights}) {
    EXPECT_EQ(pw.algorithm(dir), ConvAlgo::pointwise_blocked);
    EXPECT_TRUE(pw.layout_native(dir));
  }
  // nChw16c: natively at AVX-512 (its 16-lane kernels), NCHW entries between reorders below.
  const bool avx512 = taihu::arch::active_isa() == taihu::arch::Isa::avx512;
  const Convolution pw16(ConvDesc::parse("mb1ic64ih14oc32kh1"), ConvAlgo::automatic,
                         ConvLayout{ActLayout::nchw16c, ActLayout::nchw16c});
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights}) {
    EXPECT_EQ(pw16.algorithm(dir) == ConvAlgo::pointwise_blocked, avx512);
    EXPECT_EQ(pw16.layout_native(dir), avx512);
  }
  const Convolution fl(ConvDesc::parse("mb1ic3ih30oc16kh3sh2"), ConvAlgo::automatic, first);
  EXPECT_EQ(fl.algorithm(ConvDirection::forward), ConvAlgo::first_layer);
  EXPECT_TRUE(fl.layout_native(ConvDirection::forward));
  EXPECT_EQ(fl.algorithm(ConvDirection::backward_weights), ConvAlgo::first_layer);
  EXPECT_FALSE(fl.layout_native(ConvDirection::backward_data));
  // Requesting the blocked entry on NCHW tensors is an error naming the problem.
  EXPECT_THROW(Convolution(ConvDesc::parse("mb1ic64ih14oc32kh1"), ConvAlgo::pointwise_blocked), taihu::Error);
}

TEST_F(ConvList, ChoiceRoundTripsAndReadsTheOldForm) {
  const ConvDesc d = ConvDesc::parse("mb2ic3ih16oc32kh5ph2");  // a first layer
  Convolution conv(d);
  const std::string saved = conv.choice();
  EXPECT_EQ(saved, "forward=first_layer,backward_data=direct,backward_weights=direct");
  Convolution other(d, ConvAlgo::reference);
  other.set_choice(saved);
  EXPECT_EQ(other.choice(), saved);
  // caffe_port's snapshots before the move: "direct" is the direct object of then,
  // which ran the first-layer kernel forward; "batch" is the minibatch entry.
  other.set_choice("direct,batch,direct");
  EXPECT_EQ(other.choice(), "forward=first_layer,backward_data=minibatch,backward_weights=direct");
  // The new form names the entry exactly.
  other.set_choice("forward=direct,backward_data=explicit_gemm,backward_weights=minibatch");
  EXPECT_EQ(other.algorithm(ConvDirection::forward), ConvAlgo::direct);
  EXPECT_THROW(other.set_choice("direct,batch"), taihu::Error);
  EXPECT_THROW(other.set_choice("forward=nope,backward_data=direct,backward_weights=direct"), taihu::Error);
  EXPECT_THROW(other.set_choice("backward_data=direct,forward=direct,backward_weights=direct"), taihu::Error);
  // An entry that does not support its direction (Winograd on a 5x5 with 3 channels
  // does; pointwise on a 5x5 does not).
  EXPECT_THROW(other.set_choice("forward=pointwise,backward_data=direct,backward_weights=direct"), taihu::Error);
}

// The agreement decides: it rewrites the times so that explicit GEMM wins everywhere,
// and the object then runs explicit GEMM, with correct results.
TEST_F(ConvList, TimedSelectionFollowsTheAgreement) {
  const ConvDesc d = ConvDesc::parse("mb2ic8ih10oc12kh3ph1");
  const auto x = random_vector(x_size(d), 1), w = random_vector(w_size(d), 2), b = random_vector(d.k, 3);
  std::vector<float> y(y_size(d)), ref(y_size(d));
  Convolution conv(d);
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights}) {
    const auto cands = taihu::dnn::conv_candidates(d, dir);
    std::size_t calls = 0;
    conv.choose_by_timing(dir, x.data(), w.data(), b.data(), y.data(), [&](std::span<double> seconds) {
      ++calls;
      ASSERT_EQ(seconds.size(), cands.size() - 1);  // all but the reference
      for (std::size_t i = 0; i < seconds.size(); ++i) {
        EXPECT_GT(seconds[i], 0.0);
        seconds[i] = cands[i] == ConvAlgo::explicit_gemm ? 1.0 : 2.0;
      }
    });
    EXPECT_EQ(calls, 1u);
    EXPECT_EQ(conv.algorithm(dir), ConvAlgo::explicit_gemm) << taihu::dnn::to_string(dir);
  }
  conv.forward(x.data(), w.data(), b.data(), y.data());
  Convolution(d, ConvAlgo::reference).forward(x.data(), w.data(), b.data(), ref.data());
  EXPECT_LE(max_rel_error(y, ref), 1e-5);
  // The agreed times as tuning records, one per candidate and direction.
  std::size_t expected = 0;
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights})
    expected += taihu::dnn::conv_candidates(d, dir).size() - 1;
  ASSERT_EQ(conv.timing_records().size(), expected);
  for (const auto& r : conv.timing_records()) {
    EXPECT_EQ(r.key, d.str());
    EXPECT_EQ(r.median_s, r.algo == "explicit_gemm" ? 1.0 : 2.0) << r.algo << " " << r.dir;
  }
  // Without an agreement the measured fastest wins: some supporting entry.
  Convolution timed(d);
  timed.choose_by_timing(ConvDirection::forward, x.data(), w.data(), b.data(), y.data());
  EXPECT_TRUE(taihu::dnn::conv_supports(timed.algorithm(), d, ConvDirection::forward));
  EXPECT_NE(timed.algorithm(), ConvAlgo::reference);
}

// One call per direction: the object the verbose ctest runs (each line names its entry).
TEST_F(ConvList, RunsEveryDirection) {
  const ConvDesc d = ConvDesc::parse("mb1ic16ih10oc16kh3ph1");
  const auto x = random_vector(x_size(d), 4), w = random_vector(w_size(d), 5), dy = random_vector(y_size(d), 6);
  std::vector<float> y(y_size(d)), dx(x_size(d)), dw(w_size(d));
  Convolution conv(d, ConvAlgo::winograd_4x4);
  conv.forward(x.data(), w.data(), nullptr, y.data());
  conv.backward_data(dy.data(), w.data(), dx.data());
  conv.backward_weights(x.data(), dy.data(), dw.data(), nullptr, false);
  EXPECT_EQ(conv.algorithm(ConvDirection::backward_data), ConvAlgo::winograd_4x4);
}

}  // namespace
