// Caffe-style im2col + BLAS convolution anchor (see im2col_openblas_anchor.hpp).
#include "im2col_openblas_anchor.hpp"

#include <algorithm>

namespace taihu::bench {

namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
}

Im2colBlasConv::Im2colBlasConv(const dnn::ConvDesc& d, const CblasAnchor& blas)
    : d_(d), blas_(blas),
      col_(static_cast<std::size_t>(d.c / d.groups * d.kh * d.kw * d.out_h() * d.out_w())) {}

// Caffe's im2col_cpu for one group of one image.
void Im2colBlasConv::im2col(const float* x, float* col) const {
  const auto oh = d_.out_h(), ow = d_.out_w();
  for (dnn::index_t c = 0; c < d_.c / d_.groups; ++c)
    for (dnn::index_t r = 0; r < d_.kh; ++r)
      for (dnn::index_t s = 0; s < d_.kw; ++s)
        for (dnn::index_t oy = 0; oy < oh; ++oy) {
          const dnn::index_t iy = oy * d_.stride_h - d_.pad_h + r * d_.dil_h;
          for (dnn::index_t ox = 0; ox < ow; ++ox) {
            const dnn::index_t ix = ox * d_.stride_w - d_.pad_w + s * d_.dil_w;
            *col++ = (iy >= 0 && iy < d_.h && ix >= 0 && ix < d_.w) ? x[(c * d_.h + iy) * d_.w + ix] : 0.f;
          }
        }
}

void Im2colBlasConv::col2im(const float* col, float* x) const {
  const auto oh = d_.out_h(), ow = d_.out_w();
  std::fill(x, x + d_.c / d_.groups * d_.h * d_.w, 0.f);
  for (dnn::index_t c = 0; c < d_.c / d_.groups; ++c)
    for (dnn::index_t r = 0; r < d_.kh; ++r)
      for (dnn::index_t s = 0; s < d_.kw; ++s)
        for (dnn::index_t oy = 0; oy < oh; ++oy) {
          const dnn::index_t iy = oy * d_.stride_h - d_.pad_h + r * d_.dil_h;
          for (dnn::index_t ox = 0; ox < ow; ++ox, ++col) {
            const dnn::index_t ix = ox * d_.stride_w - d_.pad_w + s * d_.dil_w;
            if (iy >= 0 && iy < d_.h && ix >= 0 && ix < d_.w) x[(c * d_.h + iy) * d_.w + ix] += *col;
          }
        }
}

void Im2colBlasConv::forward(const float* x, const float* w, const float* bias, float* y) {
  const int kg = static_cast<int>(d_.k / d_.groups), rows = static_cast<int>(d_.c / d_.groups * d_.kh * d_.kw),
            plane = static_cast<int>(d_.out_h() * d_.out_w());
  for (dnn::index_t n = 0; n < d_.n; ++n)
    for (dnn::index_t g = 0; g < d_.groups; ++g) {
      im2col(x + (n * d_.c + g * (d_.c / d_.groups)) * d_.h * d_.w, col_.data());
      blas_.sgemm()(kRowMajor, kNoTrans, kNoTrans, kg, plane, rows, 1.f, w + g * kg * rows, rows,
                    col_.data(), plane, 0.f, y + (n * d_.k + g * kg) * plane, plane);
    }
  for (dnn::index_t n = 0; n < d_.n; ++n)
    for (dnn::index_t k = 0; k < d_.k; ++k)
      for (int p = 0; p < plane; ++p) y[(n * d_.k + k) * plane + p] += bias[k];
}

void Im2colBlasConv::backward_data(const float* dy, const float* w, float* dx) {
  const int kg = static_cast<int>(d_.k / d_.groups), rows = static_cast<int>(d_.c / d_.groups * d_.kh * d_.kw),
            plane = static_cast<int>(d_.out_h() * d_.out_w());
  for (dnn::index_t n = 0; n < d_.n; ++n)
    for (dnn::index_t g = 0; g < d_.groups; ++g) {
      blas_.sgemm()(kRowMajor, kTrans, kNoTrans, rows, plane, kg, 1.f, w + g * kg * rows, rows,
                    dy + (n * d_.k + g * kg) * plane, plane, 0.f, col_.data(), plane);
      col2im(col_.data(), dx + (n * d_.c + g * (d_.c / d_.groups)) * d_.h * d_.w);
    }
}

void Im2colBlasConv::backward_weights(const float* x, const float* dy, float* dw, float* db) {
  const int kg = static_cast<int>(d_.k / d_.groups), rows = static_cast<int>(d_.c / d_.groups * d_.kh * d_.kw),
            plane = static_cast<int>(d_.out_h() * d_.out_w());
  for (dnn::index_t n = 0; n < d_.n; ++n)
    for (dnn::index_t g = 0; g < d_.groups; ++g) {
      im2col(x + (n * d_.c + g * (d_.c / d_.groups)) * d_.h * d_.w, col_.data());
      blas_.sgemm()(kRowMajor, kNoTrans, kTrans, kg, rows, plane, 1.f, dy + (n * d_.k + g * kg) * plane,
                    plane, col_.data(), plane, n == 0 ? 0.f : 1.f, dw + g * kg * rows, rows);
    }
  for (dnn::index_t k = 0; k < d_.k; ++k) {
    float s = 0;
    for (dnn::index_t n = 0; n < d_.n; ++n)
      for (int p = 0; p < plane; ++p) s += dy[(n * d_.k + k) * plane + p];
    db[k] = s;
  }
}

}  // namespace taihu::bench
