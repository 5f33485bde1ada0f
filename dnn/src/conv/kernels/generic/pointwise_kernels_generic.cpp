// Portable 1x1-convolution micro-kernel and transpose (see pointwise_kernels.hpp):
// plain loops.
#include "conv/pointwise_kernels.hpp"

namespace taihu::dnn::conv {

void pw_fwd_generic(const PwFwdArgs& a) {
  for (int t = 0; t < a.tiles; ++t) {
    const int rows = t == a.tiles - 1 ? a.rows : kPwRows;
    const float* w = a.w + t * a.w_tile_stride;
    float* y = a.y + t * kPwRows * a.y_kstride;
    // Tile 0 reads x (and copies it when asked), the later ones the copy.
    const bool from_copy = a.x_copy && t > 0;
    const float* x = from_copy ? a.x_copy : a.x;
    const std::int64_t x_cstride = from_copy ? kPwPixels : a.x_cstride;
    float acc[kPwRows][kPwPixels] = {};
    for (std::int64_t c = 0; c < a.channels; ++c) {
      const float* xr = x + c * x_cstride;
      if (a.x_copy && t == 0)
        for (int p = 0; p < kPwPixels; ++p) a.x_copy[c * kPwPixels + p] = p < a.pixels ? xr[p] : 0.0f;
      for (int m = 0; m < rows; ++m)
        for (int p = 0; p < a.pixels; ++p) acc[m][p] += w[c * a.w_cstride + m] * xr[p];
    }
    for (int m = 0; m < rows; ++m) {
      float* yr = y + m * a.y_kstride;
      const float b = a.bias ? a.bias[t * kPwRows + m] : 0.0f;
      for (int p = 0; p < a.pixels; ++p) {
        float v = a.accumulate ? yr[p] + acc[m][p] : acc[m][p];
        if (a.bias) v += b;
        yr[p] = a.relu && v < 0.0f ? 0.0f : v;
      }
    }
  }
}

void pw_transpose_generic(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols,
                          float* dst, std::int64_t dst_stride) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
}

void pw_pack4_generic(const float* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols, float* dst,
                      std::int64_t block_stride) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += 4)
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t u = 0; u < 4; ++u)
        dst[i0 / 4 * block_stride + j * 4 + u] = i0 + u < rows ? src[(i0 + u) * src_stride + j] : 0.0f;
}

}  // namespace taihu::dnn::conv
