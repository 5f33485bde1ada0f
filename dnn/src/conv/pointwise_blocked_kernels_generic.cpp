// Portable 1x1 nChw8c kernels (see pointwise_blocked_kernels.hpp): plain loops.
#include "pointwise_blocked_kernels.hpp"

namespace taihu::dnn::conv {

void pwb_fwd_generic(const PwbFwdArgs& a) {
  for (std::int64_t p = 0; p < a.pixels; ++p)
    for (int b = 0; b < a.nb; ++b) {
      float acc[8];
      float* yv = a.y + b * a.y_bstride + p * 8;
      for (int m = 0; m < 8; ++m)
        acc[m] = a.accumulate ? yv[m] : (a.bias ? a.bias[b * 8 + m] : 0.0f);
      for (std::int64_t c = 0; c < a.cblocks * 8; ++c) {
        const float xv = a.x[(c / 8) * a.x_bstride + p * 8 + c % 8];
        const float* wv = a.w + c * a.nb * 8 + b * 8;
        for (int m = 0; m < 8; ++m) acc[m] += wv[m] * xv;
      }
      for (int m = 0; m < 8; ++m) yv[m] = acc[m];
    }
}

void pwb_bwdw_generic(const PwbBwdwArgs& a) {
  for (int j = 0; j < a.cols; ++j) {
    const std::int64_t c = a.c0 + j;
    const float* xc = a.x + (c / 8) * a.x_bstride + c % 8;
    for (int b = 0; b < a.nb; ++b) {
      float* acc = a.acc + j * a.acc_cstride + b * 8;
      if (a.zero_init)
        for (int m = 0; m < 8; ++m) acc[m] = 0.0f;
      for (std::int64_t p = 0; p < a.pixels; ++p) {
        const float* dv = a.dy + b * a.dy_bstride + p * 8;
        for (int m = 0; m < 8; ++m) acc[m] += dv[m] * xc[p * 8];
      }
    }
  }
}

void pwb_dw_store_generic(const float* acc, std::int64_t rows, std::int64_t cols, float* dw,
                          std::int64_t ldd, bool accumulate) {
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t l = 0; l < rows; ++l)
      dw[l * ldd + c] = accumulate ? dw[l * ldd + c] + acc[c * 32 + l] : acc[c * 32 + l];
}

}  // namespace taihu::dnn::conv
