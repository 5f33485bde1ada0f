// 1x1 stride-1 unpadded convolution on NCHW tensors (the direct algorithm's forward
// for such layers; pointwise_kernels.hpp has the register tiles).
//   forward: Y = W X per image and group with W packed once per weight version
//     ([group][256-channel block][4-channel output block][channel][4]: a block's tiles
//     read one contiguous run). X is consumed in strips of the kernel set's width
//     (24 pixels on AVX2, the plane's last vectors split 2 + 2 rather than 3 + 1; 32
//     on AVX-512, whose tile pairs two 4-channel blocks): the first 4-channel output tile of a
//     strip of a channel block reads it in place and stores it to a contiguous
//     per-thread buffer (<= 24 KiB, L1; the rows of X lie a plane apart and would share
//     a few L1 sets; no separate copy pass; an item's first strips, which nothing
//     prefetched, are copied by a plain loop, whose misses overlap better), every
//     other tile sweeps the copy, and the tiles prefetch the rows of the strip two
//     ahead (and their output lines) meanwhile. One kernel call runs all of a strip's
//     tiles of an output-channel block. Output channels are blocked so a block's packed
//     weights stay in L2 (<= 128 KiB): the strips of a chunk (<= 8) are then copied
//     once and swept by every block. Work items: (image, group, chunk, output-channel range), the range
//     split only when a batch-1 plane leaves threads idle.
//   Backward-data is the forward pass of the transposed problem (W^T), again 1x1.
//   backward-weights: dW = dY X^T with the same tile on the transposed operands (a
//     chunk of dY^T, an L1 strip of X^T: 24 input channels x the chunk's pixels),
//     reduced over chunks of pixels of every image; threads own disjoint dW tiles.
//     While a block's tiles run they pull the rows of X the next block transposes into
//     L2 (a few lines per tile).
#pragma once
#include <memory>
#include <vector>

#include "conv_algorithm.hpp"
#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::dnn::conv {

// The same layers (groups 1) on nChw8c (block 8) or nChw16c (block 16) activations
// (conv_pointwise_blocked.cpp).
std::unique_ptr<ConvAlgorithm> make_pointwise_blocked(const ConvDesc& d, int block);

// True for the layers PointwiseConv runs: 1x1 kernel, stride 1, no padding.
bool pointwise_shape(const ConvDesc& d);


class PointwiseConv {
 public:
  explicit PointwiseConv(const ConvDesc& d);
  // Post-ops (conv.hpp's ConvPostOps) applied while each output tile is still in
  // registers: + bias, sum (+ the y held on entry), ReLU on the last channel block.
  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint,
               const ConvPostOps& post = {});
  // dW (+)= dY X^T per group (dbias (+)= the sums of dY when given).
  void backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate);

 private:
  void pack_weights(const float* w);
  index_t strip_begin(index_t s) const;
  int strip_pixels(index_t s) const;

  ConvDesc d_;
  index_t kg_, cg_, plane_;
  index_t px_;                        // the kernel set's strip width (pixels per tile)
  index_t tail_ = 16;                 // pixels of each of the split last two strips
  index_t cblock_ = 0, cblocks_ = 0;  // input channels per reduction block, blocks
  index_t kblocks_ = 0, mblock_ = 0;  // 4-channel output blocks; per L2 weight block
  index_t strips_ = 0;                // pixel strips per plane
  bool split_tail_ = false;           // the last two strips hold 16 and <= 16 pixels
  std::vector<float> wpack_;
  arch::AlignedBuffer<float> bwd_buf_;  // per thread: a chunk of dY^T and one X^T strip
  arch::AlignedBuffer<float> strip_;  // per thread: one chunk of strips of a channel block
};

}  // namespace taihu::dnn::conv
