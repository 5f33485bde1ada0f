// Inner product (Caffe's InnerProduct / fully connected) forward and backward, through
// taihu::gemm. x is [batch][inputs] (Caffe flattens the axes from `axis` on into
// `inputs`), y is [batch][outputs]. Weights are [outputs][inputs] (transpose = false,
// Caffe's default) or [inputs][outputs] (transpose = true); bias is [outputs].
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

struct InnerProductShape {
  index_t batch = 1;    // M: rows of x and y
  index_t inputs = 1;   // K: features per row of x
  index_t outputs = 1;  // N: Caffe's num_output
  bool transpose = false;
  // Throws taihu::Error naming the first non-positive size.
  void validate(const char* what) const;
};

// y = x W^T (+ bias). bias may be null (bias_term: false).
template <class T>
void inner_product_forward(const InnerProductShape& s, const T* x, const T* weight, const T* bias,
                           T* y);

// dx = dy W (overwritten).
template <class T>
void inner_product_backward_data(const InnerProductShape& s, const T* dy, const T* weight, T* dx);

// dweight (+)= dy^T x (or x^T dy when transpose), dbias (+)= column sums of dy.
// dweight or dbias may be null to skip that gradient.
template <class T>
void inner_product_backward_weights(const InnerProductShape& s, const T* x, const T* dy, T* dweight,
                                    T* dbias, bool accumulate);

}  // namespace taihu::dnn
