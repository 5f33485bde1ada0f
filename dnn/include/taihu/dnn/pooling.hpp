// 2-D max and average pooling on NCHW, with Caffe's PoolingLayer semantics:
//   out = ceil((in + 2 pad - kernel) / stride) + 1, then decreased by one when any pad > 0
//   and the last window would start at or past in + pad (it must start inside the
//   padded input); pad < kernel is required.
//   MAX: padding never wins; the argmax (h * width + w within the input plane) is
//   recorded as int32 in `mask` for backward.
//   AVE: divides by the window size clipped to the padded input [-pad, in + pad)
//   (padding counts, the overhang past the padding does not), as Caffe does.
// Global pooling: set kernel = input size, pad 0, stride 1.
#pragma once
#include <cstdint>

#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

enum class PoolMethod { max, average };

struct PoolingShape {
  index_t batch = 1, channels = 1, height = 1, width = 1;
  index_t kernel_h = 1, kernel_w = 1;
  index_t stride_h = 1, stride_w = 1;
  index_t pad_h = 0, pad_w = 0;
  PoolMethod method = PoolMethod::max;

  index_t out_h() const;  // Caffe's rounding described above
  index_t out_w() const;
  index_t input_elements() const { return batch * channels * height * width; }
  index_t output_elements() const { return batch * channels * out_h() * out_w(); }
  // Throws taihu::Error naming the bad field (sizes < 1, pad >= kernel, ...).
  void validate(const char* what) const;
};

// y: [batch][channels][out_h][out_w]. mask (MAX only, may be null when no backward
// follows): same shape as y, argmax index within the input plane.
template <class T>
void pooling_forward(const PoolingShape& s, const T* x, T* y, std::int32_t* mask);

// dx (overwritten) from dy. MAX needs the mask written by forward; AVE ignores it.
template <class T>
void pooling_backward(const PoolingShape& s, const T* dy, const std::int32_t* mask, T* dx);

}  // namespace taihu::dnn
