// dnn's AVX-512 convolution kernels on any x86 CPU: their width-generic templates
// (dnn/src/conv/kernels/) instantiated with the AVX-512 vector traits, whose intrinsics
// run through SIMDe's emulation (built only where SIMDe's headers exist), against the
// same double-loop checks the real kernels pass in test_dnn_conv. On AVX-512 CPUs the
// real instructions are tested by test_dnn_conv under TAIHU_ISA=avx512.
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <gtest/gtest.h>

#include <cstring>

// SIMDe 0.7 has no masked 512-bit float load or store: lane by lane, as Intel documents
// them (masked-off lanes are neither read nor written; the load zeroes them).
static inline simde__m512 emulated_maskz_loadu_ps(simde__mmask16 m, const void* p) {
  float r[16];
  for (int i = 0; i < 16; ++i) r[i] = ((m >> i) & 1) ? static_cast<const float*>(p)[i] : 0.0f;
  simde__m512 out;
  std::memcpy(&out, r, 64);
  return out;
}
static inline void emulated_mask_storeu_ps(void* p, simde__mmask16 m, simde__m512 v) {
  float r[16];
  std::memcpy(r, &v, 64);
  for (int i = 0; i < 16; ++i)
    if ((m >> i) & 1) static_cast<float*>(p)[i] = r[i];
}
#define _mm512_maskz_loadu_ps emulated_maskz_loadu_ps
#define _mm512_mask_storeu_ps emulated_mask_storeu_ps

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/direct_bwdw_tile.hpp"
#include "conv/kernels/pointwise_tile.hpp"
#include "pointwise_kernel_check.hpp"

namespace {

using taihu::dnn::conv::kPwPixelsAvx512;

TEST(DnnConvAvx512Emulated, PointwiseTileMatchesTheDefinition) {
  pointwise_kernel_check::several_tiles_match_definition(
      &taihu::dnn::conv::kernels::pw_fwd_simd<taihu::dnn::conv::kernels::VecAvx512, 2, kPwPixelsAvx512 / 16>,
      kPwPixelsAvx512, 16);
}

// The direct backward-weights tile (DirectBwdwArgs: 9..16 channels, 1..6 columns,
// images x rows x run pixels, odd and even runs so the two accumulator sets both end a
// row) against dw += the double sum, on a dw with padding columns that must stay.
TEST(DnnConvAvx512Emulated, DirectBackwardWeightsTileMatchesTheDefinition) {
  using taihu::dnn::conv::DirectBwdwArgs;
  const std::int64_t kpad = 24, images = 2, rows = 3, x_row = 40, x_image = 200, dyt_row = 9 * kpad;
  const std::int64_t dyt_image = rows * dyt_row + kpad, dw_k = 10;
  const std::int64_t col_off[6] = {0, 1, 2, 40, 41, 83};
  const auto dyt = pointwise_kernel_check::random_floats(static_cast<std::size_t>(images * dyt_image), 61);
  const auto x = pointwise_kernel_check::random_floats(static_cast<std::size_t>(images * x_image + 100), 62);
  const auto dw0 = pointwise_kernel_check::random_floats(static_cast<std::size_t>(16 * dw_k), 63);
  for (int channels : {9, 16})
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
        for (int m = 0; m < 16; ++m)
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

}  // namespace
