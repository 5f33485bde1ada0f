// dnn's AVX-512 convolution kernels on any x86 CPU: their width-generic templates
// (dnn/src/conv/kernels/) instantiated with the AVX-512 vector traits, whose intrinsics
// run through SIMDe's emulation (built only where SIMDe's headers exist), against the
// same double-loop checks the real kernels pass in test_dnn_conv. On AVX-512 CPUs the
// real instructions are tested by test_dnn_conv under TAIHU_ISA=avx512.
#include "simde_avx512_shims.hpp"  // first: the kernels below see the emulation

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/direct_bwdw_tile.hpp"
#include "conv/kernels/direct_ocv_tile.hpp"
#include "conv/kernels/input_lanes_tile.hpp"
#include "conv/kernels/pointwise_blocked_tile.hpp"
#include "conv/kernels/pointwise_tile.hpp"
#include "pointwise_blocked_fwd_check.hpp"
#include "pointwise_bwdw_x_check.hpp"
#include "pointwise_kernel_check.hpp"

namespace {

using taihu::dnn::conv::kPwPixelsAvx512;

TEST(DnnConvAvx512Emulated, PointwiseTileMatchesTheDefinition) {
  pointwise_kernel_check::several_tiles_match_definition(
      &taihu::dnn::conv::kernels::pw_fwd_simd<taihu::dnn::conv::kernels::VecAvx512, 2, kPwPixelsAvx512 / 16>,
      kPwPixelsAvx512, 16);
}

// The direct backward-weights tile (DirectBwdwArgs: 9..64 channels: 1 to 4 vectors,
// the last partial or whole, 1..6 columns,
// images x rows x run pixels, odd and even runs so the two accumulator sets both end a
// row) against dw += the double sum, on a dw with padding columns that must stay.
TEST(DnnConvAvx512Emulated, DirectBackwardWeightsTileMatchesTheDefinition) {
  using taihu::dnn::conv::DirectBwdwArgs;
  const std::int64_t kpad = 64, images = 2, rows = 3, x_row = 40, x_image = 200, dyt_row = 9 * kpad;
  const std::int64_t dyt_image = rows * dyt_row + kpad, dw_k = 10;
  const std::int64_t col_off[6] = {0, 1, 2, 40, 41, 83};
  const auto dyt = pointwise_kernel_check::random_floats(static_cast<std::size_t>(images * dyt_image), 61);
  const auto x = pointwise_kernel_check::random_floats(static_cast<std::size_t>(images * x_image + 100), 62);
  const auto dw0 = pointwise_kernel_check::random_floats(static_cast<std::size_t>(64 * dw_k), 63);
  for (int channels : {9, 16, 20, 32, 47, 64})
    for (int cols = 1; cols <= 6; ++cols)
      for (std::int64_t run : {std::int64_t{7}, std::int64_t{8}}) {
        SCOPED_TRACE("channels " + std::to_string(channels) + " cols " + std::to_string(cols) + " run " +
                     std::to_string(run));
        std::vector<float> dw = dw0;
        DirectBwdwArgs a{};
        a.dyt = dyt.data();
        a.kpad = kpad;
        a.x = x.data();
        a.col_off = col_off;
        a.images = images;
        a.rows = rows;
        a.run = run;
        a.x_image_stride = x_image;
        a.x_row_stride = x_row;
        a.dyt_image_stride = dyt_image;
        a.dyt_row_stride = dyt_row;
        a.dw = dw.data();
        a.dw_kstride = dw_k;
        a.channels = channels;
        a.cols = cols;
        taihu::dnn::conv::kernels::direct_bwdw_simd<taihu::dnn::conv::kernels::VecAvx512>(a);
        for (int m = 0; m < 64; ++m)
          for (int j = 0; j < dw_k; ++j) {
            const auto at = static_cast<std::size_t>(m * dw_k + j);
            if (m >= channels || j >= cols) {
              EXPECT_EQ(dw[at], dw0[at]) << "dw " << m << "," << j << " written";
              continue;
            }
            double want = dw0[at];
            for (std::int64_t n = 0; n < images; ++n)
              for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t i = 0; i < run; ++i)
                  want += double(dyt[static_cast<std::size_t>(n * dyt_image + r * dyt_row + i * kpad + m)]) *
                          x[static_cast<std::size_t>(n * x_image + r * x_row + col_off[j] + i)];
            EXPECT_NEAR(dw[at], want, 1e-4) << "dw " << m << "," << j;
          }
      }
}

