// Portable 1x1 nChw8c / nChw16c kernels (see pointwise_blocked_kernels.hpp): plain loops
// over blocks of B lanes.
#include <algorithm>

#include "conv/pointwise_blocked_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

template <int B>
void fwd(const PwbFwdArgs& a) {
  for (std::int64_t p = 0; p < a.pixels; ++p)
    for (int b = 0; b < a.nb; ++b) {
      float acc[B];
      float* yv = a.y + b * a.y_bstride + p * B;
      for (int m = 0; m < B; ++m) acc[m] = a.accumulate ? yv[m] : (a.bias ? a.bias[b * B + m] : 0.0f);
      for (std::int64_t c = 0; c < a.cblocks * B; ++c) {
        const float xv = a.x[(c / B) * a.x_bstride + p * B + c % B];
        const float* wv = a.w + c * a.nb * B + b * B;
        for (int m = 0; m < B; ++m) acc[m] += wv[m] * xv;
      }
      for (int m = 0; m < B; ++m) yv[m] = acc[m];
    }
}

template <int B>
void bwdw(const PwbBwdwArgs& a) {
  for (int j = 0; j < a.cols; ++j) {
    const std::int64_t c = a.c0 + j;
    const float* xc = a.x + (c / B) * a.x_bstride + c % B;
    for (int b = 0; b < a.nb; ++b) {
      float* acc = a.acc + j * a.acc_cstride + b * B;
      if (a.zero_init)
        for (int m = 0; m < B; ++m) acc[m] = 0.0f;
      for (std::int64_t p = 0; p < a.pixels; ++p) {
        const float* dv = a.dy + b * a.dy_bstride + p * B;
        for (int m = 0; m < B; ++m) acc[m] += dv[m] * xc[p * B];
      }
    }
  }
}

}  // namespace

void pwb16_bwdw_x_generic(const PwbBwdwXArgs& a) {
  constexpr int B = 16;
  for (int j = 0; j < a.rows; ++j)
    for (int v = 0; v < a.vecs; ++v) {
      const int lanes = v == a.vecs - 1 ? a.last_lanes : B;
      float* d = a.dw + j * a.ldw + v * B;
      for (int l = 0; l < lanes; ++l) {
        float acc = a.accumulate ? d[l] : 0.0f;
        for (std::int64_t r = 0; r < a.runs; ++r)
          for (std::int64_t p = 0; p < a.pixels; ++p)
            acc += a.dy[r * a.dy_rstride + p * B + j] * a.x[v * a.x_bstride + r * a.x_rstride + p * B + l];
        d[l] = acc;
      }
    }
}

void tap_interleave_generic(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                            float* dst, bool accumulate) {
  for (std::int64_t c = 0; c < channels; ++c)
    for (std::int64_t t = 0; t < taps; ++t)
      dst[c * taps + t] = accumulate ? dst[c * taps + t] + src[t * tap_stride + c] : src[t * tap_stride + c];
}

void pwb_fwd_generic(const PwbFwdArgs& a) { fwd<8>(a); }
void pwb_bwdw_generic(const PwbBwdwArgs& a) { bwdw<8>(a); }
void pwb16_fwd_generic(const PwbFwdArgs& a) { fwd<16>(a); }

void pwb16_bias_sums_generic(const float* dy, std::int64_t pixels, double* s) {
  for (std::int64_t p0 = 0; p0 < pixels; p0 += 8) {
    const std::int64_t p1 = std::min<std::int64_t>(pixels, p0 + 8);
    for (int l = 0; l < 16; ++l) {
      float r = dy[p0 * 16 + l];
      for (std::int64_t p = p0 + 1; p < p1; ++p) r += dy[p * 16 + l];
      s[l] += r;
    }
  }
}

void pwb_dw_store_generic(const float* acc, std::int64_t G, std::int64_t rows, std::int64_t cols, float* dw,
                          std::int64_t ldd, bool accumulate) {
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t l = 0; l < rows; ++l)
      dw[l * ldd + c] = accumulate ? dw[l * ldd + c] + acc[c * G + l] : acc[c * G + l];
}

}  // namespace taihu::dnn::conv
