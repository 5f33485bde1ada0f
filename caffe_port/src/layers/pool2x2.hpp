// MAX pooling with a 2x2 window, stride 2, no padding, on planes of even height and
// width (LeNet's pools): every input belongs to exactly one window. Same results as
// dnn::pooling_forward/backward (taps visited row then column, strict >, so ties
// and NaNs give the same values and argmax mask; backward writes 0 + dy at the argmax
// and 0 elsewhere, the value dnn's zero-fill-then-add gives), but written for this
// case only: four windows per SSE step (the x86-64 baseline), no row-end copies, and
// backward stores each input once instead of zero-filling and scattering.
#pragma once
#include <cstdint>

#include "taihu/dnn/pooling.hpp"

namespace taihu::caffe {

// True for the geometry these kernels handle (the caller checks the method is MAX).
bool pool2x2_applies(const dnn::PoolingShape& s);
// y, mask: [batch][channels][h/2][w/2]; mask = argmax index within the input plane.
void max_pool2x2_forward(const dnn::PoolingShape& s, const float* x, float* y, std::int32_t* mask);
// dx (overwritten) from dy and forward's mask.
void max_pool2x2_backward(const dnn::PoolingShape& s, const float* dy, const std::int32_t* mask, float* dx);

}  // namespace taihu::caffe
