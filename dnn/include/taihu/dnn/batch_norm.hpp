// Batch normalization with Caffe's BatchNorm semantics (no affine part: Caffe follows it
// with a Scale layer, see scale.hpp). Data [batch][channels][spatial] (spatial = H*W, 1
// for 2-D input); statistics per channel over batch*spatial values:
//   training:   mean, var = biased batch variance; y = (x - mean) / sqrt(var + eps)
//   inference:  (use_global_stats) the same with the stored moving statistics.
// Caffe keeps three blobs: mean_sum [C], var_sum [C] and a one-element scale factor;
// the moving statistics are mean_sum / factor and var_sum / factor (0 when factor is 0).
// x == y (in place) and dy == dx are allowed.
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

struct BatchNormShape {
  index_t batch = 1, channels = 1, spatial = 1;
  index_t elements() const { return batch * channels * spatial; }
  void validate(const char* what) const;  // throws taihu::Error naming the bad size
};

// Training forward: writes y and the batch statistics mean [C] and var [C] (biased).
template <class T>
void batch_norm_forward_training(const BatchNormShape& s, Scalar<T> eps, const T* x, T* y, T* mean,
                                 T* var);

// Inference forward with given statistics mean [C], var [C].
template <class T>
void batch_norm_forward_inference(const BatchNormShape& s, Scalar<T> eps, const T* mean,
                                  const T* var, const T* x, T* y);

// Caffe's moving-average update after a training forward, m = batch * spatial:
//   factor = factor * fraction + 1
//   mean_sum = mean + fraction * mean_sum
//   var_sum  = var * m / (m - 1) (1 when m == 1) + fraction * var_sum
template <class T>
void batch_norm_update_moving_average(const BatchNormShape& s, Scalar<T> moving_average_fraction,
                                      const T* mean, const T* var, T* mean_sum, T* var_sum,
                                      T* scale_factor);

// The statistics inference uses: mean = mean_sum / factor, var = var_sum / factor
// (both 0 when factor == 0, as Caffe).
template <class T>
void batch_norm_global_stats(index_t channels, const T* mean_sum, const T* var_sum,
                             Scalar<T> scale_factor, T* mean, T* var);

// Backward. y is the forward output (the normalized x), var the variance the forward
// used. Training (use_global_stats = false), per channel over batch*spatial:
//   dx = (dy - mean(dy) - y * mean(dy * y)) / sqrt(var + eps)
// Inference statistics (use_global_stats = true): dx = dy / sqrt(var + eps).
template <class T>
void batch_norm_backward(const BatchNormShape& s, Scalar<T> eps, const T* y, const T* var,
                         const T* dy, T* dx, bool use_global_stats);

}  // namespace taihu::dnn
