// Local response normalization with Caffe's LRN semantics on NCHW data.
//   ACROSS_CHANNELS: scale = k + alpha / local_size * sum of x^2 over the channels
//                    c - (local_size-1)/2 .. c + local_size/2 (clipped at the ends)
//   WITHIN_CHANNEL:  scale = 1 + alpha / local_size^2 * sum of x^2 over the
//                    local_size x local_size window centred on (h, w), zero padded
//                    (Caffe builds it from AVE pooling and a Power layer with shift 1,
//                    so k is not used)
//   y = x * scale^-beta.
// local_size must be odd (Caffe's check). `scale` [N][C][H][W] is written by forward
// and needed by backward.
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

enum class LrnRegion { across_channels, within_channel };

struct LrnParams {
  index_t batch = 1, channels = 1, height = 1, width = 1;
  index_t local_size = 5;
  double alpha = 1.0, beta = 0.75, k = 1.0;
  LrnRegion region = LrnRegion::across_channels;
  index_t elements() const { return batch * channels * height * width; }
  void validate(const char* what) const;
};

template <class T>
void lrn_forward(const LrnParams& p, const T* x, T* y, T* scale);

// dx = dy * scale^-beta - (2 alpha beta / n) x * sum over the windows containing the
// position of dy * y / scale  (n = local_size, or local_size^2 within a channel).
// Not in place: dx must not alias dy, x, y or scale.
template <class T>
void lrn_backward(const LrnParams& p, const T* x, const T* y, const T* scale, const T* dy, T* dx);

}  // namespace taihu::dnn
