// direct_input_lanes backward-weights (conv_direct_input_lanes.cpp) in row bands:
// TAIHU_INPUT_LANES_BAND_ROWS forces bands of n output rows (0: one band). Banded dw
// must be bitwise the unbanded dw (each (unit, tap) sums images, rows and pixels in
// the same order) and match the double reference; also with accumulate, several
// images, a partial last band, channel counts off the 16-lane blocks, rectangular
// kernels and 2 threads (bitwise the 1-thread result). The column form
// (TAIHU_INPUT_LANES_COLS) against the reference too. Every TAIHU_ISA level.
#include <gtest/gtest.h>

#include <cstdlib>
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

struct Grad {
  std::vector<float> dw, db;
};

// dw after backward_weights with accumulate onto 0.5-filled buffers, `band_rows` rows per
// band ("0": unbanded), `threads` threads.
Grad run(const ConvDesc& d, const std::vector<float>& x, const std::vector<float>& dy, const char* band_rows,
         int threads, bool accumulate) {
  setenv("TAIHU_INPUT_LANES_BAND_ROWS", band_rows, 1);
  taihu::arch::set_num_threads(threads);
  Grad g{std::vector<float>(w_size(d), 0.5f), std::vector<float>(d.k, 0.5f)};
  Convolution(d, ConvAlgo::direct_input_lanes)
      .backward_weights(x.data(), dy.data(), g.dw.data(), g.db.data(), accumulate);
  taihu::arch::set_num_threads(1);
  unsetenv("TAIHU_INPUT_LANES_BAND_ROWS");
  return g;
}

class DirectInputLanesBands : public ConvTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(DirectInputLanesBands, BandedIsBitwiseUnbandedAndMatchesReference) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  ASSERT_EQ(Convolution(d, ConvAlgo::direct_input_lanes).algorithm(ConvDirection::backward_weights),
            ConvAlgo::direct_input_lanes);
  const auto x = random_vector(x_size(d), 31), dy = random_vector(y_size(d), 32);
  std::vector<float> ref(w_size(d)), refb(d.k);
  Convolution(d, ConvAlgo::reference).backward_weights(x.data(), dy.data(), ref.data(), refb.data(), false);
  setenv("TAIHU_INPUT_LANES_COLS", "0", 1);  // the per-tap form (small images take columns on AMD)
  for (bool accumulate : {false, true}) {
    std::vector<float> want(ref);
    if (accumulate)
      for (auto& v : want) v += 0.5f;
    const Grad whole = run(d, x, dy, "0", 1, accumulate);
    EXPECT_LE(max_rel_error(whole.dw, want), 2e-5) << d.str();
    for (const char* rows : {"1", "2", "3"})
      for (int threads : {1, 2}) {
        const Grad banded = run(d, x, dy, rows, threads, accumulate);
        EXPECT_EQ(banded.dw, whole.dw) << d.str() << " band rows " << rows << ", " << threads << " threads";
        EXPECT_EQ(banded.db, whole.db) << d.str();
      }
  }
  unsetenv("TAIHU_INPUT_LANES_COLS");
}

INSTANTIATE_TEST_SUITE_P(Shapes, DirectInputLanesBands,
                         ::testing::Values("mb1ic40ih7iw9oc20kh3ph1",       // 3 + 1 bands of 2, masked lanes
                                           "mb2ic17ih8oc9kh3",               // unpadded, 2 images, odd channels
                                           "mb1ic64ih6oc24kh3kw5ph1pw2",     // rectangular kernel, 2 groups
                                           "mb2ic50ih5iw6oc17kh3ph1"),       // several units per thread
                         [](const auto& p) { return std::string(p.param); });

// The column form (TAIHU_INPUT_LANES_COLS=1: x's columns built once, then the 1x1
// input-lanes tile over C * taps columns straight into dw) against the double reference,
// with accumulate and at 2 threads (bitwise the 1-thread dw: disjoint dw tiles). The
// 512 x 64 shape's dw (1.2 MiB) takes the streaming stores on AMD.
class DirectInputLanesCols : public ConvTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(DirectInputLanesCols, MatchesReference) {
  const ConvDesc d = ConvDesc::parse(GetParam());
  const auto x = random_vector(x_size(d), 41), dy = random_vector(y_size(d), 42);
  std::vector<float> ref(w_size(d)), refb(d.k);
  Convolution(d, ConvAlgo::reference).backward_weights(x.data(), dy.data(), ref.data(), refb.data(), false);
  setenv("TAIHU_INPUT_LANES_COLS", "1", 1);
  for (bool accumulate : {false, true}) {
    std::vector<float> want(ref);
    if (accumulate)
      for (auto& v : want) v += 0.5f;
    const Grad one = run(d, x, dy, "0", 1, accumulate);
    EXPECT_LE(max_rel_error(one.dw, want), 2e-5) << d.str();
    const Grad two = run(d, x, dy, "0", 2, accumulate);
    EXPECT_EQ(two.dw, one.dw) << d.str();
    EXPECT_EQ(two.db, one.db) << d.str();
  }
  unsetenv("TAIHU_INPUT_LANES_COLS");
}

INSTANTIATE_TEST_SUITE_P(Shapes, DirectInputLanesCols,
                         ::testing::Values("mb1ic40ih7iw9oc20kh3ph1",     // masked last column block
                                           "mb2ic17ih8oc9kh3",             // 2 images (runs), odd channels
                                           "mb1ic64ih6oc24kh3kw5ph1pw2",   // rectangular kernel
                                           "mb1ic64ih2oc512kh3ph1"),       // 1.2 MiB dw
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
