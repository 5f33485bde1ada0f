// Softmax over one axis and softmax cross-entropy loss (Caffe's Softmax and
// SoftmaxWithLoss). Data [outer][channels][inner]; softmax runs over `channels` for
// every (outer, inner) position, max-subtracted for stability.
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

template <class T>
void softmax_forward(index_t outer, index_t channels, index_t inner, const T* x, T* y);

// dx = y * (dy - sum_c dy * y). dx may equal dy.
template <class T>
void softmax_backward(index_t outer, index_t channels, index_t inner, const T* y, const T* dy,
                      T* dx);

// Caffe's LossParameter.NormalizationMode: the loss (and gradient) is divided by
//   full:       outer * inner
//   valid:      the number of positions whose label is not ignore_label (Caffe's default)
//   batch_size: outer
//   none:       1
// and the divisor is clamped to at least 1. (Caffe's legacy `normalize: false` is
// batch_size, `normalize: true` is valid.)
enum class LossNormalization { full, valid, batch_size, none };

struct SoftmaxLossParams {
  index_t outer = 1, channels = 1, inner = 1;
  bool has_ignore_label = false;
  index_t ignore_label = -1;
  LossNormalization normalization = LossNormalization::valid;
  void validate(const char* what) const;
};

// Forward: prob [outer][channels][inner] = softmax(x); labels [outer][inner] hold class
// indices as floats (Caffe's label blob), truncated to integers. Returns
//   -sum over non-ignored positions of log(max(prob[label], FLT_MIN)) / divisor.
// A label outside [0, channels) that is not ignore_label throws taihu::Error naming it.
template <class T>
T softmax_loss_forward(const SoftmaxLossParams& p, const T* x, const T* labels, T* prob);

// Backward: dx = (prob - onehot(label)) * loss_weight / divisor, zero at ignored
// positions. loss_weight is the top diff (Caffe: the layer's loss_weight).
template <class T>
void softmax_loss_backward(const SoftmaxLossParams& p, const T* prob, const T* labels,
                           Scalar<T> loss_weight, T* dx);

// The divisor the two functions above use (1 or more).
template <class T>
T softmax_loss_normalizer(const SoftmaxLossParams& p, const T* labels);

}  // namespace taihu::dnn