// The first-layer forward tile (DirectOcvArgs, nb 4: 32 channels) over whole groups of
// 6 and 12 pixels, kernel rows unrolled (3x3, 7x7) or per tap (dilated), with and
// without row spans, from zero, the bias or the scratch (accumulate): the scratch slots
// of the groups it reports done against the double sum, the slots of the tiles left to
// the caller untouched.
// per_row pixels per output row, `stride` floats apart: 7 at 2 puts every 12-pixel group
// across rows (the per-pixel pointer form); 13 at 1, 2 or 4 gives whole groups inside
// one row (the constant-stride form) beside groups that cross.
// cols (stride 1): each output row is an image row of per_row pixels padded by kw / 2
// columns either side (those input columns zero, col_span set): the groups at a row's
// edges skip those taps, and every other tap must still be summed.
template <int NP>
void check_ocv32(int kw, bool dilated, bool spans, int mode, int stride = 2, int per_row = 7, bool cols = false) {
  using taihu::dnn::conv::DirectOcvArgs;
  const std::int64_t row = 40, cs = 40 * 30, channels = 2, taps = kw * kw, tiles = 9, pixels = tiles * 3;
  std::vector<std::int64_t> tap_off(static_cast<std::size_t>(taps)), x_off(static_cast<std::size_t>(pixels));
  for (int r = 0; r < kw; ++r)
    for (int c = 0; c < kw; ++c) tap_off[static_cast<std::size_t>(r * kw + c)] = (dilated ? 2 : 1) * (r * row + c);
  for (std::int64_t p = 0; p < pixels; ++p) x_off[static_cast<std::size_t>(p)] = (p / per_row) * 2 * row + (p % per_row) * stride + 1;
  std::vector<std::int16_t> span(static_cast<std::size_t>(2 * pixels));
  for (std::int64_t p = 0; p < pixels; ++p) {  // rows [p % 3, kw) inside: the rest multiply zero
    span[static_cast<std::size_t>(2 * p)] = static_cast<std::int16_t>(p % 3 < kw ? p % 3 : 0);
    span[static_cast<std::size_t>(2 * p + 1)] = static_cast<std::int16_t>(kw);
  }
  std::vector<std::int16_t> col_span(static_cast<std::size_t>(2 * pixels));
  const std::int64_t pad = kw / 2;
  for (std::int64_t p = 0; p < pixels; ++p) {  // kernel columns s with ox + s - pad inside [0, per_row)
    const std::int64_t ox = p % per_row;
    col_span[static_cast<std::size_t>(2 * p)] = static_cast<std::int16_t>(std::max<std::int64_t>(0, pad - ox));
    col_span[static_cast<std::size_t>(2 * p + 1)] = static_cast<std::int16_t>(std::min<std::int64_t>(kw, per_row + pad - ox));
  }
  auto x = pointwise_kernel_check::random_floats(static_cast<std::size_t>(channels * cs), 71);
  if (cols)  // the padding columns read zero
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t p = 0; p < pixels; ++p)
        for (int r = 0; r < kw; ++r)
          for (int s = 0; s < kw; ++s)
            if (s < col_span[static_cast<std::size_t>(2 * p)] || s >= col_span[static_cast<std::size_t>(2 * p + 1)])
              x[static_cast<std::size_t>(c * cs + tap_off[static_cast<std::size_t>(r * kw + s)] +
                                         x_off[static_cast<std::size_t>(p)])] = 0.0f;
  if (spans)  // rows outside a pixel's span read zero, as the padding does
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t p = 0; p < pixels; ++p)
        for (int r = 0; r < span[static_cast<std::size_t>(2 * p)]; ++r)
          for (int s = 0; s < kw; ++s)
            x[static_cast<std::size_t>(c * cs + tap_off[static_cast<std::size_t>(r * kw + s)] +
                                       x_off[static_cast<std::size_t>(p)])] = 0.0f;
  const auto w = pointwise_kernel_check::random_floats(static_cast<std::size_t>(channels * taps * 32), 72);
  const auto bias = pointwise_kernel_check::random_floats(32, 73);
  const std::int64_t bstride = pixels * 8 + 16;
  const auto acc0 = pointwise_kernel_check::random_floats(static_cast<std::size_t>(4 * bstride), 74);
  std::vector<float> acc = acc0;
  DirectOcvArgs a{};
  a.x = x.data();
  a.channels = channels;
  a.chan_stride = cs;
  a.tap_off = tap_off.data();
  a.taps = taps;
  a.kw_run = dilated ? 0 : kw;
  a.w = w.data();
  a.acc = acc.data();
  a.acc_bstride = bstride;
  a.nb = 4;
  a.x_off = x_off.data();
  a.row_span = spans ? span.data() : nullptr;
  a.col_span = cols ? col_span.data() : nullptr;
  a.tiles = static_cast<int>(tiles);
  a.accumulate = mode == 2;
  a.bias_init = mode == 1 ? bias.data() : nullptr;
  const int done = taihu::dnn::conv::kernels::ocv32<taihu::dnn::conv::kernels::VecAvx512, NP>(a);
  ASSERT_EQ(done, static_cast<int>(tiles) / (NP / 3) * (NP / 3));
  for (int b = 0; b < 4; ++b)
    for (std::int64_t p = 0; p < pixels; ++p)
      for (int l = 0; l < 8; ++l) {
        const auto at = static_cast<std::size_t>(b * bstride + p * 8 + l);
        if (p >= done * 3) {
          EXPECT_EQ(acc[at], acc0[at]) << "pixel " << p << " past the groups written";
          continue;
        }
        double want = mode == 2 ? acc0[at] : mode == 1 ? bias[static_cast<std::size_t>(b * 8 + l)] : 0.0;
        for (std::int64_t c = 0; c < channels; ++c)
          for (std::int64_t t = 0; t < taps; ++t)
            want += double(w[static_cast<std::size_t>((c * taps + t) * 32 + b * 8 + l)]) *
                    x[static_cast<std::size_t>(c * cs + tap_off[static_cast<std::size_t>(t)] +
                                               x_off[static_cast<std::size_t>(p)])];
        EXPECT_NEAR(acc[at], want, 1e-4) << "block " << b << " pixel " << p << " lane " << l;
      }
}

