// Winograd backward-weights at 2 threads (conv_winograd.cpp, backward_weights_xi_split:
// threads transform tile blocks into shared buffers, then split the alpha^2 GEMMs): dw
// and the bias gradient bitwise the 1-thread result (same chunks, same GEMM blocks, same
// order), with one image and several, groups, F(4x4) and F(2x2) on 3x3 and 5x5, and with
// accumulate; the 1-thread result itself against the double reference. The same with the
// output-channel split (backward_weights_k_split, AVX2's default on 5x5 layers) forced on
// and off by TAIHU_WINOGRAD_BWDW_KSPLIT. The same for the
// superblock path (backward_weights_superblocks), forced onto small problems, with its
// transforms' non-temporal stores on and off.
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
using taihu::dnn::Convolution;

struct Case {
  const char* problem;
  ConvAlgo algo;
};

class WinogradBwdwThreads : public ConvTest, public ::testing::WithParamInterface<Case> {
 protected:
  void TearDown() override { taihu::arch::set_num_threads(1); }
};

TEST_P(WinogradBwdwThreads, TwoThreadsBitwiseOne) {
  const ConvDesc d = ConvDesc::parse(GetParam().problem);
  const auto x = random_vector(x_size(d), 41), dy = random_vector(y_size(d), 42);
  std::vector<float> ref(w_size(d)), refb(d.k);
  Convolution(d, ConvAlgo::reference).backward_weights(x.data(), dy.data(), ref.data(), refb.data(), false);
  for (const char* ksplit : {"", "0", "1"})  // (the default, then forced off and on)
    for (bool accumulate : {false, true}) {
      if (*ksplit != '\0') setenv("TAIHU_WINOGRAD_BWDW_KSPLIT", ksplit, 1);
      std::vector<float> dw[2], db[2];
      for (int t = 0; t < 2; ++t) {
        taihu::arch::set_num_threads(t + 1);
        dw[t].assign(w_size(d), 0.25f);
        db[t].assign(d.k, 0.25f);
        Convolution conv(d, GetParam().algo);
        conv.backward_weights(x.data(), dy.data(), dw[t].data(), db[t].data(), accumulate);
      }
      unsetenv("TAIHU_WINOGRAD_BWDW_KSPLIT");
      EXPECT_EQ(dw[1], dw[0]) << d.str() << " accumulate " << accumulate << " ksplit '" << ksplit << "'";
      EXPECT_EQ(db[1], db[0]) << d.str();
      std::vector<float> want(ref);
      if (accumulate)
        for (auto& v : want) v += 0.25f;
      EXPECT_LE(max_rel_error(dw[0], want), 2e-4) << d.str();
    }
}

// The superblock path (taken where dU passes 4 MiB: 256 x 256 channels) forced onto
// small problems by TAIHU_WINOGRAD_SUPERBLOCK_TILES: several superblocks per chunk of
// images, a last short one, several chunks, groups; dw against the double reference,
// 2 threads bitwise 1.
TEST(WinogradBwdwSuperblocks, MatchReferenceAndOneThread) {
  struct Forced {
    const char* problem;
    ConvAlgo algo;
    const char* tiles;
  };
  for (const Forced& f : {Forced{"mb3ic24ih9oc20kh3ph1", ConvAlgo::winograd_4x4, "5"},
                          Forced{"g2mb2ic16ih9oc8kh3ph1", ConvAlgo::winograd_2x2, "7"},
                          Forced{"mb2ic8ih10oc12kh5ph2", ConvAlgo::winograd_2x2, "11"}}) {
    const ConvDesc d = ConvDesc::parse(f.problem);
    const auto x = random_vector(x_size(d), 43), dy = random_vector(y_size(d), 44);
    std::vector<float> ref(w_size(d)), refb(d.k);
    Convolution(d, ConvAlgo::reference).backward_weights(x.data(), dy.data(), ref.data(), refb.data(), false);
    setenv("TAIHU_WINOGRAD_SUPERBLOCK_TILES", f.tiles, 1);
    for (bool accumulate : {false, true}) {
      std::vector<float> dw[2];
      for (int t = 0; t < 2; ++t) {
        taihu::arch::set_num_threads(t + 1);
        dw[t].assign(w_size(d), 0.25f);
        std::vector<float> db(d.k);
        Convolution conv(d, f.algo);
        conv.backward_weights(x.data(), dy.data(), dw[t].data(), db.data(), accumulate);
        conv.backward_weights(x.data(), dy.data(), dw[t].data(), db.data(), accumulate);  // dU reused
      }
      std::vector<float> want(ref);
      for (auto& v : want) v = accumulate ? 2 * v + 0.25f : v;
      EXPECT_EQ(dw[1], dw[0]) << d.str() << " accumulate " << accumulate;
      EXPECT_LE(max_rel_error(dw[0], want), 2e-4) << d.str() << " accumulate " << accumulate;
    }
    unsetenv("TAIHU_WINOGRAD_SUPERBLOCK_TILES");
    taihu::arch::set_num_threads(1);
  }
}

// The superblocks' transforms by non-temporal stores (TAIHU_WINOGRAD_NT_TILES, on by
// default on AMD) against plain stores: dw bitwise, at 1 and 2 threads, on 32 channels
// (the AVX-512 set's 16-channel blocks, whose stores stream), and against the reference.
TEST(WinogradBwdwSuperblocks, NonTemporalTilesBitwisePlain) {
  const ConvDesc d = ConvDesc::parse("mb2ic32ih9oc32kh3ph1");
  const auto x = random_vector(x_size(d), 45), dy = random_vector(y_size(d), 46);
  std::vector<float> ref(w_size(d)), refb(d.k);
  Convolution(d, ConvAlgo::reference).backward_weights(x.data(), dy.data(), ref.data(), refb.data(), false);
  setenv("TAIHU_WINOGRAD_SUPERBLOCK_TILES", "6", 1);
  for (int t = 1; t <= 2; ++t) {
    taihu::arch::set_num_threads(t);
    std::vector<float> dw[2], db(d.k);
    for (int nt = 0; nt < 2; ++nt) {
      setenv("TAIHU_WINOGRAD_NT_TILES", nt ? "1" : "0", 1);
      dw[nt].assign(w_size(d), 0.0f);
      Convolution(d, ConvAlgo::winograd_4x4).backward_weights(x.data(), dy.data(), dw[nt].data(), db.data(), false);
    }
    EXPECT_EQ(dw[1], dw[0]) << t << " threads";
    EXPECT_LE(max_rel_error(dw[1], ref), 2e-4) << t << " threads";
  }
  unsetenv("TAIHU_WINOGRAD_NT_TILES");
  unsetenv("TAIHU_WINOGRAD_SUPERBLOCK_TILES");
  taihu::arch::set_num_threads(1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, WinogradBwdwThreads,
                         ::testing::Values(Case{"mb1ic24ih13oc20kh3ph1", ConvAlgo::winograd_4x4},
                                           Case{"mb3ic24ih9oc20kh3ph1", ConvAlgo::winograd_4x4},
                                           Case{"g2mb2ic16ih9oc8kh3ph1", ConvAlgo::winograd_2x2},
                                           Case{"mb8ic3ih24oc8kh5ph2", ConvAlgo::winograd_2x2},
                                           Case{"mb3ic12ih10oc52kh5ph2", ConvAlgo::winograd_2x2}),
                         [](const auto& p) {
                           return std::string(p.param.problem) + "_" + taihu::dnn::to_string(p.param.algo);
                         });

}  // namespace
