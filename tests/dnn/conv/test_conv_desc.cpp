// ConvDesc problem strings (benchdnn style) round trip and read back; bad shapes and
// bad requests are rejected with taihu::Error messages naming the offending field.
#include <gtest/gtest.h>

#include "conv_test_support.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using taihu::Error;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;
using taihu::dnn::Convolution;

// Tests that construct a Convolution need the ISA level in force (skip otherwise).
class ConvDescTest : public conv_test::ConvTest {};

// EXPECT that f throws taihu::Error whose message contains `needle`.
template <class F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no taihu::Error (expected one mentioning '" << needle << "')";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ConvDesc, StringsRoundTrip) {
  const char* strings[] = {"mb32ic64ih56oc64oh56kh3ph1", "mb1ic3ih224oc64oh112kh7sh2ph3",
                           "g32mb1ic32ih14oc32oh14kh3ph1", "mb2ic4ih9iw11oc6oh9ow11kh3kw5ph1pw2",
                           "mb1ic8ih14oc8oh14kh3ph2dh1", "mb1ic4ih11oc4oh6ow11kh3sh2sw1ph1"};
  for (const char* s : strings) EXPECT_EQ(ConvDesc::parse(s).str(), s);
}

TEST(ConvDesc, ParsesBenchdnnFields) {
  const ConvDesc d = ConvDesc::parse("g2mb8ic64ih28iw30oc128oh14ow15kh3kw3sh2sw2ph1pw1dh0dw0n\"res3\"");
  EXPECT_EQ(d.groups, 2);
  EXPECT_EQ(d.n, 8);
  EXPECT_EQ(d.c, 64);
  EXPECT_EQ(d.h, 28);
  EXPECT_EQ(d.w, 30);
  EXPECT_EQ(d.k, 128);
  EXPECT_EQ(d.stride_w, 2);
  EXPECT_EQ(d.dil_h, 1);
  EXPECT_EQ(d.out_h(), 14);
  EXPECT_EQ(d.out_w(), 15);
  // Defaults: mb1, iw = ih, kw = kh, stride 1, pad 0.
  const ConvDesc e = ConvDesc::parse("ic3ih5oc2kh3");
  EXPECT_EQ(e.n, 1);
  EXPECT_EQ(e.w, 5);
  EXPECT_EQ(e.kw, 3);
  EXPECT_EQ(e.out_h(), 3);
  EXPECT_DOUBLE_EQ(e.forward_flops(), 2.0 * 2 * 9 * 3 * 9);
}

TEST(ConvDesc, BadStringsNameThePosition) {
  expect_error([] { ConvDesc::parse("mb1ic3ih5oc2kh3zz4"); }, "unknown field 'zz'");
  expect_error([] { ConvDesc::parse("mb1ic3ih5oc2kh"); }, "position 12");
  expect_error([] { ConvDesc::parse("mb1ih5oc2kh3"); }, "missing field 'ic'");
  expect_error([] { ConvDesc::parse("mb1ic3ih5oc2oh4kh3"); }, "oh4");
  expect_error([] { ConvDesc::parse("mb1ic3ic3ih5oc2kh3"); }, "given twice");
}

TEST_F(ConvDescTest, BadShapesNameTheField) {
  ConvDesc d = ConvDesc::parse("mb1ic8ih8oc8kh3");
  d.groups = 3;
  expect_error([&] { d.validate(); }, "groups = 3 does not divide c = 8");
  d = ConvDesc::parse("mb1ic8ih8oc8kh3");
  d.stride_h = 0;
  expect_error([&] { d.validate(); }, "stride_h = 0");
  d = ConvDesc::parse("mb1ic8ih8oc8kh3");
  d.pad_w = -1;
  expect_error([&] { d.validate(); }, "pad_w = -1");
  d = ConvDesc::parse("mb1ic8ih8oc8kh3");
  d.kh = 11;
  expect_error([&] { Convolution c(d); }, "kh = 11");
  d = ConvDesc::parse("mb1ic8ih8oc6kh3");
  d.groups = 4;
  expect_error([&] { Convolution c(d); }, "does not divide");
}

TEST_F(ConvDescTest, UnsupportedAlgorithmIsRejected) {
  const ConvDesc d = ConvDesc::parse("mb1ic8ih8oc8kh5ph2");
  expect_error([&] { Convolution c(d, ConvAlgo::winograd_4x4); }, "winograd_4x4 does not support problem mb1ic8ih8oc8oh8kh5ph2");
  expect_error([] { taihu::dnn::parse_conv_algo("fft"); }, "unknown convolution algorithm 'fft'");
  EXPECT_EQ(taihu::dnn::parse_conv_algo("winograd_2x2"), ConvAlgo::winograd_2x2);
  EXPECT_EQ(taihu::dnn::parse_conv_algo("auto"), ConvAlgo::automatic);
  // A requested algorithm lacking a backward direction hands that direction on.
  const ConvDesc first = ConvDesc::parse("mb1ic3ih16oc8kh7sh2ph3");
  Convolution c(first, ConvAlgo::first_layer);
  EXPECT_EQ(c.algorithm(), ConvAlgo::first_layer);
  EXPECT_EQ(c.algorithm(ConvDirection::backward_weights), ConvAlgo::direct);  // first_layer: forward only
  EXPECT_NE(c.algorithm(ConvDirection::backward_data), ConvAlgo::first_layer);  // strided
}