TEST(DnnConvAvx512Emulated, FirstLayerTileMatchesTheDefinition) {
  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE("mode " + std::to_string(mode));
    check_ocv32<6>(3, false, false, mode);
    check_ocv32<6>(3, false, true, mode);
    check_ocv32<6>(3, true, false, mode);
    check_ocv32<12>(7, false, true, mode);
    check_ocv32<12>(7, false, false, mode);
    for (int stride : {1, 2, 4}) {
      check_ocv32<12>(7, false, true, mode, stride, 13);
      check_ocv32<6>(5, false, false, mode, stride, 13);
      check_ocv32<12>(11, false, false, mode, stride, 13);
    }
    // Edge groups (5x5 and 3x3 at stride 1): left 2 / right 1 (13 per row), left 2 /
    // right 2 (12), left 1 / right 1 (3x3), with and without row spans.
    for (int per_row : {12, 13}) {
      check_ocv32<6>(5, false, false, mode, 1, per_row, true);
      check_ocv32<6>(5, false, true, mode, 1, per_row, true);
      check_ocv32<6>(3, false, false, mode, 1, per_row, true);
    }
  }
}

// The nChw16c 1x1 forward tiles through SIMDe; pointwise_blocked_fwd_check.hpp has the check.
TEST(DnnConvAvx512Emulated, PointwiseBlocked16ForwardMatchesTheDefinition) {
  pointwise_blocked_fwd_check::every_run_matches_definition(
      &taihu::dnn::conv::kernels::pwb_fwd_simd<taihu::dnn::conv::kernels::VecAvx512, taihu::dnn::conv::kPwb16Blocks,
                                               taihu::dnn::conv::kPwb16Pixels>);
}

