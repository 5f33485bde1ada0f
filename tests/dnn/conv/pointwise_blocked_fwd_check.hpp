// The nChw16c 1x1 forward kernel's contract (pointwise_blocked_kernels.hpp's PwbFwdArgs)
// checked against a double loop: nb 1..4 output blocks, runs of 1..14 pixels (whole
// 6-pixel tiles and every tail), 2 input blocks, from zero, the bias or y (accumulate);
// the blocks and pixels past the run untouched. Header-only: test_pointwise.cpp runs it
// on the real kernels, test_conv_avx512_emulated.cpp on the AVX-512 template through
// SIMDe.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_check_random.hpp"
#include "pointwise_blocked_kernels.hpp"

namespace pointwise_blocked_fwd_check {

template <class Kernel>
void every_run_matches_definition(Kernel kernel) {
  using taihu::dnn::conv::PwbFwdArgs;
  constexpr int B = 16, NB = taihu::dnn::conv::kPwb16Blocks;
  const std::int64_t plane = 16, cblocks = 2;
  const auto x = kernel_check::random_floats(static_cast<std::size_t>(cblocks * plane * B), 81);
  const auto w = kernel_check::random_floats(static_cast<std::size_t>(cblocks * B * NB * B), 82);
  const auto bias = kernel_check::random_floats(NB * B, 83);
  const auto y0 = kernel_check::random_floats(static_cast<std::size_t>(NB * plane * B), 84);
  for (int nb = 1; nb <= NB; ++nb)
    for (std::int64_t pixels = 1; pixels <= 14; ++pixels)
      for (int mode = 0; mode < 3; ++mode) {
        SCOPED_TRACE("nb " + std::to_string(nb) + " pixels " + std::to_string(pixels) + " mode " +
                     std::to_string(mode));
        std::vector<float> y = y0;
        PwbFwdArgs a{};
        a.x = x.data();
        a.x_bstride = plane * B;
        a.cblocks = cblocks;
        a.w = w.data();
        a.y = y.data();
        a.y_bstride = plane * B;
        a.nb = nb;
        a.pixels = pixels;
        a.bias = mode == 1 ? bias.data() : nullptr;
        a.accumulate = mode == 2;
        a.prefetch_x = pixels % 2 == 0;
        kernel(a);
        for (int b = 0; b < NB; ++b)
          for (std::int64_t p = 0; p < plane; ++p)
            for (int l = 0; l < B; ++l) {
              const auto at = static_cast<std::size_t>((b * plane + p) * B + l);
              if (b >= nb || p >= pixels) {
                EXPECT_EQ(y[at], y0[at]) << "block " << b << " pixel " << p << " written";
                continue;
              }
              double want = mode == 2 ? y0[at] : mode == 1 ? bias[static_cast<std::size_t>(b * B + l)] : 0.0;
              for (std::int64_t c = 0; c < cblocks * B; ++c)
                want += double(w[static_cast<std::size_t>(c * nb * B + b * B + l)]) *
                        x[static_cast<std::size_t>((c / B * plane + p) * B + c % B)];
              EXPECT_NEAR(y[at], want, 1e-4) << "block " << b << " pixel " << p << " lane " << l;
            }
      }
}

}  // namespace pointwise_blocked_fwd_check
