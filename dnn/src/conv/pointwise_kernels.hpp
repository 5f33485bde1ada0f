// Micro-kernel of the 1x1 (pointwise) convolution, one set per ISA
// (pointwise_kernels_<isa>.cpp). A 1x1 stride-1 unpadded layer is the GEMM
// Y[k][p] = sum_c W[k][c] X[c][p] per image and group, and NCHW already stores X with
// the pixels contiguous:
//   forward: a tile of 4 output channels x up to 24 pixels (3 vectors) accumulated
//     over a block of input channels (x + c * x_cstride: the caller's L1-resident copy
//     of a pixel strip, or x in place): per channel three input vectors and four
//     weight broadcasts feed 12 FMAs; the weights are packed [channel][4] once per
//     weight version by the caller; `tiles` such tiles (consecutive output-channel
//     blocks) per call.
//   backward-weights: the same tile on the transposed operands, dW[k][c] =
//     sum_p dY^T[p][k] X^T[p][c]: "channels" are then pixels, x a strip of X^T
//     ([pixel][24 input channels]) and w a block of dY^T (w_cstride = its row length).
//   transpose: the 2-D transposes that build those strips (8x8 blocks on AVX2); pack4
//     the same into 4-row blocks (dY^T per 4-channel output block).
// Contract: only rows x pixels outputs are written; no input float past the given
// pixels is read.
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

constexpr int kPwRows = 4, kPwPixels = 24;  // tile: output channels x pixels (AVX2, generic)
// AVX-512's strips: 2 vectors of 16 (kernels/pointwise_tile.hpp); the driver takes the
// strip width from the kernel set, so `kPwPixels` below means that width.
constexpr int kPwPixelsAvx512 = 32;

struct PwFwdArgs {
  const float* x;            // input at (first channel of the block, first pixel)
  std::int64_t x_cstride;    // distance between input channels (the plane)
  float* x_copy;             // or null: the strip as read, to [channel][kPwPixels]
                             //   (zero past `pixels` up to the last vector) for the
                             //   later tiles
  std::int64_t channels;     // channels in this reduction block
  const float* w;            // packed [channels][w_cstride], kPwRows used (rows past
  std::int64_t w_cstride;    //   `rows` are ignored)
  float* y;                  // output at (first channel, first pixel)
  std::int64_t y_kstride;    // distance between output channels
  int rows;                  // valid output channels, 1..kPwRows
  int pixels;                // pixels in the strip, 1..kPwPixels
  const float* bias;         // `rows` values added, or null
  bool accumulate;           // y = y + tile (+ bias) instead of y = tile (+ bias)
  bool relu = false;         // then y = max(y, 0): a fused ReLU post-op (the caller sets
                             //   it on the call that completes the reduction)
  const float* prefetch;     // rows to pull into L1 meanwhile (2 lines each, one row per
  std::int64_t prefetch_rows;   // 8 channels), prefetch_stride apart; 0 rows: none
  std::int64_t prefetch_stride;
  bool prefetch_l2;          // into L2 instead (the next weight block)
  // Consecutive 4-channel output blocks computed in one call on the same pixels (the
  // per-call set-up then costs once per strip, not per tile): tile t reads
  // w + t * w_tile_stride, writes y + t * kPwRows * y_kstride and adds bias + t * kPwRows;
  // `rows` counts the last tile's channels (the others have kPwRows). With x_copy, tile
  // 0 reads x and leaves the copy, the later tiles read the copy. The prefetch rows
  // carry on from tile to tile (one per 8 channels, as within a tile).
  int tiles = 1;
  std::int64_t w_tile_stride = 0;
  std::int64_t y_prefetch_ahead = 0;  // > 0: each tile first pulls its output rows' two
                                      //   lines this many floats on into L1 (for write)
};

using PwFwdKernel = void (*)(const PwFwdArgs&);

void pw_fwd_generic(const PwFwdArgs& a);
void pw_fwd_avx2(const PwFwdArgs& a);
void pw_fwd_avx512(const PwFwdArgs& a);

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols.
using PwTransposeKernel = void (*)(const float* src, std::int64_t src_stride, std::int64_t rows,
                                   std::int64_t cols, float* dst, std::int64_t dst_stride);

// Transpose into blocks of 4 rows: dst[(i / 4) * block_stride + j * 4 + i % 4] =
// src[i * src_stride + j] for j < cols and i < rows rounded up to 4, zero for i >= rows
// (dY^T for backward-weights: one 4-channel tile's operand is then contiguous).
using PwPack4Kernel = void (*)(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols,
                               float* dst, std::int64_t block_stride);

void pw_pack4_generic(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols, float* dst,
                      std::int64_t block_stride);
void pw_pack4_avx2(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols, float* dst,
                   std::int64_t block_stride);

void pw_transpose_generic(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols,
                          float* dst, std::int64_t dst_stride);
void pw_transpose_avx2(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols,
                       float* dst, std::int64_t dst_stride);

}  // namespace taihu::dnn::conv
