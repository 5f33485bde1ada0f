// ISA-specific kernels of the minibatch algorithm (conv_minibatch.hpp), compiled with
// their ISA's flags (kernels/<isa>/minibatch_kernels_<isa>.cpp); MinibatchConv calls them only when
// taihu::arch::active_isa() allows (TAIHU_ISA=generic turns them off).
#pragma once
#include <cstdint>

namespace taihu::dnn::conv::minibatch_kernels {

// dw[k][r] (leading dimension rows) += sum over p < depth of dy[k * ld + p] *
// col[r * ld + p], for k < kg, r < rows.
void backward_weights_small_avx2(const float* dy, const float* col, std::int64_t kg, std::int64_t rows,
                                 std::int64_t depth, std::int64_t ld, float* dw);

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {

// Backward-weights straight from the input (no im2col), for stride 1, dilation 1,
// no padding, one group and an output width that is a multiple of 8. Images
// [n0, n1) of x ([n][C][H][W]) and dy ([n][K][oh * ow]); tap t of the weight row
// (t < rows = C * kh * kw) reads x at tap_offset[t] = c * H * W + r * W + s. Adds
// into dwt[t * K + k] (a per-thread partial, transposed: the caller adds it to
// dw[k][t]). Images go in blocks whose dy of
// four output channels stays in L1 (8 KiB); tiles of 4 channels x 3 taps keep their 12
// accumulators in registers across a block.
struct ImplicitBwdWeights {
  std::int64_t c, h, w, k, oh, ow, rows;
  const std::int64_t* tap_offset;  // rows entries
};
// The implicit kernels' images per block: dy of 4 channels (16 bytes per pixel) within
// 8 KiB, so it and the block's input rows of one channel stay in L1 (LeNet's conv2: 8
// images; 16 measured 8% slower). A caller that splits [n0, n1) keeps the results
// bitwise the same by cutting at multiples of it from n0.
inline std::int64_t implicit_block_images(std::int64_t plane) {
  return plane >= 512 ? 1 : (512 / plane < 16 ? 512 / plane : 16);
}
void backward_weights_implicit_avx2(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0,
                                    std::int64_t n1, float* dwt);

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {

// col2im for one image when each output row is one 8-pixel vector (out_w 8, stride
// 1, no padding or dilation, input width w <= 16): dx[ci][iy][0, w) (overwritten) =
// sum over taps (r, s) with 0 <= iy - r < oh of col[((ci * kh + r) * kw + s) * ld +
// (iy - r) * 8 + ix - s]. Each input row is summed in two registers (columns [0, 8)
// and [8, 16)), a tap's vector placed by an unaligned load at -s (masked), so dx is
// stored once, never re-read. col must be readable 8 floats before its first and
// after its last element (the masked-off lanes).
void col2im_w8_avx2(const float* col, std::int64_t ld, std::int64_t c, std::int64_t h, std::int64_t w,
                    std::int64_t kh, std::int64_t kw, std::int64_t oh, float* dx);

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {

// Forward in the implicit geometry (see ImplicitBwdWeights; g.w is the row stride of
// x) for the 8-pixel output vectors [v0, v1) of the batch (numbered image by image,
// row by row): y[n][k][p] = bias[k] (0 without bias) + sum over taps t of
// w[k * rows + t] * x[n][tap_offset[t] + pixel p's offset], y overwritten. Tiles of
// 4 output channels x 3 vectors (across images), 12 accumulators over all taps.
void forward_implicit_avx2(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias,
                           std::int64_t v0, std::int64_t v1, float* y);

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {

// The implicit backward-weights on a block of images packed so that every tap reads
// one evenly strided stream: x as [c][iy][n][16] (rows of 16 floats, image innermost)
// and dy as [k][oy][n][8] (8-pixel output rows). For steps p = oy * nb + n < steps:
//   dwt[t * k_count + k] += sum over lanes of dy[k][p * 8 + lane] * x[offset[t] + p * 16 + lane]
// with offset[t] = ((c * h + r) * nb) * 16 + s for tap t = (c, r, s).
void backward_weights_packed_avx2(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count,
                                  std::int64_t rows, const std::int64_t* offset, float* dwt);

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {

// The AVX-512 set (kernels/avx512/minibatch_kernels_avx512.cpp): the same contracts as
// the AVX2 kernels of the same name above, with 16-lane vectors. A vector of the
// implicit and packed kernels holds two 8-pixel segments (their pair of output rows or
// images need not be adjacent in memory). col2im_w8 has no AVX-512 form: one 8-pixel
// row is its natural vector, the AVX2 kernel runs on AVX-512 machines too.
void backward_weights_small_avx512(const float* dy, const float* col, std::int64_t kg, std::int64_t rows,
                                   std::int64_t depth, std::int64_t ld, float* dw);
void backward_weights_implicit_avx512(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0,
                                      std::int64_t n1, float* dwt);
void forward_implicit_avx512(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias,
                             std::int64_t v0, std::int64_t v1, float* y);
void backward_weights_packed_avx512(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count,
                                    std::int64_t rows, const std::int64_t* offset, float* dwt);

}  // namespace taihu::dnn::conv::minibatch_kernels
