// Caffe's Scale and Bias layers: x viewed as [outer][dim][inner], scale and bias are
// [dim] (Caffe's axis / num_axes select which axes form `dim`; everything before is
// outer, everything after inner):  y = x * scale[d] (+ bias[d]).
// scale == null means 1 (Caffe's Bias layer); bias == null means no bias term.
// x == y (in place) is allowed; backward then needs the original x (Caffe keeps a copy).
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

template <class T>
void scale_forward(index_t outer, index_t dim, index_t inner, const T* x, const T* scale,
                   const T* bias, T* y);

// dx = dy * scale[d] (dx may be null, may equal dy; scale null = 1);
// dscale (+)= sum over outer, inner of dy * x; dbias (+)= sum of dy (each may be null).
template <class T>
void scale_backward(index_t outer, index_t dim, index_t inner, const T* x, const T* scale,
                    const T* dy, T* dx, T* dscale, T* dbias, bool accumulate);

}  // namespace taihu::dnn
