// Micro-kernels of the 1x1 convolution on nChw8c / nChw16c activations
// (conv_pointwise_blocked.cpp), one set per (ISA, block width B):
// pointwise_blocked_kernels_<isa>.cpp for nChw8c, kernels/avx512/ for nChw16c (the
// width-generic tiles of kernels/pointwise_blocked_tile.hpp). Described for nChw8c
// below; nChw16c's forward is the same with 16 lanes (AVX-512: 4 output blocks x 6
// pixels), its backward-weights the input-lanes tile further down. In nChw8c a pixel's 8 channels
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
// nChw16c backward-weights takes the transposed ("input-lanes") form instead, as
// oneDNN's avx512_core 1x1 does: dW[k][c..c+15] += dY[k][p] (broadcast) * X[c..c+15][p]
// (a pixel's input block is one vector), a tile of up to 3 input vectors x 8 output
// channels (24 zmm) kept in registers over the whole pixel run and written straight
// into OIHW dw rows (no accumulator buffer, no transposing store).
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

constexpr int kPwbBlocks = 4, kPwbPixels = 3, kPwbCols = 3;
// nChw16c (AVX-512): output blocks and pixels per forward tile.
constexpr int kPwb16Blocks = 4, kPwb16Pixels = 6;

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

// The input-lanes backward-weights tile (nChw16c): dw[k0 + j][c + 16 v + l] (+)=
// sum_p dY[k0 + j][p] X[c + 16 v + l][p] for j < rows, v < vecs, l < W (the last
// vector's l < last_lanes: lanes past the layer's channels are not written).
struct PwbBwdwXArgs {
  const float* x;  // nChw16c x at (the tile's first input block, first pixel)
  std::int64_t x_bstride;
  int vecs;        // input blocks of the tile, 1..kPwb16XVecs
  int last_lanes;  // channels of the last block written, 1..16
  const float* dy;  // nChw16c dY at (block of k0, first pixel, lane k0 % 16)
  int rows;         // output channels k0.., 1..kPwb16XRows, all in dy's block (k0 % 16 + rows <= 16)
  std::int64_t pixels;
  float* dw;         // OIHW dw at (k0, the tile's first input channel)
  std::int64_t ldw;  // floats between dw rows (the layer's input channels)
  bool accumulate;   // dw += tile, else dw = tile
  const float* next_dw = nullptr;  // the next tile's dw (rows x vecs vectors, same ldw),
                                   //   pulled into L1 for writing meanwhile (null: none)
  // The reduction runs over `runs` runs of `pixels` consecutive pixels, run r's at x +
  // r * x_rstride and dy + r * dy_rstride (the rows of a padded plane: the direct
  // input-lanes backward-weights, conv_direct_input_lanes.cpp); 1x1 layers take one run.
  std::int64_t runs = 1;
  std::int64_t x_rstride = 0, dy_rstride = 0;
  // Software prefetches (results unchanged; 0 / null: none): each pixel pulls the x
  // and dY lines prefetch_ahead pixels on into L1, and next_dy's line of the same pixel
  // offset into L2 (a dY run the next tiles will read; only with runs == 1).
  std::int64_t prefetch_ahead = 0;
  const float* next_dy = nullptr;
  // Store the tile's whole vectors with non-temporal stores (needs !accumulate and dw
  // rows 64-byte aligned; the caller fences): dw written once, not read back soon.
  bool stream = false;
};
constexpr int kPwb16XVecs = 3, kPwb16XRows = 8;
// The tile's other shape, 1 input block x up to 16 output channels (a whole dY block:
// k0 % 16 + rows <= 16 as above), pwb16_bwdw_x16_*: its 16 accumulators take the dY
// values as embedded broadcasts (AMD's 1x1 path on small planes,
// conv_pointwise_blocked.cpp).
constexpr int kPwb16XWideRows = 16;

// What the input-lanes tile's callers (the 1x1 path, conv_pointwise_blocked.cpp, and
// direct_input_lanes' column form) set alike, decided here once
// (conv_pointwise_blocked.cpp has the measurements):
// pwb_bwdw_x_prefetch_ahead() for PwbBwdwXArgs::prefetch_ahead, and whether a dw of
// k rows x cols floats, written in one pass (the caller's condition), goes out through
// streaming stores (PwbBwdwXArgs::stream; the caller then leaves next_dw null and fences).
std::int64_t pwb_bwdw_x_prefetch_ahead();
bool pwb_bwdw_x_streams(const float* dw, std::int64_t k, std::int64_t cols, bool accumulate);

// The direct input-lanes backward-weights' store of a unit's rows (conv_direct_input_
// lanes.cpp): dst[c * taps + t] (+)= src[t * tap_stride + c] for c < channels, t < taps
// (one OIHW dw row's run of channels x taps from the per-tap tiles). AVX-512 moves 16
// channels x 16 taps through one register transpose.
using TapInterleaveKernel = void (*)(const float* src, std::int64_t tap_stride, std::int64_t taps,
                                     std::int64_t channels, float* dst, bool accumulate);
void tap_interleave_generic(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                            float* dst, bool accumulate);
void tap_interleave_avx512(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                           float* dst, bool accumulate);

// dw[l * ldd + c] (+)= acc[c * G + l] for l < rows (<= G), c < cols: a G-channel group
// (32 for nChw8c) of the backward-weights accumulator into OIHW dw (8x8 transposes on
// AVX2).
using PwbDwStoreKernel = void (*)(const float* acc, std::int64_t G, std::int64_t rows, std::int64_t cols,
                                  float* dw, std::int64_t ldd, bool accumulate);

using PwbFwdKernel = void (*)(const PwbFwdArgs&);
using PwbBwdwKernel = void (*)(const PwbBwdwArgs&);
using PwbBwdwXKernel = void (*)(const PwbBwdwXArgs&);

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
void pwb16_fwd_avx512(const PwbFwdArgs& a);
// The same with its whole 4 x 6 tile in inline assembly (the tails as pwb16_fwd_avx512).
void pwb16_fwd_avx512_asm(const PwbFwdArgs& a);
void pwb16_bwdw_x_generic(const PwbBwdwXArgs& a);
void pwb16_bwdw_x_avx512(const PwbBwdwXArgs& a);
// The 1 x kPwb16XWideRows input-lanes tile (vecs == 1, rows 1..16); the generic loops
// (pwb16_bwdw_x_generic) take any shape.
void pwb16_bwdw_x16_avx512(const PwbBwdwXArgs& a);

// The bias gradient's sums over one nChw16c block: s[l] += sum over p < pixels of
// dy[p * 16 + l], l < 16. Runs of 8 consecutive pixels are summed in float, in pixel
// order, and each run's sum is added to s in double: the same order (bitwise the same
// s) on every ISA.
using PwbBiasSumsKernel = void (*)(const float* dy, std::int64_t pixels, double* s);
void pwb16_bias_sums_generic(const float* dy, std::int64_t pixels, double* s);
void pwb16_bias_sums_avx512(const float* dy, std::int64_t pixels, double* s);

}  // namespace taihu::dnn::conv
