// taihu::dnn_cuda convolution forward on DEVICE pointers (implicit GEMM, float), with
// the CPU library's semantics and layouts (taihu/dnn/conv.hpp): x NCHW, w OIHW
// [k][c/groups][kh][kw], bias [k] (nullable), y NCHW overwritten; stride, padding,
// dilation (1 = dense) and groups.
// Asynchronous on `stream`. Bad shapes throw taihu::Error naming the field before any
// CUDA call; launch failures throw taihu::Error too.
// This header needs no CUDA include path (C++17 and later).
#pragma once
#include <cstdint>

struct CUstream_st;

namespace taihu::dnn_cuda {

using index_t = std::int64_t;
using Stream = CUstream_st*;

// The same fields as taihu::dnn::ConvDesc (dnn_cuda does not depend on taihu::dnn).
struct ConvShape {
  index_t n = 1, c = 1, h = 1, w = 1, k = 1, kh = 1, kw = 1;
  index_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  index_t out_h() const { return (h + 2 * pad_h - dil_h * (kh - 1) - 1) / stride_h + 1; }
  index_t out_w() const { return (w + 2 * pad_w - dil_w * (kw - 1) - 1) / stride_w + 1; }
};

// Throws taihu::Error naming the first bad field (and sizes past 2^31 elements).
void validate(const ConvShape& s);

// y = conv(x, w) + bias. Implicit GEMM: per group, Y[k][pixel] = W[k][c*kh*kw] *
// X^[c*kh*kw][pixel] with X^ gathered from x tile by tile into shared memory
// (64 x 64 output tile per block, 8-deep slices, 4 x 4 outputs per thread).
void conv_forward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                  Stream stream = nullptr);

}  // namespace taihu::dnn_cuda
