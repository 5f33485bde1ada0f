// The 1x1 forward micro-kernel's contract (pointwise_kernels.hpp's PwFwdArgs) checked
// against a double loop: several 4-channel tiles per call (odd and even counts, so
// kernels that pair tiles end on a single one too), the last tile partial, weights a
// padded tile stride apart, the first tile copying the strip (the later ones reading
// the copy), bias, accumulation, both, and the fused ReLU, prefetch rows running on
// across tiles; nothing
// written past the valid rows and pixels, the copy exact and zero up to the last
// vector. Header-only: test_pointwise.cpp runs it on the real kernels,
// test_conv_avx512_emulated.cpp on the AVX-512 tile through SIMDe.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_check_random.hpp"
#include "pointwise_kernels.hpp"

namespace pointwise_kernel_check {

using kernel_check::random_floats;

// kernel: the entry point; width: its strip width (copy row length); lanes: its vector width.
template <class Kernel>
void several_tiles_match_definition(Kernel kernel, int width, int lanes) {
  using taihu::dnn::conv::kPwRows;
  using index_t = std::int64_t;
  const index_t channels = 37, x_cstride = 50, y_kstride = 40, w_tstride = channels * kPwRows + 8;
  const index_t max_tiles = 5;
  const auto x = random_floats(static_cast<std::size_t>(channels * x_cstride), 51);
  const auto w = random_floats(static_cast<std::size_t>(max_tiles * w_tstride), 52);
  const auto bias = random_floats(static_cast<std::size_t>(max_tiles * kPwRows), 53);
  const auto y0 = random_floats(static_cast<std::size_t>(max_tiles * kPwRows * y_kstride), 54);
  std::vector<int> pixel_counts{width, width - 5, lanes, 5, 1};
  if (width > lanes + 3) pixel_counts.push_back(lanes + 3);
  for (index_t tiles : {index_t{1}, index_t{2}, index_t{3}, index_t{4}, index_t{5}})
    for (int pixels : pixel_counts)
      for (int rows_last : {1, 3, 4})
        for (int mode = 0; mode < 4; ++mode) {
          // 0: y = tile + bias; 1: y += tile; 2: y += tile + bias, ReLU (the fused sum and
          // ReLU post-ops); 3: y = tile, ReLU.
          const bool accumulate = mode == 1 || mode == 2, use_bias = mode == 0 || mode == 2, relu = mode >= 2;
          SCOPED_TRACE("tiles " + std::to_string(tiles) + " pixels " + std::to_string(pixels) + " rows_last " +
                       std::to_string(rows_last) + " mode " + std::to_string(mode));
          std::vector<float> y = y0, copy(static_cast<std::size_t>(channels * width), -7.0f);
          taihu::dnn::conv::PwFwdArgs a{};
          a.x = x.data();
          a.x_cstride = x_cstride;
          a.x_copy = copy.data();
          a.channels = channels;
          a.w = w.data();
          a.w_cstride = kPwRows;
          a.w_tile_stride = w_tstride;
          a.y = y.data();
          a.y_kstride = y_kstride;
          a.rows = rows_last;
          a.pixels = pixels;
          a.bias = use_bias ? bias.data() : nullptr;
          a.accumulate = accumulate;
          a.relu = relu;
          a.prefetch = x.data();
          a.prefetch_rows = 6;
          a.prefetch_stride = x_cstride;
          a.tiles = static_cast<int>(tiles);
          a.y_prefetch_ahead = 8;
          kernel(a);
          int bad = 0;
          for (index_t t = 0; t < max_tiles; ++t)
            for (index_t m = 0; m < kPwRows; ++m)
              for (index_t p = 0; p < y_kstride; ++p) {
                const auto at = static_cast<std::size_t>((t * kPwRows + m) * y_kstride + p);
                const bool valid = p < pixels && t < tiles && (t < tiles - 1 || m < rows_last);
                if (!valid) {
                  if (y[at] != y0[at] && bad++ < 5)
                    ADD_FAILURE() << "tile " << t << " row " << m << " pixel " << p << " written";
                  continue;
                }
                double want = (accumulate ? y0[at] : 0.0) + (use_bias ? bias[static_cast<std::size_t>(t * kPwRows + m)] : 0.0);
                for (index_t c = 0; c < channels; ++c)
                  want += double(w[static_cast<std::size_t>(t * w_tstride + c * kPwRows + m)]) *
                          x[static_cast<std::size_t>(c * x_cstride + p)];
                if (relu && want < 0) want = 0;
                if (std::abs(y[at] - want) > 1e-4 && bad++ < 5)
                  ADD_FAILURE() << "tile " << t << " row " << m << " pixel " << p << ": " << y[at] << " vs " << want;
              }
          for (index_t c = 0; c < channels; ++c)
            for (index_t p = 0; p < width; ++p) {
              const float got = copy[static_cast<std::size_t>(c * width + p)];
              if (p < pixels) {
                EXPECT_EQ(got, x[static_cast<std::size_t>(c * x_cstride + p)]) << "copy channel " << c << " pixel " << p;
              } else if (p < (pixels + lanes - 1) / lanes * lanes) {
                EXPECT_EQ(got, 0.0f) << "copy channel " << c << " pixel " << p << " past the strip";
              }
            }
        }
}

}  // namespace pointwise_kernel_check
