// Blocked memory layouts the convolution kernels use internally, and the explicit
// reorders between them and the public NCHW / OIHW layouts (tested round trips).
//   nChw8c  : [n][ceil(c/8)][h][w][8]        channel blocks of 8 (one AVX2 vector);
//             channels past c in the last block are zero.
//   nChw16c : [n][ceil(c/16)][h][w][16]      the same with blocks of 16 (one AVX-512
//             vector).
//   OIhw8i8o: [ceil(k/8)][ceil(c/8)][kh][kw][8 in][8 out]  weights for nChw8c kernels;
//             padded entries are zero.
// All reorders are exact copies (no arithmetic) and run on the calling thread.
#pragma once
#include "taihu/dnn/tensor.hpp"

namespace taihu::dnn {

inline constexpr index_t kChannelBlock = 8;

inline index_t channel_blocks(index_t c) { return (c + kChannelBlock - 1) / kChannelBlock; }

// Element counts of the blocked buffers.
index_t nchw8c_elements(index_t n, index_t c, index_t h, index_t w);
index_t oihw8i8o_elements(index_t k, index_t c, index_t kh, index_t kw);

// NCHW <-> nChw8c. Throws taihu::Error for negative sizes or null pointers with
// non-zero sizes.
void reorder_nchw_to_nchw8c(const float* src, float* dst, index_t n, index_t c, index_t h,
                            index_t w);
void reorder_nchw8c_to_nchw(const float* src, float* dst, index_t n, index_t c, index_t h,
                            index_t w);

// NCHW <-> nChw16c (same contract).
index_t nchw16c_elements(index_t n, index_t c, index_t h, index_t w);
void reorder_nchw_to_nchw16c(const float* src, float* dst, index_t n, index_t c, index_t h,
                             index_t w);
void reorder_nchw16c_to_nchw(const float* src, float* dst, index_t n, index_t c, index_t h,
                             index_t w);

// OIHW <-> OIhw8i8o.
void reorder_oihw_to_oihw8i8o(const float* src, float* dst, index_t k, index_t c, index_t kh,
                              index_t kw);
void reorder_oihw8i8o_to_oihw(const float* src, float* dst, index_t k, index_t c, index_t kh,
                              index_t kw);

}  // namespace taihu::dnn
