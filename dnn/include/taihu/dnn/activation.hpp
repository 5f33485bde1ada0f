// Elementwise activations with Caffe's semantics, forward and backward, on `count`
// contiguous values. In place (x == y, dy == dx) is allowed everywhere.
//   ReLU:    y = x > 0 ? x : negative_slope * x   (negative_slope 0: plain ReLU, else
//            LeakyReLU); backward uses x: dx = dy * (x > 0 ? 1 : negative_slope).
//            After an in-place forward pass y as x: the sign test gives the same answer
//            for negative_slope >= 0.
//   Sigmoid: y = 1 / (1 + exp(-x));  backward uses y: dx = dy * y * (1 - y).
//   TanH:    y = tanh(x);            backward uses y: dx = dy * (1 - y^2).
// float runs AVX2 kernels when the CPU has them (TAIHU_ISA caps it); the float exp and
// tanh are within a few ulp of libm.
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

template <class T>
void relu_forward(index_t count, const T* x, T* y, Scalar<T> negative_slope = T(0));
template <class T>
void relu_backward(index_t count, const T* x, const T* dy, T* dx, Scalar<T> negative_slope = T(0));

template <class T>
void sigmoid_forward(index_t count, const T* x, T* y);
template <class T>
void sigmoid_backward(index_t count, const T* y, const T* dy, T* dx);

template <class T>
void tanh_forward(index_t count, const T* x, T* y);
template <class T>
void tanh_backward(index_t count, const T* y, const T* dy, T* dx);

}  // namespace taihu::dnn
