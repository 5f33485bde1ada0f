// Convolution on nChw8c / nChw16c activations (ConvLayout): every direction in every
// layout against naive double-precision loops on the NCHW tensors (odd channel counts,
// pixel tails, strides, padding, several reduction blocks), which (layer, layout, ISA)
// triples run natively, the zero lanes past the channels, the weight cache, and bad
// layouts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/layout.hpp"

namespace {

using namespace taihu::dnn;
using conv_test::ConvTest;
using conv_test::for_each_product;

struct Tensors {
  std::vector<float> x, w, b, dy;
};

Tensors make_tensors(const ConvDesc& d, std::uint64_t seed) {
  return {conv_test::random_vector(static_cast<std::size_t>(conv_test::x_size(d)), seed),
          conv_test::random_vector(static_cast<std::size_t>(conv_test::w_size(d)), seed + 1),
          conv_test::random_vector(static_cast<std::size_t>(d.k), seed + 2),
          conv_test::random_vector(static_cast<std::size_t>(conv_test::y_size(d)), seed + 3)};
}

std::vector<float> to_layout(const std::vector<float>& v, index_t n, index_t c, index_t h,
                             index_t w, ActLayout l) {
  if (l == ActLayout::nchw) return v;
  const index_t elements = l == ActLayout::nchw8c ? nchw8c_elements(n, c, h, w) : nchw16c_elements(n, c, h, w);
  std::vector<float> out(static_cast<std::size_t>(elements), 7.0f);  // junk in the pad lanes
  reorder_nchw_to_layout(v.data(), out.data(), l, n, c, h, w);
  return out;
}

// The NCHW view of a tensor in layout l; also checks that the lanes past c are zero.
std::vector<float> from_layout(const std::vector<float>& v, index_t n, index_t c, index_t h,
                               index_t w, ActLayout l) {
  if (l == ActLayout::nchw) return v;
  const index_t B = l == ActLayout::nchw8c ? 8 : 16, cb = (c + B - 1) / B;
  for (index_t i = 0; i < n; ++i)
    for (index_t p = 0; p < h * w; ++p)
      for (index_t lane = c - (cb - 1) * B; lane < B; ++lane)
        EXPECT_EQ(v[static_cast<std::size_t>(((i * cb + cb - 1) * h * w + p) * B + lane)], 0.0f)
            << "pad lane " << lane;
  std::vector<float> out(static_cast<std::size_t>(n * c * h * w));
  reorder_layout_to_nchw(v.data(), out.data(), l, n, c, h, w);
  return out;
}

// Runs all three directions of d in `layout` and compares with the naive loops.
void check_layout(const ConvDesc& d, ConvLayout layout, bool expect_native_fwd,
                  bool expect_native_bwd_d, bool expect_native_bwd_w) {
  SCOPED_TRACE(d.str() + " " + to_string(layout));
  const Tensors t = make_tensors(d, 11);
  const index_t oh = d.out_h(), ow = d.out_w();
  std::vector<double> y_ref = conv_test::conv_forward_double(
      d, conv_test::to_double(t.x), conv_test::to_double(t.w), conv_test::to_double(t.b));
  std::vector<double> dx_ref(t.x.size(), 0.0), dw_ref(t.w.size(), 0.0), db_ref(t.b.size(), 0.0);
  for_each_product(d, [&](index_t xi, index_t wi, index_t yi) {
    dx_ref[static_cast<std::size_t>(xi)] +=
        double(t.w[static_cast<std::size_t>(wi)]) * t.dy[static_cast<std::size_t>(yi)];
    dw_ref[static_cast<std::size_t>(wi)] +=
        double(t.x[static_cast<std::size_t>(xi)]) * t.dy[static_cast<std::size_t>(yi)];
  });
  const index_t plane = oh * ow;
  for (index_t i = 0; i < d.n * d.k * plane; ++i)
    db_ref[static_cast<std::size_t>(i / plane % d.k)] += t.dy[static_cast<std::size_t>(i)];

  Convolution conv(d, ConvAlgo::automatic, layout);
  EXPECT_EQ(conv.layout(), layout);
  EXPECT_EQ(conv.layout_native(ConvDirection::forward), expect_native_fwd);
  EXPECT_EQ(conv.layout_native(ConvDirection::backward_data), expect_native_bwd_d);
  EXPECT_EQ(conv.layout_native(ConvDirection::backward_weights), expect_native_bwd_w);
  const auto xl = to_layout(t.x, d.n, d.c, d.h, d.w, layout.src);
  const auto dyl = to_layout(t.dy, d.n, d.k, oh, ow, layout.dst);
  std::vector<float> yl(static_cast<std::size_t>(conv_tensor_elements(d, true, layout.dst)), 5.0f);
  std::vector<float> dxl(static_cast<std::size_t>(conv_tensor_elements(d, false, layout.src)),
                         5.0f);
  conv.forward(xl.data(), t.w.data(), t.b.data(), yl.data());
  EXPECT_LT(conv_test::max_rel_error(from_layout(yl, d.n, d.k, oh, ow, layout.dst), y_ref), 1e-5);
  conv.backward_data(dyl.data(), t.w.data(), dxl.data());
  EXPECT_LT(conv_test::max_rel_error(from_layout(dxl, d.n, d.c, d.h, d.w, layout.src), dx_ref),
            1e-5);
  std::vector<float> dw(t.w.size(), 1.0f), db(t.b.size(), 1.0f);
  conv.backward_weights(xl.data(), dyl.data(), dw.data(), db.data(), /*accumulate=*/false);
  EXPECT_LT(conv_test::max_rel_error(dw, dw_ref), 1e-5);
  EXPECT_LT(conv_test::max_rel_error(db, db_ref), 1e-5);
  // accumulate adds to what is there.
  conv.backward_weights(xl.data(), dyl.data(), dw.data(), nullptr, /*accumulate=*/true);
  for (auto& v : dw_ref) v *= 2;
  EXPECT_LT(conv_test::max_rel_error(dw, dw_ref), 1e-5);
}

const ConvLayout kBlocked{ActLayout::nchw8c, ActLayout::nchw8c};
const ConvLayout kBlocked16{ActLayout::nchw16c, ActLayout::nchw16c};
const ConvLayout kFirst{ActLayout::nchw, ActLayout::nchw8c};

// pointwise_blocked runs nChw16c natively only at TAIHU_ISA=avx512 (below, NCHW entries
// between reorders).
bool avx512() { return taihu::arch::active_isa() == taihu::arch::Isa::avx512; }

class BlockedLayout : public ConvTest {};

TEST_F(BlockedLayout, PointwiseNativeInEveryDirection) {
  // channels not multiples of 8, pixel tails of 1 and 2 (3-pixel tiles), one output
  // group partial, several 256-channel reduction blocks, batch.
  for (const char* p :
       {"mb2ic13ih5iw7oc21oh5ow7kh1", "mb1ic64ih7oc40oh7kh1", "mb1ic3ih2iw1oc5oh2ow1kh1",
        "mb3ic20ih5oc36oh5kh1", "mb1ic300ih3oc70oh3kh1", "mb1ic16ih4oc264oh4kh1",
        "mb2ic10ih17oc9oh17kh1", "mb1ic12ih19oc40oh19kh1"})  // (last two: several pixel chunks)
    check_layout(ConvDesc::parse(p), kBlocked, true, true, true);
}

TEST_F(BlockedLayout, PointwiseNchw16cInEveryDirection) {
  // nChw16c: channels not multiples of 16 (13, 21, 300 = 18 x 16 + 12), pixel tails of
  // 1..5 (6-pixel tiles: 35, 2, 25, 9, 289 = 48 x 6 + 1), partial output groups (21 ->
  // 2 blocks of the 4-block tile, 264 = 16.5 blocks), several 64-channel reduction
  // blocks (300), backward-weights column tails (13 = 2 x 6 + 1, 40 -> 48-channel units
  // 48 + ..., 70), several pixel chunks (289 at 128), batch.
  const bool nat = avx512();
  for (const char* p :
       {"mb2ic13ih5iw7oc21oh5ow7kh1", "mb1ic64ih7oc40oh7kh1", "mb1ic3ih2iw1oc5oh2ow1kh1", "mb3ic20ih5oc36oh5kh1",
        "mb1ic300ih3oc70oh3kh1", "mb1ic16ih4oc264oh4kh1", "mb2ic10ih17oc9oh17kh1", "mb1ic128ih3oc64oh3kh1",
        "mb1ic70ih3iw3oc130oh3ow3kh1"})
    check_layout(ConvDesc::parse(p), kBlocked16, nat, nat, nat);
}

TEST_F(BlockedLayout, PointwiseNchw16cBackwardWeightsInputLanes) {
  // The input-lanes backward-weights tiles (3 input blocks x 8 output channels): input
  // blocks split evenly into groups of 2-3 (16 blocks = 4 x 3 + 2 x 2; 4 = 2 + 2; 7 =
  // 3 + 2 + 2), the last block partial (250 = 15 x 16 + 10, 40, 100), output channels
  // not multiples of 8 (21, 13, 3), several pixel chunks at 256 (17 x 17 = 289 -> 2 x
  // 145; 30 x 30 = 900 -> 4 x 225) with a batch, and at AMD's 4096 (65 x 65 = 4225 -> 2
  // x 2113), a thread range ending inside an output tile's run of groups; each at one
  // and two threads. On AMD the planes of <= 256 pixels (5x5, 3x3, 4x4, 2x2) take the
  // 1 x 16 tile instead (groups of one block, 16-row tiles: 21 = 16 + 5, 3, 40 = 16 + 16
  // + 8, 9), the larger ones 3 x 8 (on Intel every shape here takes 3 x 8).
  const bool nat = avx512();
  for (int threads : {1, 2}) {
    taihu::arch::set_num_threads(threads);
    for (const char* p : {"mb1ic256ih5oc21oh5kh1", "mb2ic250ih17oc13oh17kh1", "mb1ic64ih30oc24oh30kh1",
                          "mb3ic100ih3oc3oh3kh1", "mb1ic40ih4oc40oh4kh1", "mb1ic112ih2oc9oh2kh1",
                          "mb1ic20ih65oc12oh65kh1"}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      check_layout(ConvDesc::parse(p), kBlocked16, nat, nat, nat);
    }
  }
  taihu::arch::set_num_threads(0);
}

TEST_F(BlockedLayout, PointwiseForwardAndBackwardDataThreadSplits) {
  // 2 threads split the packed output groups when the weights outweigh the input
  // (batch 1, wide channels: 200 -> 100 forward 2 groups of 4 blocks, backward-data 4;
  // 96 -> 136 with 10-pixel planes, a 6-pixel tile and a 4-pixel tail; 300 -> 70 with a
  // partial last group), and the pixels otherwise (batch 2 on 17 x 17): both agree with
  // the double loops and bitwise with 1 thread (each output's sum runs in one order).
  for (const ConvLayout& l : {kBlocked, kBlocked16}) {
    for (const char* p : {"mb1ic200ih5oc100oh5kh1", "mb1ic96ih2iw5oc136oh2ow5kh1", "mb1ic300ih3oc70oh3kh1",
                          "mb2ic24ih17oc40oh17kh1"}) {
      const ConvDesc d = ConvDesc::parse(p);
      SCOPED_TRACE(d.str() + " " + to_string(l));
      const Tensors t = make_tensors(d, 21);
      const auto xl = to_layout(t.x, d.n, d.c, d.h, d.w, l.src);
      const auto dyl = to_layout(t.dy, d.n, d.k, d.h, d.w, l.dst);
      std::vector<float> y[2], dx[2];
      for (int threads : {1, 2}) {
        taihu::arch::set_num_threads(threads);
        const bool nat = l == kBlocked || avx512();
        check_layout(d, l, nat, nat, nat);
        Convolution conv(d, ConvAlgo::automatic, l);
        auto& yt = y[threads - 1];
        auto& dxt = dx[threads - 1];
        yt.assign(static_cast<std::size_t>(conv_tensor_elements(d, true, l.dst)), 5.0f);
        dxt.assign(static_cast<std::size_t>(conv_tensor_elements(d, false, l.src)), 5.0f);
        conv.forward(xl.data(), t.w.data(), t.b.data(), yt.data());
        conv.backward_data(dyl.data(), t.w.data(), dxt.data());
      }
      EXPECT_EQ(y[0], y[1]);
      EXPECT_EQ(dx[0], dx[1]);
    }
  }
  taihu::arch::set_num_threads(0);
}

TEST_F(BlockedLayout, FirstLayerForwardAndBackwardWeightsNative) {
  // strided (RGB, grey) with padding, stride 1 with >= 32 output channels, 11x11 s4;
  // output channels not multiples of 8 or 32; chunk and tile tails.
  for (const char* p :
       {"mb2ic3ih13oc35oh7kh3sh2ph1", "mb1ic3ih17oc64oh17kh5ph2", "mb1ic1ih15iw11oc20oh3ow2kh7sh4",
        "mb1ic3ih31oc9oh6kh11sh4", "mb3ic3ih9oc33oh9kh3ph1", "mb2ic3ih6oc32oh10kh3ph3"})
    check_layout(ConvDesc::parse(p), kFirst, true, false, true);
}

TEST_F(BlockedLayout, NarrowStride1FirstLayerNativeAtAvx2) {
  // Stride 1 with 16-31 output channels (LeNet conv1-like, 1 -> 20) at batch >= 32:
  // native nChw8c output at AVX2 only (between reorders elsewhere, and at batch 1).
  const bool avx2 = taihu::arch::active_isa() == taihu::arch::Isa::avx2;
  check_layout(ConvDesc::parse("mb32ic1ih12oc20oh8kh5"), kFirst, avx2, false, avx2);
  check_layout(ConvDesc::parse("mb32ic3ih9oc17oh9kh3ph1"), kFirst, avx2, false, avx2);
  check_layout(ConvDesc::parse("mb1ic1ih12oc20oh8kh5"), kFirst, false, false, false);
}

TEST_F(BlockedLayout, OtherLayersRunBetweenReorders) {
  // 3x3 (Winograd / direct in NCHW), groups, a first layer with both tensors blocked,
  // a 1x1 layer with only one side blocked, a strided 1x1.
  check_layout(ConvDesc::parse("mb1ic19ih6oc17oh6kh3ph1"), kBlocked, false, false, false);
  check_layout(ConvDesc::parse("g2mb2ic16ih5oc24oh5kh3ph1"), kBlocked, false, false, false);
  check_layout(ConvDesc::parse("mb1ic3ih13oc35oh7kh3sh2ph1"), kBlocked, false, false, false);
  check_layout(ConvDesc::parse("mb1ic12ih4oc20oh4kh1"), kFirst, false, false, false);
  check_layout(ConvDesc::parse("mb1ic12ih4oc20oh4kh1"),
               ConvLayout{ActLayout::nchw8c, ActLayout::nchw}, false, false, false);
  check_layout(ConvDesc::parse("mb1ic12ih7oc20oh4kh1sh2"), kBlocked, false, false, false);
}

TEST_F(BlockedLayout, PreferredLayoutAndForcedAlgorithm) {
  // The blocked layout follows the vector: nChw16c on AVX-512, nChw8c below.
  using taihu::arch::Isa;
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic64ih56oc256oh56kh1"), Isa::avx512), kBlocked16);
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic64ih56oc256oh56kh1"), Isa::avx2), kBlocked);
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic64ih56oc256oh56kh1"), Isa::generic), kBlocked);
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic64ih56oc256oh56kh1")), avx512() ? kBlocked16 : kBlocked);
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic3ih224oc64oh112kh7sh2ph3"), Isa::avx512), kFirst);
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic64ih56oc64oh56kh3ph1"), Isa::avx512), ConvLayout{});
  EXPECT_EQ(preferred_layout(ConvDesc::parse("g2mb1ic64ih56oc64oh56kh1"), Isa::avx512), ConvLayout{});
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic3ih224oc64oh112kh7sh2ph3")), kFirst);
  EXPECT_EQ(preferred_layout(ConvDesc::parse("mb1ic64ih56oc64oh56kh3ph1")), ConvLayout{});
  // A forced non-direct algorithm runs between reorders, and is still right.
  const ConvDesc d = ConvDesc::parse("mb1ic13ih5oc21oh5kh1");
  Convolution conv(d, ConvAlgo::explicit_gemm, kBlocked);
  EXPECT_FALSE(conv.layout_native(ConvDirection::forward));
  EXPECT_EQ(conv.algorithm(), ConvAlgo::explicit_gemm);
  check_layout(d, kBlocked, true, true, true);
}

TEST_F(BlockedLayout, WeightsHintRepacks) {
  const ConvDesc d = ConvDesc::parse("mb1ic16ih3oc16oh3kh1");
  for (const ConvLayout& l : {kBlocked, kBlocked16}) {
    SCOPED_TRACE(to_string(l));
    Tensors t = make_tensors(d, 5);
    Convolution conv(d, ConvAlgo::automatic, l);
    const auto xl = to_layout(t.x, 1, 16, 3, 3, l.src);
    std::vector<float> y1(xl.size()), y2(xl.size()), y3(xl.size());
    conv.forward(xl.data(), t.w.data(), nullptr, y1.data());
    for (auto& v : t.w) v *= 2;
    conv.forward(xl.data(), t.w.data(), nullptr, y2.data(),
                 WeightsHint::unchanged);  // promise broken: old weights
    if (conv.layout_native(ConvDirection::forward)) {  // (NCHW entries may repack anyway)
      EXPECT_EQ(y2, y1);
    }
    conv.forward(xl.data(), t.w.data(), nullptr, y3.data());
    for (std::size_t i = 0; i < y1.size(); ++i) EXPECT_FLOAT_EQ(y3[i], 2 * y1[i]);
  }
}

TEST(BlockedLayoutNames, ParseAndReject) {
  EXPECT_EQ(parse_act_layout("nChw8c"), ActLayout::nchw8c);
  EXPECT_EQ(parse_act_layout("nChw16c"), ActLayout::nchw16c);
  EXPECT_EQ(parse_act_layout("nchw16c"), ActLayout::nchw16c);
  EXPECT_EQ(parse_conv_layout("nChw16c"), kBlocked16);
  EXPECT_EQ(to_string(kBlocked16), "nChw16c");
  EXPECT_EQ(parse_act_layout("nchw"), ActLayout::nchw);
  EXPECT_EQ(parse_conv_layout("nchw->nChw8c"), kFirst);
  EXPECT_EQ(parse_conv_layout("nChw8c"), kBlocked);
  EXPECT_EQ(to_string(kFirst), "nchw->nChw8c");
  EXPECT_EQ(to_string(kBlocked), "nChw8c");
  try {
    (void)parse_act_layout("nhwc");
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nhwc'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)parse_conv_layout("nchw->"), taihu::Error);
  const ConvDesc d = ConvDesc::parse("mb1ic8ih4oc8oh4kh1");
  try {
    Convolution bad(d, ConvAlgo::automatic, ConvLayout{static_cast<ActLayout>(3), ActLayout::nchw});
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layout.src"), std::string::npos) << e.what();
  }
  // Shapes are still checked first, and null tensors named.
  EXPECT_THROW(Convolution(ConvDesc::parse("mb1ic8ih4oc8oh5kh1"), ConvAlgo::automatic, kBlocked),
               taihu::Error);
  Convolution conv(d, ConvAlgo::automatic, kBlocked);
  std::vector<float> w(64);
  try {
    conv.forward(nullptr, w.data(), nullptr, w.data());
    FAIL();
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("x is null"), std::string::npos) << e.what();
  }
}

}  // namespace
