// Every convolution algorithm against the reference (double-accumulating naive loops),
// forward, backward-data and backward-weights, on many shapes: stride, padding,
// dilation, groups, odd and non-square sizes, channel counts that are not multiples of
// the vector width; all algorithms therefore agree with each other. Also checks the
// WeightsHint cache, accumulate semantics, thread-count independence and `automatic`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using namespace conv_test;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDirection;
using taihu::dnn::Convolution;
using taihu::dnn::WeightsHint;

// Float vs the double-accumulated reference: the error grows with the reduction depth.
double tolerance(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::winograd_4x4: return 2e-4;
    case ConvAlgo::winograd_2x2: return 5e-5;
    default: return 2e-5;
  }
}

const char* const kProblems[] = {
    "mb2ic3ih13oc5oh13kh3ph1",        // tiny, odd
    "mb2ic16ih10oc16oh10kh3ph1",      // 3x3 same
    "mb1ic16ih11iw9oc24kh3",          // non-square, no padding
    "mb1ic8ih12oc8kh3ph2",            // pad 2
    "mb1ic8ih12oc8kh3ph0pw1",         // asymmetric padding
    "mb2ic8ih15oc12kh3sh2ph1",        // stride 2
    "mb1ic4ih11oc4kh3sh2sw1ph1",      // different strides
    "mb1ic8ih14oc8kh3ph2dh1",         // dilation 2
    "g2mb2ic16ih9oc8kh3ph1",          // groups
    "g8mb1ic8ih10oc8kh3ph1",          // depthwise
    "mb2ic24ih7oc16kh1",              // 1x1
    "mb1ic16ih9oc8kh1sh2",            // strided 1x1
    "g2mb1ic12ih6oc10kh1",            // grouped 1x1
    "mb2ic300ih5iw7oc10kh1",          // 1x1: two channel blocks, partial strip, 2-row tile
    "mb1ic20ih10iw11oc9kh1",          // 1x1: several strips (prefetch ahead), masked end
    "mb2ic3ih23oc20kh7sh2ph3",        // first layer (ResNet-like)
    "mb1ic1ih28oc20kh5",              // LeNet conv1
    "mb2ic3ih12iw10oc8kh3",           // unpadded, whole 8-pixel rows: forward reads x in place
    "mb2ic2ih13iw20oc6kh3sh2sw1dh0dw1",  // the same with stride_h 2 and dilated columns
    "mb1ic4ih9iw11oc6kh3kw5ph1pw2",   // rectangular kernel
    "mb1ic40ih17oc36kh3ph1",          // channels not multiples of 8
    "mb3ic19ih6oc21kh3ph1",           // several images, tiny planes
    "mb1ic64ih12oc32kh3ph1",          // deep reduction
    "mb2ic16ih10oc12kh5ph2",          // 5x5 same (Winograd F(2x2,5x5))
    "mb1ic20ih12oc10kh5",             // 5x5 unpadded, odd tiles (LeNet conv2-like)
    "g2mb1ic16ih9oc8kh5ph1",          // 5x5 grouped, pad 1, odd output
    "mb1ic9ih7oc5kh5ph4",             // 5x5 pad 4 (the largest Winograd takes)
    "mb1ic3ih31oc10kh11sh4",          // AlexNet conv1-like: output-channel-vector direct path
    "mb1ic2ih15oc9kh3sh2dh1ph2",      // strided, dilated, few channels (any-run kernel)
    "mb8ic3ih24oc8kh5ph2",            // direct backward-weights split by reduction chunks (2+ threads)
    // Few-channel strided forward (output-channel vectors): the 4x3 tile for each
    // unrolled kernel width, 1-3 vector tiles, several 32-channel groups, reduction
    // split over calls (taps x 32 weights > 16 KiB), several pixel chunks with a partial
    // last tile, groups, odd strides.
    "mb1ic3ih29oc40kh7sh2ph3",        // 7x7: a 4-vector and a 1-vector group, 2 + 1 channel passes
    "mb2ic3ih35oc96kh11sh4",          // 11x11 s4: three 4-vector groups, one channel per pass
    "g2mb1ic6ih17oc64kh3sh2ph1",      // 3x3 grouped (3 channels per group)
    "mb1ic4ih19oc8kh5sh3ph1",         // 5x5 s3, one vector, 4 channels
    "mb1ic3ih101oc24kh3sh2ph1",       // 2500 pixels: several chunks, 3-vector tiles
    "mb1ic2ih13oc36kh4sh2",           // even kernel width (not unrolled), 4+1 vectors
    "mb2ic3ih13oc40kh5ph2",           // stride 1, >= 32 output channels (CIFAR-10 conv1-like)
    "g2mb3ic6ih13oc80kh5ph2",         // the same, grouped, each image padded per item
    "mb1ic2ih12oc32kh3ph2dh1",        // stride 1, dilated: the any-offset tile
    // The 4x3 tile's kernel-row spans (rows reading only padding skipped) and its
    // straight-line square kernels: windows entirely in the padding, rows dilated,
    // a rectangular kernel (looped rows), tiles spanning two output rows.
    "mb1ic3ih6oc32kh3ph3",            // pad = kernel: the first/last output rows read only padding
    "mb2ic3ih14iw9oc32kh3ph2dh1dw0",  // rows dilated, columns not: unrolled rows 2 apart
    "mb1ic3ih11iw13oc32kh5kw3ph2pw1", // rectangular kernel: row spans on the looped rows
    "mb1ic3ih19iw7oc64kh7sh2ph3",     // 7x7 s2 on a narrow image: most tiles span rows
    "mb2ic24ih15oc40kh1sh2",          // strided 1x1: pointwise kernel on the subsampled input
    "g2mb1ic16ih13iw9oc12kh1sh3sw2",  // strided 1x1, grouped, unequal strides, odd sizes
    "mb2ic520ih5iw3oc10kh1",          // 1x1, >= 512 input channels: pointwise backward-weights
    "mb2ic10ih7iw5oc36kh1",           // widening 1x1: direct backward-weights on the exchanged problem
    "g2mb1ic8ih5iw6oc30kh1",          // widening 1x1, grouped (4 -> 15 per group)
    "mb1ic6ih9oc600kh1",              // widening 1x1 whose exchanged problem has >= 512 channels
};

