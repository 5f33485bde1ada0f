// Caffe's CPU convolution as the second anchor: per image and group, im2col into a
// column buffer and one cblas_sgemm of a dlopen'ed OpenBLAS (backward-data: sgemm then
// col2im; backward-weights: sgemm accumulated over images), as BVLC Caffe's
// BaseConvolutionLayer does. Its im2col/col2im are written here from Caffe's definition.
#pragma once
#include <vector>

#include "cblas_anchor.hpp"
#include "taihu/dnn/conv.hpp"

namespace taihu::bench {

class Im2colBlasConv {
 public:
  Im2colBlasConv(const dnn::ConvDesc& d, const CblasAnchor& blas);
  void forward(const float* x, const float* w, const float* bias, float* y);
  void backward_data(const float* dy, const float* w, float* dx);
  void backward_weights(const float* x, const float* dy, float* dw, float* db);

 private:
  void im2col(const float* x, float* col) const;
  void col2im(const float* col, float* x) const;
  dnn::ConvDesc d_;
  const CblasAnchor& blas_;
  std::vector<float> col_;
};

}  // namespace taihu::bench
