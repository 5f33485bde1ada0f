// Caffe's Eltwise layer on `count` values from two or more inputs of equal size:
//   SUM:  y = sum_i coeff[i] * x_i   (coeffs null = all 1)
//   PROD: y = prod_i x_i             (backward: product of the other inputs, Caffe's
//                                     stable_prod_grad)
//   MAX:  y = max_i x_i, `mask` [count] records the winning input: between the first
//         two a tie goes to input 1, later inputs must be strictly greater (as Caffe).
// y may alias inputs[0] (in place), no other input; dx may alias dy.
#pragma once
#include <cstdint>
#include <span>

#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

enum class EltwiseOp { prod, sum, max };

// inputs.size() >= 2; coeffs has inputs.size() entries (SUM) or is empty;
// mask is required for MAX when a backward follows (may be null otherwise).
template <class T>
void eltwise_forward(EltwiseOp op, index_t count, std::span<const Scalar<T>* const> inputs,
                     std::span<const Scalar<T>> coeffs, T* y, std::int32_t* mask);

// The gradient for input `which` (overwritten): SUM coeff * dy; PROD dy * prod of the
// other inputs; MAX dy where mask == which, else 0.
template <class T>
void eltwise_backward(EltwiseOp op, index_t count, std::span<const Scalar<T>* const> inputs,
                      std::span<const Scalar<T>> coeffs, const std::int32_t* mask, const T* dy,
                      index_t which, T* dx);

}  // namespace taihu::dnn
