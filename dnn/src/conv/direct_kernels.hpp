// Register-blocked micro-kernels of the direct convolution (conv_direct.cpp), one set
// per ISA (direct_kernels_<isa>.cpp). Both work on NCHW data vectorised along output
// pixels, so neither operand is ever packed at run time:
//   forward: a tile of `rows` output channels x a few "slots" of 8
//     consecutive output pixels (slots may lie in different rows, so narrow images
//     fill the tile too); the input window is read in place from the phase-split
//     padded input (x + c*chan_stride + x_off[slot] + tap_off[t]), the weights are
//     broadcast from the block packed once as [channel][tap][kDirectRows]; the taps
//     come in runs of consecutive input offsets (a kernel row, or one width phase of
//     it), so the inner loop walks pointers instead of loading an offset per tap.
//   backward-weights: a tile of up to 16 output channels (AVX-512: up to
//     kDirectBwdwChannelsWide; vectors of dY^T, the transposed output gradient) x up to
//     6 weight columns (channel, tap; the input
//     broadcast straight from the padded copy), reduced over runs of pixels and added
//     to dw: GEMM-like traffic (two vector loads and six broadcasts per 12 FMAs).
// Contract: lanes beyond the valid range are never written; forward reads them unless
// mask_last_load says not to.
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

// Forward tile shape: output channels per weight block (the packing's innermost
// dimension) and 8-pixel slots per tile; rows x slots accumulators plus `slots` input
// vectors and a broadcast must fit the 16 ymm registers (3 x 4 spills: 2x slower).
constexpr int kDirectRows = 4, kDirectSlots = 3;
// Backward-weights tile channels of the wide (AVX-512) kernel; the others take 16.
constexpr int kDirectBwdwChannelsWide = 64;

struct DirectFwdArgs {
  const float* x;               // input at the first channel of the block
  std::int64_t channels;        // channels in this reduction block
  std::int64_t chan_stride;     // distance between input channels
  const std::int64_t* tap_off;  // offset of each kernel tap from a pixel's origin, in the
                                // packing's tap order
  std::int64_t taps;            // kh * kw
  const std::int32_t* run_len;  // the taps as `runs` runs of consecutive offsets
  int runs;                     // (tap_off[t + j] == tap_off[t] + j within a run)
  const float* w;               // packed [channels][taps][kDirectRows]
  const float* bias;            // kblocks * rows values added (whether or not accumulating), or null
  float* y;                     // output at the first channel
  std::int64_t y_kstride;       // distance between output channels
  int rows;                     // valid output channels per block, 1..kDirectRows
  int kblocks;                  // channel blocks to run (each `rows` channels), >= 1
  std::int64_t w_kblock, y_kblock;  // distance between blocks' weights and outputs
  int slots;                    // 8-pixel slots in this tile, 1..kDirectSlots
  std::int64_t x_off[4];        // per slot: its first pixel's input origin (from x)
  std::int64_t y_off[4];        // per slot: its first pixel's output offset (from y)
  int lanes[4];                 // per slot: valid pixels 1..8 (others never stored)
  bool mask_last_load;          // read only lanes[slots-1] pixels of the last slot (the
                                // end of a caller's buffer); otherwise all 8 lanes of
                                // every slot must be readable
  bool accumulate;              // y += tile (+ bias) instead of y = tile (+ bias)
  bool relu;                    // then y = max(y, 0) (the last reduction block of a fused ReLU)
};

struct DirectBwdwArgs {
  const float* dyt;             // dY transposed, [pixel][kpad], at (first pixel, first channel)
  std::int64_t kpad;            // dY^T's channel dimension (a multiple of 8; of 16 for the
                                // AVX-512 kernel, which reads whole vectors of each row)
  const float* x;               // input at the first pixel's window origin
  const std::int64_t* col_off;  // offset of each weight column (channel, tap) from x
  std::int64_t images, rows, run;  // images x rows x `run` consecutive pixels per row
  std::int64_t x_image_stride, x_row_stride;      // input distances
  std::int64_t dyt_image_stride, dyt_row_stride;  // dY^T distances
  float* dw;                    // dw at (first channel, first column)
  std::int64_t dw_kstride;      // distance between dw rows
  int channels;                 // valid output channels, 1..16 (AVX-512: 1..kDirectBwdwChannelsWide)
  int cols;                     // weight columns, 1..6
};

// dst[p * ldd + k] = src[k * lds + p] for k < rows, p < cols (dY^T for backward-weights).
// Forward for few input channels (first layers: RGB, grey), vectorised along output
// channels the way oneDNN's first-layer JIT kernel is: a tile of nb (1..4) vectors of 8
// output channels x ocv_pixels(nb) output pixels of a plane (consecutive in the plane,
// so they may span rows and no lane idles at row ends; 4 x 3, 3 x 4, 2 x 6, 1 x 6).
// Per tap the kernel holds the smaller operand set in registers (4 x 3: three input
// broadcasts, the four weight vectors streamed through one register: 7 loads per 12
// FMAs, 16 ymm registers) and reads every input value by broadcast, so any stride
// costs the same. Results go to a small channel-blocked scratch ([block][pixel][8]);
// direct_ocv_store then transposes finished pixel runs to NCHW (+ bias) with full
// 8x8 register transposes. An nChw8c output is itself such a scratch: the tiles then
// write it in place (acc_bstride = its block stride), starting from the bias. The channel reduction may be split over calls (accumulate).
constexpr int kOcvMaxBlocks = 4;
constexpr int ocv_pixels(int nb) { return nb >= 5 ? 2 : nb == 4 ? 3 : nb == 3 ? 4 : 6; }