class ConvAlgorithms : public ConvTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ConvAlgorithms, ForwardMatchesReference) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = random_vector(x_size(d), 1), w = random_vector(w_size(d), 2),
             b = random_vector(d.k, 3);
  std::vector<float> ref(y_size(d)), y(y_size(d));
  Convolution(d, ConvAlgo::reference).forward(x.data(), w.data(), b.data(), ref.data());
  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::forward)) {
    std::fill(y.begin(), y.end(), 12345.0f);
    Convolution conv(d, a);
    conv.forward(x.data(), w.data(), b.data(), y.data());
    EXPECT_LE(max_rel_error(y, ref), tolerance(a)) << d.str() << " " << taihu::dnn::to_string(a);
    // Without bias.
    conv.forward(x.data(), w.data(), nullptr, y.data(), WeightsHint::unchanged);
    std::vector<float> ref_nb(y.size());
    Convolution(d, ConvAlgo::reference).forward(x.data(), w.data(), nullptr, ref_nb.data());
    EXPECT_LE(max_rel_error(y, ref_nb), tolerance(a)) << d.str() << " " << taihu::dnn::to_string(a) << " no bias";
  }
}

TEST_P(ConvAlgorithms, BackwardDataMatchesReference) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto dy = random_vector(y_size(d), 4), w = random_vector(w_size(d), 5);
  std::vector<float> ref(x_size(d)), dx(x_size(d));
  Convolution(d, ConvAlgo::reference).backward_data(dy.data(), w.data(), ref.data());
  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::backward_data)) {
    std::fill(dx.begin(), dx.end(), 777.0f);  // must be overwritten
    Convolution(d, a).backward_data(dy.data(), w.data(), dx.data());
    EXPECT_LE(max_rel_error(dx, ref), tolerance(a)) << d.str() << " " << taihu::dnn::to_string(a);
  }
}

