// Register-blocked micro-kernels of the direct convolution (conv_direct.cpp), one set
// per ISA (direct_kernels_<isa>.cpp). Both work on NCHW data vectorised along output
// pixels, so neither operand is ever packed at run time:
//   forward: a tile of `rows` (<= 4) output channels x `lanes` (<= 24) consecutive
//     output pixels of one row; the input window is read in place from the
//     phase-split padded input (x + c*chan_stride + tap_off[t] + pixel), the weights
//     are broadcast from the block packed once as [channel][tap][4].
//   backward-weights: a tile of `rows` (<= 3) output channels x `cols` (<= 4) weight
//     columns (channel, tap), reduced over output pixels [x0, x1) of `out_rows` rows
//     with 8-lane accumulators (dy and the input both contiguous along the pixels),
//     then summed horizontally and added to dw.
// Contract: lanes beyond the valid range are never read (masked loads) nor written.
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

struct DirectFwdArgs {
  const float* x;               // input at (first channel of the block, row, first pixel)
  std::int64_t channels;        // channels in this reduction block
  std::int64_t chan_stride;     // distance between input channels
  const std::int64_t* tap_off;  // offset of each kernel tap (r, s) from x
  std::int64_t taps;            // kh * kw
  const float* w;               // packed [channels][taps][4]
  const float* bias;            // rows values added when !accumulate, or null
  float* y;                     // output at (first channel, row, first pixel)
  std::int64_t y_kstride;       // distance between output channels
  int rows;                     // valid output channels, 1..4
  int lanes;                    // valid pixels, 1..24
  bool accumulate;              // y += tile instead of y = tile (+ bias)
};

struct DirectBwdwArgs {
  const float* dy;              // dy at (first channel, first row, pixel 0)
  std::int64_t dy_kstride;      // distance between dy channels
  std::int64_t dy_row_stride;   // distance between dy rows
  const float* x;               // input at the first row's window origin
  const std::int64_t* col_off;  // offset of each weight column (channel, tap) from x
  std::int64_t x_row_stride;    // input distance per output row
  std::int64_t out_rows;        // rows to reduce over
  std::int64_t x0, x1;          // pixel range within each row
  float* dw;                    // dw at (first channel, first column)
  std::int64_t dw_kstride;      // distance between dw rows
  int rows;                     // output channels, 1..3
  int cols;                     // weight columns, 1..4
};

using DirectFwdKernel = void (*)(const DirectFwdArgs&);
using DirectBwdwKernel = void (*)(const DirectBwdwArgs&);

void direct_fwd_generic(const DirectFwdArgs& a);
void direct_fwd_avx2(const DirectFwdArgs& a);
void direct_bwdw_generic(const DirectBwdwArgs& a);
void direct_bwdw_avx2(const DirectBwdwArgs& a);

}  // namespace taihu::dnn::conv
