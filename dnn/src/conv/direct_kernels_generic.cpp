// Portable direct-convolution micro-kernels (see direct_kernels.hpp): plain loops.
#include <algorithm>

#include "direct_kernels.hpp"

namespace taihu::dnn::conv {

void direct_fwd_generic(const DirectFwdArgs& a) {
  float acc[4][24] = {};
  for (std::int64_t c = 0; c < a.channels; ++c)
    for (std::int64_t t = 0; t < a.taps; ++t) {
      const float* xs = a.x + c * a.chan_stride + a.tap_off[t];
      const float* ws = a.w + (c * a.taps + t) * 4;
      for (int m = 0; m < a.rows; ++m)
        for (int p = 0; p < a.lanes; ++p) acc[m][p] += ws[m] * xs[p];
    }
  for (int m = 0; m < a.rows; ++m) {
    float* yr = a.y + m * a.y_kstride;
    const float b = a.bias ? a.bias[m] : 0.0f;
    for (int p = 0; p < a.lanes; ++p) yr[p] = a.accumulate ? yr[p] + acc[m][p] : acc[m][p] + b;
  }
}

void direct_bwdw_generic(const DirectBwdwArgs& a) {
  double acc[3][4] = {};
  for (std::int64_t r = 0; r < a.out_rows; ++r) {
    const float* dyr = a.dy + r * a.dy_row_stride;
    const float* xr = a.x + r * a.x_row_stride;
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
