// direct_weight_lanes (output channels in the vector lanes, conv_direct_weight_lanes.cpp)
// against the double reference under the TAIHU_ISA in force: the tile shapes it splits
// an image into (2-row and 1-row tiles, column segments of 1..7), output channels past a
// 32-channel block, input channels past a 128-channel chunk, several images, bias or not,
// backward-data through the transposed problem, the weights cache, and one vs two
// threads bit for bit (disjoint output-channel blocks: no reduction across threads).
// (test_conv_algorithms.cpp also runs it on every stride-1 one-group shape there.)
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using namespace conv_test;
using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDirection;
using taihu::dnn::Convolution;
using taihu::dnn::WeightsHint;

class ConvWeightLanes : public ConvTest {};

// dx of the definition in double: dx[x index] += w * dy over every product.
std::vector<double> backward_data_double(const ConvDesc& d, const std::vector<float>& dy,
                                         const std::vector<float>& w) {
  std::vector<double> dx(static_cast<std::size_t>(x_size(d)), 0.0);
  for_each_product(d, [&](index_t xi, index_t wi, index_t yi) {
    dx[static_cast<std::size_t>(xi)] +=
        static_cast<double>(w[static_cast<std::size_t>(wi)]) * dy[static_cast<std::size_t>(yi)];
  });
  return dx;
}

const char* const kShapes[] = {
    "mb2ic40ih5iw15oc72kh3ph1",   // 3 output blocks (the last 8 wide), 1-row tail, 8 + 7 columns
    "mb1ic136ih3iw9oc40kh3ph1",   // 2 input-channel chunks (128 + 8): partial sums carried over
    "mb1ic17ih7oc33kh3ph1",       // res5's 7x7 plane: one full 7-column segment per row pair
    "mb1ic8ih6iw20oc32kh3ph0",    // unpadded, 18 columns: 6 + 6 + 6
    "mb1ic5ih5iw4oc7kh5ph2",      // 5x5 kernel, one partial block, 4-column tiles
    "mb1ic6ih8iw5oc40kh1kw3pw1",  // rectangular kernel
};

TEST_F(ConvWeightLanes, ForwardAndBackwardDataMatchDoubleReference) {
  for (const char* p : kShapes) {
    const ConvDesc d = ConvDesc::parse(p);
    ASSERT_TRUE(taihu::dnn::conv_supports(ConvAlgo::direct_weight_lanes, d, ConvDirection::forward))
        << p;
    const auto x = random_vector(x_size(d), 21), w = random_vector(w_size(d), 22),
               b = random_vector(d.k, 23);
    const auto ref = conv_forward_double(d, to_double(x), to_double(w), to_double(b));
    auto ref_nb = ref;  // without the bias
    const auto plane = static_cast<std::size_t>(d.out_h() * d.out_w()),
               k = static_cast<std::size_t>(d.k);
    for (std::size_t i = 0; i < ref_nb.size(); ++i) ref_nb[i] -= b[i / plane % k];
    Convolution conv(d, ConvAlgo::direct_weight_lanes);
    ASSERT_EQ(conv.algorithm(ConvDirection::forward), ConvAlgo::direct_weight_lanes);
    std::vector<float> y(static_cast<std::size_t>(y_size(d)), 1e6f);
    conv.forward(x.data(), w.data(), b.data(), y.data());
    EXPECT_LE(max_rel_error(y, ref), 1e-5) << p;
    conv.forward(x.data(), w.data(), nullptr, y.data(), WeightsHint::unchanged);
    EXPECT_LE(max_rel_error(y, ref_nb), 1e-5) << p << " no bias";

    ASSERT_EQ(conv.algorithm(ConvDirection::backward_data), ConvAlgo::direct_weight_lanes) << p;
    const auto dy = random_vector(y_size(d), 24);
    std::vector<float> dx(static_cast<std::size_t>(x_size(d)), 1e6f);
    conv.backward_data(dy.data(), w.data(), dx.data());
    EXPECT_LE(max_rel_error(dx, backward_data_double(d, dy, w)), 1e-5) << p << " backward-data";
  }
}

