// Per-ISA kernels of the nChw8c / nChw16c <-> NCHW activation reorders (layout.cpp): one
// channel block (B = 8 or 16 lanes) of one image at a time.
//   unblock: dst[l * hw + p] = src[p * B + l] for l < lanes, p < hw (src: one block,
//     [hw][B]; dst: the block's `lanes` NCHW planes, hw apart)
//   block:   dst[p * B + l] = l < lanes ? src[l * hw + p] : 0 for l < B (the lanes past
//     the real channels are written as zeros)
// AVX2 moves 8 pixels x 8 channels through one register transpose (B / 8 of them per 8
// pixels); pixel tails take the scalar loop.
#pragma once
#include <cstdint>

namespace taihu::dnn::layout_kernels {

using UnblockKernel = void (*)(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B);
using BlockKernel = void (*)(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B);

void unblock_generic(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B);
void block_generic(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B);
void unblock_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B);
void block_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw, int B);

}  // namespace taihu::dnn::layout_kernels