TEST_P(ConvAlgorithms, BackwardWeightsMatchesReference) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = random_vector(x_size(d), 6), dy = random_vector(y_size(d), 7);
  std::vector<float> ref(w_size(d)), refb(d.k);
  Convolution(d, ConvAlgo::reference).backward_weights(x.data(), dy.data(), ref.data(), refb.data(), false);
  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::backward_weights)) {
    std::vector<float> dw(w_size(d), 5.0f), db(d.k, 5.0f);
    Convolution conv(d, a);
    conv.backward_weights(x.data(), dy.data(), dw.data(), db.data(), false);
    EXPECT_LE(max_rel_error(dw, ref), tolerance(a)) << d.str() << " " << taihu::dnn::to_string(a);
    EXPECT_LE(max_rel_error(db, refb), 1e-5) << d.str() << " " << taihu::dnn::to_string(a);
    // accumulate = true adds a second gradient on top: 2x.
    conv.backward_weights(x.data(), dy.data(), dw.data(), db.data(), true);
    std::vector<float> ref2(ref), refb2(refb);
    for (auto& v : ref2) v *= 2;
    for (auto& v : refb2) v *= 2;
    EXPECT_LE(max_rel_error(dw, ref2), tolerance(a)) << d.str() << " " << taihu::dnn::to_string(a) << " accumulate";
    EXPECT_LE(max_rel_error(db, refb2), 1e-5) << d.str() << " " << taihu::dnn::to_string(a) << " accumulate";
  }
}

TEST_P(ConvAlgorithms, AutomaticRunsEveryDirection) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  Convolution conv(d);
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights})
    EXPECT_TRUE(taihu::dnn::conv_supports(conv.algorithm(dir), d, dir)) << d.str();
  const auto x = random_vector(x_size(d), 8), w = random_vector(w_size(d), 9);
  std::vector<float> y(y_size(d)), ref(y_size(d));
  conv.forward(x.data(), w.data(), nullptr, y.data());
  Convolution(d, ConvAlgo::reference).forward(x.data(), w.data(), nullptr, ref.data());
  EXPECT_LE(max_rel_error(y, ref), tolerance(conv.algorithm())) << d.str();
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvAlgorithms, ::testing::ValuesIn(kProblems),
                         [](const auto& p) { return std::string(p.param); });

// The heuristic's first-layer and strided choices: few-channel layers stay direct
// forward and backward-weights; strided layers past the first take implicit GEMM
// forward; strided 1x1 backward-weights takes GEMM.
class ConvHeuristic : public ConvTest {};

TEST_F(ConvHeuristic, FirstLayersDirectStridedLayersGemm) {
  for (const char* p : {"mb1ic3ih224oc64kh7sh2ph3", "mb1ic3ih227oc96kh11sh4", "mb64ic3ih32oc32kh5ph2"}) {
    const Convolution conv(ConvDesc::parse(p));
    EXPECT_EQ(conv.algorithm(ConvDirection::forward), ConvAlgo::first_layer) << p;
    EXPECT_EQ(conv.algorithm(ConvDirection::backward_weights), ConvAlgo::direct) << p;
  }
  for (const char* p : {"mb1ic512ih14oc2048kh1sh2", "mb1ic256ih56oc512kh1sh2"})
    EXPECT_EQ(Convolution(ConvDesc::parse(p)).algorithm(ConvDirection::backward_weights), ConvAlgo::explicit_gemm) << p;
  // Strided layers past the first: implicit GEMM forward, except strided 1x1 with
  // outputs large enough for the pointwise kernel on the subsampled input.
  for (const char* p : {"mb1ic512ih14oc2048kh1sh2", "mb1ic128ih56oc128kh3sh2ph1"})
    EXPECT_EQ(Convolution(ConvDesc::parse(p)).algorithm(ConvDirection::forward), ConvAlgo::implicit_gemm) << p;
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic256ih56oc512kh1sh2")).algorithm(ConvDirection::forward),
            ConvAlgo::pointwise_strided);
}

class ConvCaching : public ConvTest {};

