// Portable direct-convolution micro-kernels (see direct_kernels.hpp): plain loops.
#include <algorithm>

#include "direct_kernels.hpp"

namespace taihu::dnn::conv {

void direct_fwd_generic(const DirectFwdArgs& a) {
  float acc[4][3][8] = {};
  for (std::int64_t c = 0; c < a.channels; ++c)
    for (std::int64_t t = 0; t < a.taps; ++t) {
      const float* ws = a.w + (c * a.taps + t) * 4;
      for (int v = 0; v < a.slots; ++v) {
        const float* xs = a.x + c * a.chan_stride + a.x_off[v] + a.tap_off[t];
        for (int m = 0; m < a.rows; ++m)
          for (int p = 0; p < a.lanes[v]; ++p) acc[m][v][p] += ws[m] * xs[p];
      }
    }
  for (int m = 0; m < a.rows; ++m) {
    const float b = a.bias ? a.bias[m] : 0.0f;
    for (int v = 0; v < a.slots; ++v) {
      float* yr = a.y + m * a.y_kstride + a.y_off[v];
      for (int p = 0; p < a.lanes[v]; ++p) yr[p] = a.accumulate ? yr[p] + acc[m][v][p] : acc[m][v][p] + b;
    }
  }
}

void direct_bwdw_generic(const DirectBwdwArgs& a) {
  double acc[3][4] = {};
  for (std::int64_t i = 0; i < a.images * a.out_rows; ++i) {
    const std::int64_t img = i / a.out_rows, r = i % a.out_rows;
    const float* dyr = a.dy + img * a.dy_image_stride + r * a.dy_row_stride;
    const float* xr = a.x + img * a.x_image_stride + r * a.x_row_stride;
    for (int m = 0; m < a.rows; ++m)
      for (int j = 0; j < a.cols; ++j) {
        float s = 0.0f;
        for (std::int64_t p = a.x0; p < a.x1; ++p) s += dyr[m * a.dy_kstride + p] * xr[a.col_off[j] + p];
        acc[m][j] += s;
      }
  }
  for (int m = 0; m < a.rows; ++m)
    for (int j = 0; j < a.cols; ++j) a.dw[m * a.dw_kstride + j] += static_cast<float>(acc[m][j]);
}

}  // namespace taihu::dnn::conv
