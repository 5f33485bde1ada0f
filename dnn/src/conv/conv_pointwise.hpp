// 1x1 stride-1 unpadded convolution forward on NCHW tensors (the direct
// algorithm's forward for such layers; pointwise_kernels.hpp has the register tiles).
//   forward: Y = W X per image and group with W packed once per weight version
//     ([group][4-channel block][channel][4]). X is consumed in 24-pixel strips: each
//     strip of a block of <= 256 channels is copied to a contiguous per-thread buffer
//     (<= 24 KiB, L1; the rows of X lie a plane apart and would share a few L1 sets),
//     every 4-channel output tile sweeps it, and the tiles prefetch the rows of the
//     strip two ahead (and their output lines) meanwhile. No B panel, no im2col.
//   Backward-data is the forward pass of the transposed problem (W^T), again 1x1;
//     backward-weights stays on the direct algorithm's dY^T tile (conv_direct.cpp).
#pragma once
#include <vector>

#include "conv_algorithm.hpp"
#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::dnn::conv {

// True for the layers PointwiseConv runs: 1x1 kernel, stride 1, no padding.
bool pointwise_shape(const ConvDesc& d);

class PointwiseConv {
 public:
  explicit PointwiseConv(const ConvDesc& d);
  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint);

 private:
  ConvDesc d_;
  index_t kg_, cg_, plane_, cblock_;
  std::vector<float> wpack_;
  arch::AlignedBuffer<float> strip_;  // per thread: one pixel strip of a channel block
};

}  // namespace taihu::dnn::conv
