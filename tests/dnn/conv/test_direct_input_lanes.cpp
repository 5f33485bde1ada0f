// direct_input_lanes backward-weights (conv_direct_input_lanes.cpp) in row bands:
// TAIHU_INPUT_LANES_BAND_ROWS forces bands of n output rows (0: one band). Banded dw
// must be bitwise the unbanded dw (each (unit, tap) sums images, rows and pixels in
// the same order) and match the double reference; also with accumulate, several
// images, a partial last band, channel counts off the 16-lane blocks, rectangular
// kernels and 2 threads (bitwise the 1-thread result). The column form
// (TAIHU_INPUT_LANES_COLS) against the reference too. Every TAIHU_ISA level. And the
// entry's own kernels (input_lanes_kernels.hpp: the dw rows' tap store, the column
// build, x's padded reorder) against their definitions, element by element, for every
// kernel this CPU runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "conv_test_support.hpp"
#include "input_lanes_kernels.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
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
                                           "mb2ic50ih5iw6oc17kh3ph1",        // several units per thread
                                           "mb1ic128ih2oc256kh3ph1"),        // 1.2 MiB dw: streamed on AMD
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

template <class K>
std::vector<std::pair<const char*, K>> kernels_here(K generic, K avx512) {
  std::vector<std::pair<const char*, K>> k{{"generic", generic}};
  if (taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features())) k.emplace_back("avx512", avx512);
  return k;
}

// 64-byte aligned view into v (streaming stores need it; the kernels fall back otherwise).
float* aligned64(std::vector<float>& v) {
  auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return v.data() + ((64 - p % 64) % 64) / sizeof(float);
}

// TapStoreKernel: dst[c * taps + t] (+)= src[t * tap_stride + c]; floats are moved or
// added once (exact). 9 taps (the whole-vector path) with full and partial 16-channel
// blocks, other tap counts (the fallback), streaming on and off; nothing past the run.
TEST(DirectInputLanesTapStore, EveryKernelMatchesTheDefinition) {
  for (const auto& [name, kernel] : kernels_here(&taihu::dnn::conv::tap_store_generic,
                                                 &taihu::dnn::conv::tap_store_avx512))
    for (std::int64_t taps : {4, 9, 25})
      for (std::int64_t channels : {5, 16, 40, 48})
        for (bool accumulate : {false, true})
          for (bool stream : {false, true}) {
            SCOPED_TRACE(std::string(name) + " taps " + std::to_string(taps) + " channels " +
                         std::to_string(channels) + " accumulate " + std::to_string(accumulate) + " stream " +
                         std::to_string(stream));
            const std::int64_t stride = 53;
            std::vector<float> src(static_cast<std::size_t>(taps * stride));
            for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.25f - 7.0f;
            std::vector<float> storage(static_cast<std::size_t>(channels * taps + 17 + 16));
            float* dst = aligned64(storage);
            const std::size_t n = static_cast<std::size_t>(channels * taps + 17);
            for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(i % 13) + 0.5f;
            const std::vector<float> before(dst, dst + n);
            kernel(src.data(), stride, taps, channels, dst, accumulate, stream && !accumulate);
            for (std::int64_t c = 0; c < channels; ++c)
              for (std::int64_t t = 0; t < taps; ++t) {
                const auto at = static_cast<std::size_t>(c * taps + t);
                const float v = src[static_cast<std::size_t>(t * stride + c)];
                ASSERT_EQ(dst[at], accumulate ? before[at] + v : v) << "channel " << c << " tap " << t;
              }
            for (std::size_t i = static_cast<std::size_t>(channels * taps); i < n; ++i)
              ASSERT_EQ(dst[i], before[i]) << "written past the run at " << i;
          }
}