// The nChw16c input-lanes backward-weights tiles (PwbBwdwXArgs: 1..3 input blocks x
// 1..8 output rows, the last block partial, rows from mid-block, from zero or added).
TEST(DnnConvAvx512Emulated, PointwiseBlocked16InputLanesBackwardWeightsMatchesTheDefinition) {
  pointwise_bwdw_x_check::every_tile_matches_definition(
      &taihu::dnn::conv::kernels::pwb_bwdw_x_simd<taihu::dnn::conv::kernels::VecAvx512,
                                                 taihu::dnn::conv::kPwb16XVecs, taihu::dnn::conv::kPwb16XRows>);
  // The 1 x 16 tile (1 input block x 1..16 output rows; AMD's small-plane 1x1 path).
  pointwise_bwdw_x_check::every_tile_matches_definition<1, taihu::dnn::conv::kPwb16XWideRows>(
      &taihu::dnn::conv::kernels::pwb_bwdw_x_simd<taihu::dnn::conv::kernels::VecAvx512, 1,
                                                 taihu::dnn::conv::kPwb16XWideRows>);
}

// direct_input_lanes' 3x3 tap permutes (input_lanes_tile.hpp) against their
// definitions: the dw rows' tap store dst[c * 9 + t] (+)= src[t * stride + c] over 3
// whole blocks, and the column build (column j = c * 9 + t of pixel p at block j / 16,
// lane j % 16 = the padded row's pixel p + tap t's offset, channel c). Exact moves.
struct EmulatedNt {
  static void stream(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
};

TEST(DnnConvAvx512Emulated, InputLanesTapPermutesMatchTheDefinition) {
  const std::int64_t stride = 53, channels = 48;
  std::vector<float> src(9 * stride);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.25f - 7.0f;
  for (bool accumulate : {false, true}) {
    std::vector<float> dst(channels * 9 + 5, 1.5f);
    taihu::dnn::conv::kernels::tap_store_blocks<9, EmulatedNt>(src.data(), stride, channels / 16, dst.data(),
                                                               accumulate, false);
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t t = 0; t < 9; ++t)
        ASSERT_EQ(dst[c * 9 + t], src[t * stride + c] + (accumulate ? 1.5f : 0.0f)) << c << " " << t;
    for (std::size_t i = channels * 9; i < dst.size(); ++i) ASSERT_EQ(dst[i], 1.5f);
  }
  const std::int64_t pixels = 7, wp = 10, cstride = pixels * 16 + 8;
  std::vector<float> xrow(3 * wp * 16);
  for (std::size_t i = 0; i < xrow.size(); ++i) xrow[i] = static_cast<float>(i) * 0.5f + 1.0f;
  std::vector<float> col(9 * cstride, -3.0f);
  taihu::dnn::conv::kernels::col_build_taps<3, 3>(xrow.data(), wp, pixels, col.data(), cstride);
  for (std::int64_t p = 0; p < pixels; ++p)
    for (std::int64_t c = 0; c < 16; ++c)
      for (std::int64_t t = 0; t < 9; ++t) {
        const std::int64_t j = c * 9 + t;
        ASSERT_EQ(col[(j / 16) * cstride + p * 16 + j % 16], xrow[((t / 3) * wp + p + t % 3) * 16 + c])
            << p << " " << c << " " << t;
      }
  for (std::int64_t q = 0; q < 9; ++q)
    for (std::int64_t i = pixels * 16; i < cstride; ++i) ASSERT_EQ(col[q * cstride + i], -3.0f);
}

// direct_input_lanes' one-pass x reorder into its padded plane (input_lanes_tile.hpp's
// pad_block_8x8): lane l of interior pixel (iy, ix) is channel l's pixel, zero past
// `lanes`; 7 x 7 pixels (the scalar tail after 6 transposes), the padding untouched.
TEST(DnnConvAvx512Emulated, InputLanesPadBlockMatchesTheDefinition) {
  const std::int64_t h = 7, w = 7, wp = 9, hp = 9, lanes = 11;
  std::vector<float> src(lanes * h * w);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f + 1.0f;
  std::vector<float> plane(hp * wp * 16, -3.0f);
  taihu::dnn::conv::kernels::pad_block_8x8(src.data(), lanes, h, w, plane.data() + (wp + 1) * 16, wp);
  for (std::int64_t y = 0; y < hp; ++y)
    for (std::int64_t x = 0; x < wp; ++x)
      for (std::int64_t l = 0; l < 16; ++l) {
        const std::int64_t iy = y - 1, ix = x - 1;
        const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
        const float want = !inside ? -3.0f : l < lanes ? src[l * h * w + iy * w + ix] : 0.0f;
        ASSERT_EQ(plane[(y * wp + x) * 16 + l], want) << y << " " << x << " " << l;
      }
}

}  // namespace
