// Caffe's Concat, Slice and Split layers. Concat along an axis: input i is
// [outer][channels[i]][inner], y is [outer][sum channels][inner].
#pragma once
#include <span>

#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

template <class T>
void concat_forward(index_t outer, index_t inner, std::span<const index_t> channels,
                    std::span<const Scalar<T>* const> inputs, T* y);

// Backward of concat (and forward of Slice): dx[i] gets its slice of dy; a null dx[i]
// is skipped (Caffe's propagate_down false).
template <class T>
void concat_backward(index_t outer, index_t inner, std::span<const index_t> channels, const T* dy,
                     std::span<Scalar<T>* const> dx);

// Backward of Split: dx = sum of the top diffs (overwritten). dys.size() >= 1.
template <class T>
void split_backward(index_t count, std::span<const Scalar<T>* const> dys, T* dx);

}  // namespace taihu::dnn