// WeightsHint::unchanged reuses the transformed weights; changed re-reads them.
TEST_F(ConvCaching, WeightsHintControlsTheCache) {
  const ConvDesc d = ConvDesc::parse("mb1ic16ih10oc16kh3ph1");
  for (ConvAlgo a : taihu::dnn::conv_candidates(d, ConvDirection::forward)) {
    auto x = random_vector(x_size(d), 10), w = random_vector(w_size(d), 11);
    std::vector<float> y1(y_size(d)), y2(y_size(d)), y3(y_size(d));
    Convolution conv(d, a);
    conv.forward(x.data(), w.data(), nullptr, y1.data());
    const auto w_old = w;
    for (auto& v : w) v *= 2;
    conv.forward(x.data(), w.data(), nullptr, y2.data(), WeightsHint::changed);
    for (std::size_t i = 0; i < y1.size(); ++i) ASSERT_NEAR(y2[i], 2 * y1[i], 1e-4) << taihu::dnn::to_string(a);
    conv.forward(x.data(), w_old.data(), nullptr, y3.data(), WeightsHint::changed);
    EXPECT_EQ(y3, y1) << taihu::dnn::to_string(a);
    // backward_data caches too.
    std::vector<float> dx1(x_size(d)), dx2(x_size(d));
    if (taihu::dnn::conv_supports(a, d, ConvDirection::backward_data)) {
      conv.backward_data(y1.data(), w_old.data(), dx1.data());
      conv.backward_data(y1.data(), w_old.data(), dx2.data(), WeightsHint::unchanged);
      EXPECT_EQ(dx1, dx2) << taihu::dnn::to_string(a);
    }
  }
}

// The threaded paths (the suite otherwise runs single-threaded): every algorithm and
// direction at 2 threads against 1 thread, with one image (threads split pixels, tiles,
// GEMMs, output channels) and several (threads split images).
class ConvThreads : public ConvTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void TearDown() override { taihu::arch::set_num_threads(1); }
};

TEST_P(ConvThreads, TwoThreadsMatchOne) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = random_vector(x_size(d), 12), w = random_vector(w_size(d), 13),
             dy = random_vector(y_size(d), 14), b = random_vector(d.k, 15);
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights})
    for (ConvAlgo a : taihu::dnn::conv_candidates(d, dir)) {
      std::vector<float> out[2];
      for (int t = 0; t < 2; ++t) {
        taihu::arch::set_num_threads(t + 1);
        Convolution conv(d, a);
        if (dir == ConvDirection::forward) {
          out[t].resize(y_size(d));
          conv.forward(x.data(), w.data(), b.data(), out[t].data());
        } else if (dir == ConvDirection::backward_data) {
          out[t].resize(x_size(d));
          conv.backward_data(dy.data(), w.data(), out[t].data());
        } else {
          out[t].resize(w_size(d) + d.k);
          conv.backward_weights(x.data(), dy.data(), out[t].data(), out[t].data() + w_size(d), false);
        }
      }
      EXPECT_LE(max_rel_error(out[1], out[0]), 1e-5) << d.str() << " " << taihu::dnn::to_string(dir) << " " << taihu::dnn::to_string(a);
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvThreads,
                         ::testing::Values("mb1ic24ih13oc20kh3ph1", "mb3ic24ih9oc20kh3ph1",
                                           "mb1ic16ih15oc24kh1", "mb2ic3ih20oc20kh5sh2ph2",
                                           "g2mb2ic8ih9oc8kh3sh2ph1", "mb2ic12ih11oc10kh5ph2",
                                           "mb8ic3ih24oc8kh5ph2", "mb3ic3ih21oc36kh5ph2",
                                           "mb2ic24ih15oc40kh1sh2", "g2mb3ic6ih13oc80kh5ph2",
                                           "mb8ic3ih12oc32kh5ph2", "mb1ic16ih24oc32kh3ph1",
                                           // 4 output pixels: direct's forward splits the
                                           // channel blocks too (one partial block)
                                           "mb1ic6ih8oc22kh5",
                                           // 7x7, 128 channels: Winograd's forward and
                                           // backward-data split the output channels at AVX2
                                           "mb1ic128ih7oc128kh3ph1"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
