// The nChw16c input-lanes backward-weights tile's contract (pointwise_blocked_kernels.hpp's
// PwbBwdwXArgs) checked against a double loop: every (input blocks, output rows) shape
// of the tile, the last block whole or partial (lanes past it must stay as they were),
// rows starting mid-block (k0 % 16 = 8), a pixel run odd and shorter or longer than the
// kernel's unroll, one run or several runs of pixels with gaps between them (the rows
// of a padded plane), from zero or added to dw, and the next tile's prefetch pointer and
// the x / dY prefetches set or not; and streaming stores into aligned dw rows. Up to
// MaxVecs x MaxRows: the 3 x 8 tile, or the 1 x 16 one (rows past 8 only from k0 = 0,
// inside one dY block). Header-only: test_pointwise.cpp runs it on the real kernels,
// test_conv_avx512_emulated.cpp on the AVX-512 template through SIMDe.
#pragma once
#include <gtest/gtest.h>

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_check_random.hpp"
#include "pointwise_blocked_kernels.hpp"

namespace pointwise_bwdw_x_check {

template <int MaxVecs = taihu::dnn::conv::kPwb16XVecs, int MaxRows = taihu::dnn::conv::kPwb16XRows,
          class Kernel>
void every_tile_matches_definition(Kernel kernel) {
  using taihu::dnn::conv::PwbBwdwXArgs;
  using index_t = std::int64_t;
  constexpr index_t B = 16, ldw = MaxVecs * B + 5, dw_rows = 2 * MaxRows;
  const auto dw0 = kernel_check::random_floats(static_cast<std::size_t>(dw_rows * ldw), 61);
  for (index_t runs : {index_t{1}, index_t{3}})
  for (index_t pixels : {index_t{1}, index_t{2}, index_t{7}, index_t{19}}) {
    // floats between runs (a gap of 2 pixels in x, 1 in dy, that must not be read)
    const index_t xr = runs == 1 ? pixels * B : (pixels + 2) * B, dr = runs == 1 ? pixels * B : (pixels + 1) * B;
    const auto x = kernel_check::random_floats(static_cast<std::size_t>(MaxVecs * runs * xr), 62);
    const auto dy = kernel_check::random_floats(static_cast<std::size_t>(runs * dr), 63);
    for (int vecs = 1; vecs <= MaxVecs; ++vecs)
      for (int rows = 1; rows <= MaxRows; ++rows)
        for (int last_lanes : {16, 5})
          for (index_t k0 : {index_t{0}, index_t{8}})
            for (bool accumulate : {false, true}) {
              if (k0 + rows > B) continue;  // (the tile's rows lie in one dY block)
              SCOPED_TRACE("runs " + std::to_string(runs) + " pixels " + std::to_string(pixels) + " vecs " + std::to_string(vecs) + " rows " +
                           std::to_string(rows) + " last_lanes " + std::to_string(last_lanes) + " k0 " +
                           std::to_string(k0) + " accumulate " + std::to_string(accumulate));
              std::vector<float> dw = dw0;
              PwbBwdwXArgs a{};
              a.x = x.data();
              a.x_bstride = runs * xr;
              a.runs = runs;
              a.x_rstride = xr;
              a.dy_rstride = dr;
              a.vecs = vecs;
              a.last_lanes = last_lanes;
              a.dy = dy.data() + k0;
              a.rows = rows;
              a.pixels = pixels;
              a.dw = dw.data() + ldw;  // row 0 of the tile is dw's row 1
              a.ldw = ldw;
              a.accumulate = accumulate;
              a.next_dw = k0 == 0 ? dw.data() + ldw + MaxRows * ldw / 2 : nullptr;
              a.prefetch_ahead = accumulate ? 4 : 0;  // (reads past the run: prefetches only)
              a.next_dy = accumulate && runs == 1 ? x.data() : nullptr;
              kernel(a);
              for (index_t r = 0; r < dw_rows; ++r)
                for (index_t c = 0; c < ldw; ++c) {
                  const auto at = static_cast<std::size_t>(r * ldw + c);
                  const index_t j = r - 1;
                  const bool inside = j >= 0 && j < rows && c < (vecs - 1) * B + last_lanes;
                  if (!inside) {
                    EXPECT_EQ(dw[at], dw0[at]) << "row " << r << " column " << c << " written";
                    continue;
                  }
                  double want = accumulate ? dw0[at] : 0.0;
                  for (index_t r2 = 0; r2 < runs; ++r2)
                    for (index_t p = 0; p < pixels; ++p)
                      want += double(dy[static_cast<std::size_t>(r2 * dr + p * B + k0 + j)]) *
                              x[static_cast<std::size_t>(c / B * runs * xr + r2 * xr + p * B + c % B)];
                  EXPECT_NEAR(dw[at], want, 1e-5) << "row " << j << " column " << c;
                }
            }
  }
  // Streaming stores (stream: whole vectors, 64-byte aligned rows, not accumulating; the
  // partial last vector stays a masked store), every tile shape.
  constexpr index_t lds = MaxVecs * B + B;  // a multiple of 16 floats: aligned rows
  std::vector<float> buf(static_cast<std::size_t>(MaxRows * lds + 16));
  float* dws = buf.data() + (16 - reinterpret_cast<std::uintptr_t>(buf.data()) / 4 % 16) % 16;
  const index_t pixels = 5;
  const auto x = kernel_check::random_floats(static_cast<std::size_t>(MaxVecs * pixels * B), 64);
  const auto dy = kernel_check::random_floats(static_cast<std::size_t>(pixels * B), 65);
  for (int vecs = 1; vecs <= MaxVecs; ++vecs)
    for (int rows = 1; rows <= MaxRows; ++rows)
      for (int last_lanes : {16, 5}) {
        SCOPED_TRACE("stream vecs " + std::to_string(vecs) + " rows " + std::to_string(rows) + " last_lanes " +
                     std::to_string(last_lanes));
        std::fill(dws, dws + MaxRows * lds, -3.0f);
        PwbBwdwXArgs a{};
        a.x = x.data();
        a.x_bstride = pixels * B;
        a.vecs = vecs;
        a.last_lanes = last_lanes;
        a.dy = dy.data();
        a.rows = rows;
        a.pixels = pixels;
        a.dw = dws;
        a.ldw = lds;
        a.stream = true;
        kernel(a);
        _mm_sfence();
        for (index_t j = 0; j < MaxRows; ++j)
          for (index_t c = 0; c < lds; ++c) {
            const float got = dws[j * lds + c];
            if (!(j < rows && c < (vecs - 1) * B + last_lanes)) {
              EXPECT_EQ(got, -3.0f) << "row " << j << " column " << c << " written";
              continue;
            }
            double want = 0.0;
            for (index_t p = 0; p < pixels; ++p)
              want += double(dy[static_cast<std::size_t>(p * B + j)]) *
                      x[static_cast<std::size_t>(c / B * pixels * B + p * B + c % B)];
            EXPECT_NEAR(got, want, 1e-5) << "row " << j << " column " << c;
          }
      }
}

}  // namespace pointwise_bwdw_x_check
