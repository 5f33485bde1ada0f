// Conventions shared by taihu's non-convolution operators (inner product, pooling,
// batch norm, scale, activations, softmax, dropout, LRN, eltwise, concat, LSTM):
//   - namespace taihu::dnn, sizes as index_t (64-bit), data as raw pointers with the
//     sizes passed explicitly; NCHW, densely packed, as Caffe's Blob;
//   - axis-generic operators see their data as [outer][channels][inner] (Caffe's
//     outer_num / channels / inner_num around the chosen axis);
//   - every operator is a template on T, explicitly instantiated for float (the fast,
//     ISA-dispatched path) and double (the precision reference the gradient tests use);
//   - parameter gradients take `accumulate` (true: dW += ..., as Caffe accumulates
//     parameter diffs over iter_size); data gradients (dx) are always overwritten;
//   - bad sizes or arguments throw taihu::Error naming the argument.
// Threads: OpenMP over the outer loops, taihu::arch::threads_for_call() many.
#pragma once
#include <cstdint>
#include <type_traits>

namespace taihu::dnn {

using index_t = std::int64_t;

// A scalar argument of an operator templated on T: not used for deduction, so
// relu_forward(n, x_float, y_float, 0.1) compiles (T comes from the pointers).
template <class T>
using Scalar = std::type_identity_t<T>;

}  // namespace taihu::dnn