struct DirectOcvArgs {
  const float* x;               // input at the block's first channel (pixel p's window
                                // origin at x + x_off[p])
  std::int64_t channels;        // input channels in this reduction block
  std::int64_t chan_stride;
  const std::int64_t* tap_off;  // offset of tap (r, s) = r * kw + s from a window origin
  std::int64_t taps;            // kh * kw
  int kw_run;                   // > 0: tap_off[r * kw_run + s] == tap_off[r * kw_run] + s
                                // (dilation 1: the kernel unrolls each row), or 0
  const float* w;               // packed [channel][tap][nb * 8] at the block's first channel
  float* acc;                   // scratch: pixel p of vector b at acc + b * acc_bstride + p * 8
                                // (p counted from the first tile)
  std::int64_t acc_bstride;
  int nb;                       // channel vectors, 1..kOcvMaxBlocks
  const std::int64_t* x_off;    // tiles * ocv_pixels(nb) window origins, tile after tile
                                // (a partial tile repeats a valid one; its extra results
                                // are ignored)
  // Or null (every kernel row): per window origin its first and one-past-last kernel
  // row inside the image ([2 * p], [2 * p + 1]); the 4 x 3 tile runs only the rows its
  // pixels' ranges cover (the rows it skips read the zero padding: CIFAR-10 conv1's
  // 5x5 pad 2 skips 3.75% of the FMAs, as oneDNN's kernel does). Needs kw_run > 0.
  const std::int16_t* row_span;
  // Or null: per window origin its first and one-past-last kernel column inside the
  // image ([2 * p], [2 * p + 1]), as row_span; the AVX-512 tile's stride-1 groups that
  // touch a row's left or right edge skip the columns outside (CIFAR-10 conv1: 3.75% of
  // the FMAs). A hint: the other tiles read the zero padding there. Needs kw_run > 0.
  const std::int16_t* col_span;
  int tiles;                    // tile i's results go to acc + i * ocv_pixels(nb) * 8
  bool accumulate;              // add to the scratch instead of overwriting it
  const float* bias_init;       // !accumulate: the tile starts from these nb * 8 values
                                // (the bias of an nChw8c output written in place), or 0
  // Or null: the output the next direct_ocv_store writes (y_rows rows y_kstride apart,
  // y_pixels each), pulled into L2 spread over the tiles, so the store's write-allocate
  // misses overlap the FMAs instead of stalling the store (a hint: never written).
  // y_prefetch == acc (an output written in place): the 4 x 3 tile instead prefetches
  // the lines of the tile a few ahead of the one it computes.
  const float* y_prefetch;
  std::int64_t y_kstride;
  int y_rows;
  std::int64_t y_pixels;
};

// Scratch [nb][pixels][8] (block stride acc_bstride) -> y (channel stride y_kstride,
// pixels consecutive), rows_last valid channels in the last vector, plus bias (or null),
// plus the y held there (accumulate: a fused sum post-op), then max(., 0) (relu).
struct DirectOcvStoreArgs {
  const float* acc;
  std::int64_t acc_bstride;
  int nb;
  int rows_last;                // valid channels of the last vector, 1..8
  std::int64_t pixels;
  const float* bias;            // at the first channel, or null
  float* y;
  std::int64_t y_kstride;
  std::int64_t p_begin, p_end;  // the pixels to store (p_begin a multiple of 8)
  bool accumulate = false;      // y += scratch + bias
  bool relu = false;            // then y = max(y, 0)
};

using TransposeKernel = void (*)(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                                 float* dst, std::int64_t ldd);

using DirectFwdKernel = void (*)(const DirectFwdArgs&);
using DirectBwdwKernel = void (*)(const DirectBwdwArgs&);
using DirectOcvKernel = void (*)(const DirectOcvArgs&);
using DirectOcvStoreKernel = void (*)(const DirectOcvStoreArgs&);

void direct_fwd_generic(const DirectFwdArgs& a);
void direct_fwd_avx2(const DirectFwdArgs& a);
void direct_ocv_generic(const DirectOcvArgs& a);
void direct_ocv_avx2(const DirectOcvArgs& a);
void direct_ocv_avx512(const DirectOcvArgs& a);
void direct_ocv_store_generic(const DirectOcvStoreArgs& a);
void direct_ocv_store_avx2(const DirectOcvStoreArgs& a);
void direct_bwdw_generic(const DirectBwdwArgs& a);
void direct_bwdw_avx2(const DirectBwdwArgs& a);
void direct_bwdw_avx512(const DirectBwdwArgs& a);
void transpose_generic(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                       std::int64_t ldd);
void transpose_avx2(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                    std::int64_t ldd);

}  // namespace taihu::dnn::conv
