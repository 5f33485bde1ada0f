// Micro-kernels of the weights-lanes direct convolution (conv_direct_weight_lanes.cpp),
// the form oneDNN's jit_avx512_core forward takes on nChw16c for small images: output
// channels in the vector lanes (the packed weights are loaded as vectors), the input
// broadcast, and a tile of output pixels as the register tile's other dimension:
//   y[k0 .. k0 + kWlBlock)[pixel] += sum over channels c and taps (r, s) of
//     w[k0 .. k0 + kWlBlock)[c][r][s] * xpad[c][row + r][col + s]
// One call reduces `channels` input channels over the kh x kw taps for a tile of
// `rows` (1..kWlRows) output rows x `cols` (1..kWlCols) consecutive output columns
// (AVX-512: 2 vectors of 16 output channels x 2 rows x 7 columns = 28 zmm accumulate;
// per (channel, tap) 2 weight loads and 14 broadcasts feed 28 FMAs).
// Contract: stride 1, dilation 1. x points at the tile's first input pixel (its top-left
// tap) in a zero-padded plane, so every tap reads inside it; w at the chunk's packed
// weights [channel][r][s][kWlBlock] (output channels past k zero); y at the tile's first
// pixel of the block-interleaved output [pixel][kWlBlock] (a row y_rstride floats on).
// With accumulate y is added to, else the tile starts from bias (kWlBlock floats) or 0.
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

constexpr int kWlBlock = 32;  // output channels per tile (2 vectors of 16)
constexpr int kWlRows = 2, kWlCols = 7;

struct WlFwdArgs {
  const float* x;
  std::int64_t x_cstride;  // floats between the padded planes of consecutive channels
  std::int64_t x_rstride;  // floats between padded rows (the padded width)
  const float* w;
  std::int64_t channels;
  int kh, kw;
  float* y;
  std::int64_t y_rstride;  // floats between the tile's output rows in y
  int rows, cols;
  const float* bias;  // used when !accumulate; null: zero
  bool accumulate;
};

using WlFwdKernel = void (*)(const WlFwdArgs&);
void wl_fwd_avx512(const WlFwdArgs& a);
void wl_fwd_generic(const WlFwdArgs& a);

}  // namespace taihu::dnn::conv
