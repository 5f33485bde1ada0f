// Per-ISA kernels of the nChw8c <-> NCHW activation reorders (layout.cpp): one channel
// block of one image at a time.
//   unblock: dst[l * hw + p] = src[p * 8 + l] for l < lanes, p < hw (src: one block,
//     [hw][8]; dst: the block's `lanes` NCHW planes, hw apart)
//   block:   dst[p * 8 + l] = l < lanes ? src[l * hw + p] : 0 for l < 8 (the lanes past
//     the real channels are written as zeros)
// AVX2 moves 8 pixels x 8 channels through one register transpose; pixel tails and
// partial blocks take the scalar loop.
#pragma once
#include <cstdint>

namespace taihu::dnn::layout_kernels {

using UnblockKernel = void (*)(const float* src, float* dst, std::int64_t lanes, std::int64_t hw);
using BlockKernel = void (*)(const float* src, float* dst, std::int64_t lanes, std::int64_t hw);

void unblock_generic(const float* src, float* dst, std::int64_t lanes, std::int64_t hw);
void block_generic(const float* src, float* dst, std::int64_t lanes, std::int64_t hw);
void unblock_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw);
void block_avx2(const float* src, float* dst, std::int64_t lanes, std::int64_t hw);

}  // namespace taihu::dnn::layout_kernels
