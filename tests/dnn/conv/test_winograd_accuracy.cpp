// Winograd error measured against a double-precision convolution on unit-scale data
// (uniform [-1, 1] inputs and weights), per tile size. Documented bounds (dnn/README.md):
//   F(2x2,3x3): max relative error <= 3e-6   (forward, backward-data, backward-weights)
//   F(4x4,3x3): max relative error <= 3e-5   (the target is 1e-4), L2 <= 5e-6
//   F(2x2,5x5): max relative error <= 3e-5   (winograd_2x2 on 5x5 kernels, alpha = 6)
// Measured (64 x 9 reduction, AVX2 and generic): F(2x2) 2.8e-7, F(4x4) 4.9e-6 (L2 1.7e-6),
// explicit GEMM 4.3e-7.
// relative = max |y - y_double| / max |y_double|. The explicit GEMM error on the same
// data is printed alongside as the float baseline.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "conv_test_support.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/conv.hpp"
#include "winograd_kernel_check.hpp"

namespace {

using namespace conv_test;
using taihu::dnn::ConvAlgo;
using taihu::dnn::Convolution;

class WinogradAccuracy : public ConvTest {};

struct Errors {
  double fwd_max, fwd_l2, bwd_data_max, bwd_weights_max;
};

Errors measure(const ConvDesc& d, ConvAlgo a) {
  const auto xf = random_vector(x_size(d), 31), wf = random_vector(w_size(d), 32),
             rf = random_vector(y_size(d), 33);
  const auto x = to_double(xf), w = to_double(wf), r = to_double(rf);
  Convolution conv(d, a);
  Errors e{};
  std::vector<float> y(y_size(d));
  conv.forward(xf.data(), wf.data(), nullptr, y.data());
  const auto y_ref = conv_forward_double(d, x, w, {});
  e.fwd_max = max_rel_error(y, y_ref);
  e.fwd_l2 = l2_rel_error(y, y_ref);
  // backward-data: the forward of the transposed problem in double.
  const index_t r_ = d.kh, taps = r_ * r_;  // square kernels
  ConvDesc t = d;
  t.c = d.k, t.k = d.c, t.h = d.out_h(), t.w = d.out_w(), t.pad_h = r_ - 1 - d.pad_h, t.pad_w = r_ - 1 - d.pad_w;
  std::vector<double> w_rot(w.size());
  for (index_t k = 0; k < d.k; ++k)
    for (index_t c = 0; c < d.c; ++c)
      for (index_t p = 0; p < taps; ++p) w_rot[(c * d.k + k) * taps + taps - 1 - p] = w[(k * d.c + c) * taps + p];
  std::vector<float> dx(x_size(d));
  conv.backward_data(rf.data(), wf.data(), dx.data());
  e.bwd_data_max = max_rel_error(dx, conv_forward_double(t, r, w_rot, {}));
  // backward-weights: dw[k][c][p] = sum over n, pixels of r * shifted x, in double.
  std::vector<double> dw_ref(w.size(), 0.0);
  const index_t oh = d.out_h(), ow = d.out_w();
  for (index_t n = 0; n < d.n; ++n)
    for (index_t k = 0; k < d.k; ++k)
      for (index_t c = 0; c < d.c; ++c)
        for (index_t p = 0; p < taps; ++p)
          for (index_t oy = 0; oy < oh; ++oy)
            for (index_t ox = 0; ox < ow; ++ox) {
              const index_t iy = oy - d.pad_h + p / r_, ix = ox - d.pad_w + p % r_;
              if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
              dw_ref[(k * d.c + c) * taps + p] +=
                  r[((n * d.k + k) * oh + oy) * ow + ox] * x[((n * d.c + c) * d.h + iy) * d.w + ix];
            }
  std::vector<float> dw(w.size());
  conv.backward_weights(xf.data(), rf.data(), dw.data(), nullptr, false);
  e.bwd_weights_max = max_rel_error(dw, dw_ref);
  std::printf("  %-14s %s: forward max %.2e l2 %.2e | backward-data max %.2e | backward-weights max %.2e\n",
              taihu::dnn::to_string(a), d.str().c_str(), e.fwd_max, e.fwd_l2, e.bwd_data_max,
              e.bwd_weights_max);
  return e;
}

TEST_F(WinogradAccuracy, ErrorBoundsPerTileSize) {
  // A layer with a realistic reduction depth (64 channels x 9 taps).
  const ConvDesc d = ConvDesc::parse("mb1ic64ih20oc32kh3ph1");
  const Errors base = measure(d, ConvAlgo::explicit_gemm);
  const Errors f2 = measure(d, ConvAlgo::winograd_2x2);
  const Errors f4 = measure(d, ConvAlgo::winograd_4x4);
  EXPECT_LE(base.fwd_max, 1e-5);
  EXPECT_LE(f2.fwd_max, 3e-6);
  EXPECT_LE(f2.bwd_data_max, 3e-6);
  EXPECT_LE(f2.bwd_weights_max, 3e-6);
  EXPECT_LE(f4.fwd_max, 3e-5);
  EXPECT_LE(f4.fwd_l2, 5e-6);
  EXPECT_LE(f4.bwd_data_max, 3e-5);
  EXPECT_LE(f4.bwd_weights_max, 3e-5);
  // The larger tile trades accuracy for arithmetic: it must not be more accurate than F(2x2).
  EXPECT_GE(f4.fwd_l2, f2.fwd_l2 * 0.5);
}

// F(2x2,5x5) on F(4x4,3x3)'s points: a 32 x 25 reduction, padded and unpadded.
TEST_F(WinogradAccuracy, FiveByFiveErrorBound) {
  for (const char* p : {"mb1ic32ih16oc24kh5ph2", "mb2ic32ih11oc16kh5"}) {
    const ConvDesc d = ConvDesc::parse(p);
    const Errors base = measure(d, ConvAlgo::explicit_gemm), f = measure(d, ConvAlgo::winograd_2x2);
    EXPECT_LE(base.fwd_max, 1e-5) << p;
    EXPECT_LE(f.fwd_max, 3e-5) << p;
    EXPECT_LE(f.bwd_data_max, 3e-5) << p;
    EXPECT_LE(f.bwd_weights_max, 3e-5) << p;
  }
}

TEST_F(WinogradAccuracy, PaddingZeroAndTwo) {
  for (const char* p : {"mb2ic32ih9oc16kh3", "mb1ic32ih10oc16kh3ph2"}) {
    const ConvDesc d = ConvDesc::parse(p);
    const Errors f4 = measure(d, ConvAlgo::winograd_4x4), f2 = measure(d, ConvAlgo::winograd_2x2);
    EXPECT_LE(f4.fwd_max, 3e-5) << p;
    EXPECT_LE(f4.bwd_data_max, 3e-5) << p;
    EXPECT_LE(f4.bwd_weights_max, 3e-5) << p;
    EXPECT_LE(f2.fwd_max, 3e-6) << p;
    EXPECT_LE(f2.bwd_data_max, 3e-6) << p;
  }
}

// 12 and 13 channels pad to 16 either way, so on AVX-512 these take the 16-channel
// transforms with partial blocks (lanes 12 and 13 of 16); 20 and 24 take the 8-channel ones.
TEST_F(WinogradAccuracy, PartialChannelBlocks) {
  for (const char* p : {"mb2ic12ih9oc13kh3ph1", "mb1ic20ih11oc24kh3ph1", "mb1ic13ih10oc12kh5ph2"}) {
    const ConvDesc d = ConvDesc::parse(p);
    const Errors f4 = measure(d, d.kh == 3 ? ConvAlgo::winograd_4x4 : ConvAlgo::winograd_2x2);
    EXPECT_LE(f4.fwd_max, 3e-5) << p;
    EXPECT_LE(f4.bwd_data_max, 3e-5) << p;
    EXPECT_LE(f4.bwd_weights_max, 3e-5) << p;
  }
}

// The output scatter's non-temporal stores (taken on AMD for outputs over 64 MiB; forced
// here by TAIHU_WINOGRAD_STREAM) and the cache-line multiple blocks that go with them:
// forward (with bias) and backward-data bitwise equal to the plain stores (each tile's
// arithmetic does not depend on its block), at 1 and 2 threads, y on a 64-byte line so
// that the rows of width 32 / 48 stream and the 30-wide ones fall back to plain stores.
TEST_F(WinogradAccuracy, StreamingOutputMatchesPlainStores) {
  for (const auto& [p, a] : {std::pair{"mb2ic16ih32oc24kh3ph1", ConvAlgo::winograd_4x4},
                             std::pair{"mb1ic8ih48oc16kh3ph1", ConvAlgo::winograd_2x2},
                             std::pair{"mb1ic16ih30oc20kh5ph2", ConvAlgo::winograd_2x2}}) {
    const ConvDesc d = ConvDesc::parse(p);
    const auto x = random_vector(x_size(d), 35), w = random_vector(w_size(d), 36), b = random_vector(d.k, 37),
               dy = random_vector(y_size(d), 38);
    const auto y_ref = conv_forward_double(d, to_double(x), to_double(w), to_double(b));
    for (int threads : {1, 2}) {
      taihu::arch::set_num_threads(threads);
      std::vector<float> out[2][2];  // [stream][forward y, backward-data dx]
      for (int stream : {0, 1}) {
        setenv("TAIHU_WINOGRAD_STREAM", stream ? "1" : "0", 1);
        Convolution conv(d, a);
        for (int dir = 0; dir < 2; ++dir) {
          const auto n = static_cast<std::size_t>(dir == 0 ? y_size(d) : x_size(d));
          std::vector<float> buf(n + 16);
          float* at = buf.data() + (64 - reinterpret_cast<std::uintptr_t>(buf.data()) % 64) % 64 / 4;
          if (dir == 0)
            conv.forward(x.data(), w.data(), b.data(), at);
          else
            conv.backward_data(dy.data(), w.data(), at);
          out[stream][dir].assign(at, at + n);
        }
      }
      unsetenv("TAIHU_WINOGRAD_STREAM");
      EXPECT_EQ(out[1][0], out[0][0]) << p << " forward, threads " << threads;
      EXPECT_EQ(out[1][1], out[0][1]) << p << " backward-data, threads " << threads;
      EXPECT_LE(max_rel_error(out[1][0], y_ref), 3e-5) << p;
    }
    taihu::arch::set_num_threads(1);
  }
}

// Every kernel set this CPU runs (whatever TAIHU_ISA says: the sets are called directly).
std::vector<const taihu::dnn::conv::WinogradKernelSet*> runnable_sets() {
  using taihu::arch::Isa;
  std::vector<const taihu::dnn::conv::WinogradKernelSet*> sets = {&taihu::dnn::conv::winograd_kernels_generic};
  if (taihu::arch::isa_supported(Isa::avx2, taihu::arch::cpu_features()))
    sets.push_back(&taihu::dnn::conv::winograd_kernels_avx2);
  if (taihu::arch::isa_supported(Isa::avx512, taihu::arch::cpu_features()))
    sets.push_back(&taihu::dnn::conv::winograd_kernels_avx512);
  return sets;
}

TEST(WinogradKernels, TransformsMatchTheDefinition) {
  for (const auto* set : runnable_sets()) winograd_kernel_check::transforms_match_definition(*set);
}

TEST(WinogradKernels, ChannelGemmMatchesTheDefinition) {
  for (const auto* set : runnable_sets()) winograd_kernel_check::gemm_matches_definition(*set);
}

TEST(WinogradKernels, WeightGemmMatchesTheDefinition) {
  for (const auto* set : runnable_sets()) winograd_kernel_check::weight_gemm_matches_definition(*set);
}

TEST(WinogradKernels, RowScatterGatherMatchTheDefinition) {
  for (const auto* set : runnable_sets()) {
    winograd_kernel_check::rows_match_definition(*set);
    winograd_kernel_check::streaming_scatter_matches_definition(*set);
  }
}

}  // namespace