TEST_F(ConvDescTest, NullPointersAreRejected) {
  const ConvDesc d = ConvDesc::parse("mb1ic2ih4oc2kh3");
  Convolution c(d, ConvAlgo::reference);
  std::vector<float> buf(64);
  expect_error([&] { c.forward(nullptr, buf.data(), nullptr, buf.data()); }, "forward: x is null");
  expect_error([&] { c.backward_weights(buf.data(), buf.data(), nullptr, nullptr, false); }, "dw is null");
}

TEST_F(ConvDescTest, HeuristicPicksTheExpectedFamilies) {
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic128ih28oc128kh3ph1")).algorithm(), ConvAlgo::winograd_4x4);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic256ih56oc64kh1")).algorithm(), ConvAlgo::pointwise);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic256ih56oc64kh1")).algorithm(ConvDirection::backward_data),
            ConvAlgo::pointwise);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic3ih224oc64kh7sh2ph3")).algorithm(ConvDirection::backward_weights),
            ConvAlgo::direct);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic3ih224oc64kh7sh2ph3")).algorithm(), ConvAlgo::first_layer);
  // 5x5 stride 1: F(2x2,5x5) with >= 32 channels each way, the direct kernel below.
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic64ih27oc192kh5ph2")).algorithm(), ConvAlgo::winograd_2x2);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic64ih27oc192kh5ph2")).algorithm(ConvDirection::backward_data),
            ConvAlgo::winograd_2x2);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic32ih16oc32kh5ph2")).algorithm(), ConvAlgo::winograd_2x2);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic32ih16oc32kh5ph2")).algorithm(ConvDirection::backward_data),
            ConvAlgo::winograd_2x2);
  // LeNet conv2 at batch 64: the minibatch entry (forward, backward-data), its rule's shapes.
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic20ih12oc50kh5")).algorithm(), ConvAlgo::minibatch);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb4ic20ih12oc50kh5")).algorithm(), ConvAlgo::direct);  // batch < 16
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic3ih224oc64kh7sh2ph3")).algorithm(ConvDirection::backward_data),
            ConvAlgo::explicit_gemm);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic20ih12oc50kh5")).algorithm(ConvDirection::backward_data),
            ConvAlgo::minibatch);  // 8-pixel rows: col2im in registers
  // Transposed problem would be mostly zeros; on AMD the minibatch entry's small-batch rule.
  const bool amd_small = taihu::arch::cpu_features().amd() &&
                         taihu::arch::active_isa() >= taihu::arch::Isa::avx2;
  EXPECT_EQ(Convolution(ConvDesc::parse("mb4ic20ih12oc50kh5")).algorithm(ConvDirection::backward_data),
            amd_small && taihu::arch::threads_for_call() <= 4 ? ConvAlgo::minibatch : ConvAlgo::explicit_gemm);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic1ih28oc20kh5ph2")).algorithm(ConvDirection::backward_data),
            ConvAlgo::explicit_gemm);  // one input channel: transposed tile mostly empty
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic3ih32oc32kh5ph2")).algorithm(ConvDirection::backward_data),
            ConvAlgo::minibatch);  // CIFAR-10 conv1: 3 input channels
  EXPECT_EQ(Convolution(ConvDesc::parse("mb8ic3ih32oc32kh5ph2")).algorithm(ConvDirection::backward_data),
            ConvAlgo::direct);
  // Backward-weights picks the tile by the tile count (the GEMMs' depth); at AVX-512
  // wide 3x3 layers whose blocked copies fit in L2 take direct_input_lanes (on AMD
  // only below 48 4x4 tiles).
  const bool avx512 = taihu::arch::active_isa() == taihu::arch::Isa::avx512;
  const bool amd = taihu::arch::cpu_features().amd();
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic128ih28oc128kh3ph1")).algorithm(ConvDirection::backward_weights),
            avx512 && !amd ? ConvAlgo::direct_input_lanes : ConvAlgo::winograd_4x4);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic256ih14oc256kh3ph1")).algorithm(ConvDirection::backward_weights),
            avx512 && !amd ? ConvAlgo::direct_input_lanes
            : taihu::arch::active_isa() >= taihu::arch::Isa::avx2 ? ConvAlgo::winograd_2x2  // (AVX2, AMD: F(2x2))
                                                                  : ConvAlgo::direct);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic64ih56oc64kh3ph1")).algorithm(ConvDirection::backward_weights),
            ConvAlgo::winograd_4x4);  // (blocked copies 1.6 MiB)
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic64ih27oc192kh5ph2")).algorithm(ConvDirection::backward_weights),
            ConvAlgo::winograd_2x2);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic32ih16oc32kh5ph2")).algorithm(ConvDirection::backward_weights),
            ConvAlgo::winograd_2x2);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb64ic20ih12oc50kh5")).algorithm(ConvDirection::backward_weights),
            ConvAlgo::direct);
  // Narrowing 1x1: direct, GEMM on AVX-512 (conv_list.cpp's gemm_for_1x1_weights).
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic256ih56oc64kh1")).algorithm(ConvDirection::backward_weights),
            taihu::arch::active_isa() == taihu::arch::Isa::avx512 ? ConvAlgo::explicit_gemm : ConvAlgo::direct);
  EXPECT_EQ(Convolution(ConvDesc::parse("mb1ic64ih56oc256kh1")).algorithm(ConvDirection::backward_weights),
            ConvAlgo::explicit_gemm);  // widening 1x1
}

}  // namespace