// Changed weights are repacked; unchanged ones are not re-read.
TEST_F(ConvWeightLanes, WeightsHint) {
  const ConvDesc d = ConvDesc::parse("mb1ic20ih7oc40kh3ph1");
  const auto x = random_vector(x_size(d), 31), w = random_vector(w_size(d), 32);
  auto w2 = w;
  for (auto& v : w2) v = -2 * v;
  Convolution conv(d, ConvAlgo::direct_weight_lanes);
  std::vector<float> y1(static_cast<std::size_t>(y_size(d))), y2(y1.size()), y3(y1.size());
  conv.forward(x.data(), w.data(), nullptr, y1.data());
  conv.forward(x.data(), w2.data(), nullptr, y2.data(), WeightsHint::changed);
  for (std::size_t i = 0; i < y1.size(); ++i)
    ASSERT_EQ(y2[i], -2 * y1[i]) << i;  // exact: scaling by -2
  conv.forward(x.data(), w.data(), nullptr, y3.data(),
               WeightsHint::unchanged);  // still w2's packing
  EXPECT_EQ(y3, y2);
}

TEST_F(ConvWeightLanes, TwoThreadsBitwiseOne) {
  const ConvDesc d = ConvDesc::parse("mb2ic24ih7oc96kh3ph1");
  const auto x = random_vector(x_size(d), 41), w = random_vector(w_size(d), 42),
             b = random_vector(d.k, 43);
  std::vector<float> y1(static_cast<std::size_t>(y_size(d))), y2(y1.size());
  const int saved = taihu::arch::set_num_threads_local(1);
  Convolution(d, ConvAlgo::direct_weight_lanes).forward(x.data(), w.data(), b.data(), y1.data());
  taihu::arch::set_num_threads_local(2);
  Convolution(d, ConvAlgo::direct_weight_lanes).forward(x.data(), w.data(), b.data(), y2.data());
  taihu::arch::set_num_threads_local(saved);
  EXPECT_EQ(y1, y2);
}

// conv_list.cpp's rule: at AVX-512 with 2+ threads it takes ResNet-50 res5 3x3 (7x7, 512
// channels, batch 1) forward and backward-data from winograd_2x2; not at 1 thread, not
// res4 (196 pixels), never backward-weights; below AVX-512 never.
TEST_F(ConvWeightLanes, AutomaticTakesRes5WithTwoThreadsAtAvx512) {
  const bool avx512 = taihu::arch::active_isa() == taihu::arch::Isa::avx512;
  const auto choice = [](const char* p, ConvDirection dir, int threads) {
    const int saved = taihu::arch::set_num_threads_local(threads);
    const ConvAlgo a = Convolution(ConvDesc::parse(p)).algorithm(dir);
    taihu::arch::set_num_threads_local(saved);
    return a;
  };
  const char* res5 = "mb1ic512ih7oc512oh7kh3ph1";
  for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data})
    EXPECT_EQ(choice(res5, dir, 2) == ConvAlgo::direct_weight_lanes, avx512);
  EXPECT_NE(choice(res5, ConvDirection::backward_weights, 2), ConvAlgo::direct_weight_lanes);
  EXPECT_EQ(choice(res5, ConvDirection::forward, 1),
            avx512 ? ConvAlgo::winograd_2x2 : ConvAlgo::winograd_4x4);
  EXPECT_NE(choice("mb1ic256ih14oc256oh14kh3ph1", ConvDirection::forward, 2),
            ConvAlgo::direct_weight_lanes);
}

TEST_F(ConvWeightLanes, SupportsStrideOneUndilatedOneGroupForwardAndBackwardData) {
  const auto sup = [](const char* p, ConvDirection dir) {
    return taihu::dnn::conv_supports(ConvAlgo::direct_weight_lanes, ConvDesc::parse(p), dir);
  };
  EXPECT_TRUE(sup("mb1ic512ih7oc512oh7kh3ph1", ConvDirection::forward));
  EXPECT_TRUE(sup("mb1ic512ih7oc512oh7kh3ph1", ConvDirection::backward_data));
  EXPECT_FALSE(sup("mb1ic512ih7oc512oh7kh3ph1", ConvDirection::backward_weights));
  EXPECT_FALSE(sup("mb1ic16ih14oc16kh3sh2ph1", ConvDirection::forward));     // strided
  EXPECT_FALSE(sup("mb1ic16ih14oc16kh3ph2dh1", ConvDirection::forward));     // dilated
  EXPECT_FALSE(sup("g2mb1ic16ih14oc16kh3ph1", ConvDirection::forward));      // groups
  EXPECT_FALSE(sup("mb1ic16ih14oc16kh3ph3", ConvDirection::backward_data));  // pad > kernel - 1
}

}  // namespace
