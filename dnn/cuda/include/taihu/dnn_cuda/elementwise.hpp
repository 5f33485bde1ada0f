// taihu::dnn_cuda elementwise operators on DEVICE pointers, float, the same semantics as
// the CPU operators in taihu/dnn (activation.hpp, scale.hpp, eltwise.hpp, softmax.hpp):
//   ReLU/LeakyReLU, Sigmoid, TanH forward and backward; Scale/Bias forward and backward
//   over [outer][dim][inner]; Eltwise SUM with coefficients; Softmax over an axis
//   ([outer][channels][inner]) forward and backward.
// Calls are asynchronous: work is queued on `stream` (default: the legacy default
// stream). Bad arguments throw taihu::Error naming the argument (checked before any
// CUDA call); CUDA launch failures throw taihu::Error too. In place (x == y, dy == dx)
// is allowed wherever the CPU operator allows it.
// This header needs no CUDA include path (C++17 and later).
#pragma once
#include <cstdint>

// CUstream_st* is exactly cudaStream_t: callers pass their cudaStream_t unchanged.
struct CUstream_st;

namespace taihu::dnn_cuda {

using index_t = std::int64_t;
using Stream = CUstream_st*;

void relu_forward(index_t count, const float* x, float* y, float negative_slope = 0.0f,
                  Stream stream = nullptr);
void relu_backward(index_t count, const float* x, const float* dy, float* dx,
                   float negative_slope = 0.0f, Stream stream = nullptr);
void sigmoid_forward(index_t count, const float* x, float* y, Stream stream = nullptr);
void sigmoid_backward(index_t count, const float* y, const float* dy, float* dx,
                      Stream stream = nullptr);
void tanh_forward(index_t count, const float* x, float* y, Stream stream = nullptr);
void tanh_backward(index_t count, const float* y, const float* dy, float* dx,
                   Stream stream = nullptr);

// y = x * scale[d] (+ bias[d]); scale null = 1, bias null = none.
void scale_forward(index_t outer, index_t dim, index_t inner, const float* x, const float* scale,
                   const float* bias, float* y, Stream stream = nullptr);
// dscale (+)= sum dy * x, dbias (+)= sum dy (each may be null), then dx = dy * scale
// (dx may be null or equal dy).
void scale_backward(index_t outer, index_t dim, index_t inner, const float* x, const float* scale,
                    const float* dy, float* dx, float* dscale, float* dbias, bool accumulate,
                    Stream stream = nullptr);

// y = sum_i coeffs[i] * inputs[i]; `inputs` is a HOST array of `num_inputs` (>= 1)
// device pointers, `coeffs` a host array (null = all 1).
void eltwise_sum(index_t count, int num_inputs, const float* const* inputs, const float* coeffs,
                 float* y, Stream stream = nullptr);

void softmax_forward(index_t outer, index_t channels, index_t inner, const float* x, float* y,
                     Stream stream = nullptr);
// dx = y * (dy - sum_c dy * y); dx may equal dy.
void softmax_backward(index_t outer, index_t channels, index_t inner, const float* y,
                      const float* dy, float* dx, Stream stream = nullptr);

}  // namespace taihu::dnn_cuda
