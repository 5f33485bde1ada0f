// Micro-kernels of the 1x1 convolution on nChw8c / nChw16c activations
// (conv_pointwise_blocked.cpp), one set per (ISA, block width B):
// pointwise_blocked_kernels_<isa>.cpp for nChw8c, kernels/avx512/ for nChw16c (the
// width-generic tiles of kernels/pointwise_blocked_tile.hpp). Described for nChw8c
// below; nChw16c is the same with 16 lanes (AVX-512: 4 output blocks x 6 pixels, 4
// vectors of dY x 6 input channels). In nChw8c a pixel's 8 channels
// of a block are one vector, so a 1x1 layer is Y[kb][p][:] = sum_c W[kb*8 + :][c] X[c][p]
// with the input values broadcast and the weights loaded as vectors of 8 output channels:
//   forward: a tile of nb (1..4) output blocks x 3 consecutive pixels (a 1-2 pixel tail
//     at a run's end), reduced over whole input blocks: per input channel 3 broadcasts
//     and nb weight vectors feed 3 nb FMAs (12 accumulators + 3 + 1 = 16 ymm). Weights
//     packed [channel][nb * 8] once per weight version; written to the nChw8c output
//     directly (no transposes). Backward-data is the same tile on W^T.
//   backward-weights: dW[k][c] = sum_p dY[k][p] X[c][p]: a tile of nb (1..4) vectors of
//     8 output channels (dY, contiguous per pixel) x up to 3 input channels (broadcast),
//     reduced over a run of pixels and added to a tile-major accumulator.
// Contract: padded channels (past c or k in the last block) must be zero in x / dy and
// in the packed weights; only the run's pixels are read and written.
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

constexpr int kPwbBlocks = 4, kPwbPixels = 3, kPwbCols = 3;
// nChw16c (AVX-512): output blocks, pixels per forward tile, input channels per
// backward-weights tile.
constexpr int kPwb16Blocks = 4, kPwb16Pixels = 6, kPwb16Cols = 6;

struct PwbFwdArgs {
  const float* x;          // nChw8c input at (block 0, first pixel)
  std::int64_t x_bstride;  // floats between input channel blocks (plane * 8)
  std::int64_t cblocks;    // input blocks to reduce
  const float* w;          // packed [cblocks * 8][nb * 8]
  float* y;                // nChw8c output at (the tile's first block, first pixel)
  std::int64_t y_bstride;
  int nb;               // output blocks, 1..kPwbBlocks
  std::int64_t pixels;  // consecutive pixels of the run
  const float* bias;    // nb * 8 values used when !accumulate, or null (zero)
  bool accumulate;      // y += tile
  bool prefetch_x;      // pull the input two tiles ahead into L1 (the first sweep
                        //   of a chunk reads it from memory)
  const float* next_w = nullptr;    // the next run's packed weights, prefetched into L2
  std::int64_t next_w_floats = 0;   //   over this run's tiles (null: none)
};

struct PwbBwdwArgs {
  const float* dy;  // nChw8c dY at (the tile's first block, first pixel)
  std::int64_t dy_bstride;
  int nb;          // vectors of 8 output channels, 1..kPwbBlocks
  const float* x;  // nChw8c x at (block 0, first pixel)
  std::int64_t x_bstride;
  std::int64_t c0;  // first input channel of the tile
  int cols;         // input channels c0.. of the tile, 1..kPwbCols
  std::int64_t pixels;
  float* acc;                // channel c0 + j's dW vector b at acc + j * acc_cstride + b * 8
  std::int64_t acc_cstride;  //   (added to, or overwritten when zero_init)
  bool zero_init;            // the tile starts from zero (the first pass), not from acc
};

// dw[l * ldd + c] (+)= acc[c * G + l] for l < rows (<= G), c < cols: a G-channel group
// (32 for nChw8c, 64 for nChw16c) of the backward-weights accumulator into OIHW dw
// (8x8 transposes on AVX2 and AVX-512).
using PwbDwStoreKernel = void (*)(const float* acc, std::int64_t G, std::int64_t rows, std::int64_t cols,
                                  float* dw, std::int64_t ldd, bool accumulate);

using PwbFwdKernel = void (*)(const PwbFwdArgs&);
using PwbBwdwKernel = void (*)(const PwbBwdwArgs&);

void pwb_fwd_generic(const PwbFwdArgs& a);
void pwb_fwd_avx2(const PwbFwdArgs& a);
void pwb_bwdw_generic(const PwbBwdwArgs& a);
void pwb_bwdw_avx2(const PwbBwdwArgs& a);
void pwb_dw_store_generic(const float* acc, std::int64_t G, std::int64_t rows, std::int64_t cols, float* dw,
                          std::int64_t ldd, bool accumulate);
void pwb_dw_store_avx2(const float* acc, std::int64_t G, std::int64_t rows, std::int64_t cols, float* dw,
                       std::int64_t ldd, bool accumulate);

// nChw16c (B = 16): the generic loops at 16 lanes, and AVX-512's tiles.
void pwb16_fwd_generic(const PwbFwdArgs& a);
void pwb16_bwdw_generic(const PwbBwdwArgs& a);
void pwb16_fwd_avx512(const PwbFwdArgs& a);
void pwb16_bwdw_avx512(const PwbBwdwArgs& a);

}  // namespace taihu::dnn::conv