// ColBuildKernel: column j = c * taps + t of pixel p (block j / 16, lane j % 16) is the
// padded row's pixel p + tap t's offset, channel c; 3x3 (the permute path), 2x3 and 5x5;
// the floats between column blocks (cstride past the row's pixels) untouched.
TEST(DirectInputLanesColBuild, EveryKernelMatchesTheDefinition) {
  for (const auto& [name, kernel] : kernels_here(&taihu::dnn::conv::col_build_generic,
                                                 &taihu::dnn::conv::col_build_avx512))
    for (const auto& [kh, kw] : std::vector<std::pair<int, int>>{{3, 3}, {2, 3}, {5, 5}})
      for (std::int64_t pixels : {1, 7, 14}) {
        SCOPED_TRACE(std::string(name) + " kernel " + std::to_string(kh) + "x" + std::to_string(kw) + " pixels " +
                     std::to_string(pixels));
        const std::int64_t taps = std::int64_t{kh} * kw, wp = pixels + kw + 1, cstride = pixels * 16 + 24;
        std::vector<float> xrow(static_cast<std::size_t>(kh * wp * 16));
        for (std::size_t i = 0; i < xrow.size(); ++i) xrow[i] = static_cast<float>(i) * 0.5f + 1.0f;
        std::vector<float> col(static_cast<std::size_t>(taps * cstride), -3.0f);
        kernel(xrow.data(), wp, kh, kw, pixels, col.data(), cstride);
        std::vector<bool> written(col.size(), false);
        for (std::int64_t p = 0; p < pixels; ++p)
          for (std::int64_t c = 0; c < 16; ++c)
            for (std::int64_t t = 0; t < taps; ++t) {
              const std::int64_t j = c * taps + t;
              const auto at = static_cast<std::size_t>((j / 16) * cstride + p * 16 + j % 16);
              written[at] = true;
              ASSERT_EQ(col[at], xrow[static_cast<std::size_t>(((t / kw) * wp + p + t % kw) * 16 + c)])
                  << "pixel " << p << " channel " << c << " tap " << t;
            }
        for (std::size_t i = 0; i < col.size(); ++i)
          if (!written[i]) {
            ASSERT_EQ(col[i], -3.0f) << "written outside the columns at " << i;
          }
      }
}

// PadBlockKernel: pixel (iy, ix), lane l of the padded plane is channel l's pixel
// (lanes past `lanes` zero); full and partial channel blocks, planes whose pixel count
// is a multiple of 8 or not (the scalar tail), rows starting mid-transpose; the padding
// columns and rows around the interior untouched.
TEST(DirectInputLanesPadBlock, EveryKernelMatchesTheDefinition) {
  for (const auto& [name, kernel] : kernels_here(&taihu::dnn::conv::pad_block_generic,
                                                 &taihu::dnn::conv::pad_block_avx512))
    for (std::int64_t lanes : {16, 5, 9})
      for (const auto& [h, w] : std::vector<std::pair<std::int64_t, std::int64_t>>{{14, 14}, {7, 7}, {3, 8}, {1, 5}}) {
        SCOPED_TRACE(std::string(name) + " lanes " + std::to_string(lanes) + " plane " + std::to_string(h) + "x" +
                     std::to_string(w));
        const std::int64_t wp = w + 3, hp = h + 2;  // one padding row above and below, 2 + 1 columns
        std::vector<float> src(static_cast<std::size_t>(lanes * h * w));
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f + 1.0f;
        std::vector<float> plane(static_cast<std::size_t>(hp * wp * 16), -3.0f);
        kernel(src.data(), lanes, h, w, plane.data() + (wp + 2) * 16, wp);
        for (std::int64_t y = 0; y < hp; ++y)
          for (std::int64_t x = 0; x < wp; ++x)
            for (std::int64_t l = 0; l < 16; ++l) {
              const std::int64_t iy = y - 1, ix = x - 2;
              const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
              const float want = !inside     ? -3.0f
                                 : l < lanes ? src[static_cast<std::size_t>(l * h * w + iy * w + ix)]
                                             : 0.0f;
              ASSERT_EQ(plane[static_cast<std::size_t>((y * wp + x) * 16 + l)], want)
                  << "row " << y << " column " << x << " lane " << l;
            }
      }
}

}  // namespace
