// Portable direct-convolution micro-kernels (see direct_kernels.hpp): plain loops.
#include <algorithm>

#include "conv/direct_kernels.hpp"

namespace taihu::dnn::conv {

void direct_fwd_generic(const DirectFwdArgs& a) {
  for (int kb = 0; kb < a.kblocks; ++kb) {
    const float* w = a.w + kb * a.w_kblock;
    float* y = a.y + kb * a.y_kblock;
    float acc[kDirectRows][4][8] = {};
    for (std::int64_t c = 0; c < a.channels; ++c)
      for (std::int64_t t = 0; t < a.taps; ++t) {
        const float* ws = w + (c * a.taps + t) * kDirectRows;
        for (int v = 0; v < a.slots; ++v) {
          const float* xs = a.x + c * a.chan_stride + a.x_off[v] + a.tap_off[t];
          for (int m = 0; m < a.rows; ++m)
            for (int p = 0; p < a.lanes[v]; ++p) acc[m][v][p] += ws[m] * xs[p];
        }
      }
    for (int m = 0; m < a.rows; ++m) {
      const float b = a.bias ? a.bias[kb * a.rows + m] : 0.0f;
      for (int v = 0; v < a.slots; ++v) {
        float* yr = y + m * a.y_kstride + a.y_off[v];
        for (int p = 0; p < a.lanes[v]; ++p) {
          float val = (a.accumulate ? yr[p] + acc[m][v][p] : acc[m][v][p]) + b;
          if (a.relu) val = 0.0f > val ? 0.0f : val;
          yr[p] = val;
        }
      }
    }
  }
}

void direct_ocv_generic(const DirectOcvArgs& a) {
  const int np = ocv_pixels(a.nb);
  for (int i = 0; i < a.tiles; ++i)
    for (int b = 0; b < a.nb; ++b)
      for (int p = 0; p < np; ++p) {
        float* out = a.acc + b * a.acc_bstride + (i * np + p) * 8;
        float acc[8] = {};
        if (a.accumulate)
          std::copy(out, out + 8, acc);
        else if (a.bias_init)
          std::copy(a.bias_init + b * 8, a.bias_init + b * 8 + 8, acc);
        for (std::int64_t c = 0; c < a.channels; ++c)
          for (std::int64_t t = 0; t < a.taps; ++t) {
            const float xv = a.x[c * a.chan_stride + a.tap_off[t] + a.x_off[i * np + p]];
            const float* ws = a.w + (c * a.taps + t) * a.nb * 8 + b * 8;
            for (int m = 0; m < 8; ++m) acc[m] += ws[m] * xv;
          }
        std::copy(acc, acc + 8, out);
      }
}

void direct_ocv_store_generic(const DirectOcvStoreArgs& a) {
  for (int b = 0; b < a.nb; ++b) {
    const int rows = b == a.nb - 1 ? a.rows_last : 8;
    for (int m = 0; m < rows; ++m) {
      const float bias = a.bias ? a.bias[8 * b + m] : 0.0f;
      float* yr = a.y + (8 * b + m) * a.y_kstride;
      for (std::int64_t p = a.p_begin; p < a.p_end; ++p) {
        float val = a.acc[b * a.acc_bstride + p * 8 + m] + bias;
        if (a.accumulate) val += yr[p];
        if (a.relu) val = 0.0f > val ? 0.0f : val;
        yr[p] = val;
      }
    }
  }
}

void direct_bwdw_generic(const DirectBwdwArgs& a) {
  double acc[16][6] = {};
  for (std::int64_t img = 0; img < a.images; ++img)
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const float* dr = a.dyt + img * a.dyt_image_stride + r * a.dyt_row_stride;
      const float* xr = a.x + img * a.x_image_stride + r * a.x_row_stride;
      for (int m = 0; m < a.channels; ++m)
        for (int j = 0; j < a.cols; ++j) {
          float s = 0.0f;
          for (std::int64_t i = 0; i < a.run; ++i) s += dr[i * a.kpad + m] * xr[a.col_off[j] + i];
          acc[m][j] += s;
        }
    }
  for (int m = 0; m < a.channels; ++m)
    for (int j = 0; j < a.cols; ++j) a.dw[m * a.dw_kstride + j] += static_cast<float>(acc[m][j]);
}

void transpose_generic(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                       std::int64_t ldd) {
  for (std::int64_t p0 = 0; p0 < cols; p0 += 8)
    for (std::int64_t k = 0; k < rows; ++k)
      for (std::int64_t p = p0; p < std::min(cols, p0 + 8); ++p) dst[p * ldd + k] = src[k * lds + p];
}

}  // namespace taihu::dnn::conv
