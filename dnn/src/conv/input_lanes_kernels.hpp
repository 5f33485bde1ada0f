// The direct input-lanes backward-weights' store of a unit's dw rows
// (conv_direct_input_lanes.cpp), with whole cache lines:
//   dst[c * taps + t] (+)= src[t * tap_stride + c] for c < channels, t < taps
// (one OIHW dw row's run of channels x taps from the per-tap tiles' [tap][channel]
// buffer), as TapInterleaveKernel (pointwise_blocked_kernels.hpp) plus `stream`:
// non-temporal stores for the whole output vectors (needs !accumulate; the caller
// fences). AVX-512 builds each full 16-channel block of 3x3 taps (144 floats: 9 whole
// vectors, 9 cache lines when dst is 64-byte aligned) with masked permutes in registers
// and stores it as 9 vectors; other tap counts and a partial last block go through
// tap_interleave_avx512 (cached stores). Floats are moved or added once: exact.
//
// The column form's build of x's columns (conv_direct_input_lanes.cpp): for one output
// row of one 16-channel block of the zero-padded nChw16c x (xrow: the block's padded row
// oy, rows wp * 16 floats apart), pixel p < pixels, channel c < 16, tap t < kh * kw:
//   Xcol column j = c * taps + t, block j / 16, lane j % 16:
//   col[(j / 16) * cstride + p * 16 + j % 16] = xrow[((t / kw) * wp + p + t % kw) * 16 + c]
// (col at the row's first pixel of the block's first column block). AVX-512 moves a
// pixel's 3x3 taps (9 vectors in, 9 out) through the same masked permutes as the tap
// store; other tap counts take the scalar definition.
//
// x's reorder straight into its zero-padded plane (conv_direct_input_lanes.cpp): one
// 16-channel block of NCHW x (src: `lanes` <= 16 channel planes of h x w, consecutive)
// into the interior of its padded nChw16c plane (dst: at the first interior pixel, rows
// wp * 16 floats apart):
//   dst[(iy * wp + ix) * 16 + l] = l < lanes ? src[l * h * w + iy * w + ix] : 0
// (the padding around the interior is not written). One pass where the reorder into
// nChw16c and a row copy into the plane were two; floats moved, exact. No generic
// kernel in the entry's list (the two-pass reorder is the portable path); the scalar
// definition is pad_block_generic.
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

using TapStoreKernel = void (*)(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                                float* dst, bool accumulate, bool stream);
void tap_store_generic(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                       float* dst, bool accumulate, bool stream);
void tap_store_avx512(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                      float* dst, bool accumulate, bool stream);

using ColBuildKernel = void (*)(const float* xrow, std::int64_t wp, int kh, int kw, std::int64_t pixels, float* col,
                                std::int64_t cstride);
void col_build_generic(const float* xrow, std::int64_t wp, int kh, int kw, std::int64_t pixels, float* col,
                       std::int64_t cstride);
void col_build_avx512(const float* xrow, std::int64_t wp, int kh, int kw, std::int64_t pixels, float* col,
                      std::int64_t cstride);

using PadBlockKernel = void (*)(const float* src, std::int64_t lanes, std::int64_t h, std::int64_t w, float* dst,
                               std::int64_t wp);
void pad_block_generic(const float* src, std::int64_t lanes, std::int64_t h, std::int64_t w, float* dst,
                       std::int64_t wp);
void pad_block_avx512(const float* src, std::int64_t lanes, std::int64_t h, std::int64_t w, float* dst,
                      std::int64_t wp);

}  // namespace taihu::dnn::conv
