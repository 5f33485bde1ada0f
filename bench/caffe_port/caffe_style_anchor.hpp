// The anchor for bench_caffe: a training step executed the way BVLC Caffe's CPU mode
// does it, on the same net (same shapes and weights as a taihu::caffe::Net): im2col +
// cblas_sgemm per image for convolutions (col2im for the data gradient), cblas_sgemm
// for inner products, plain loops for pooling, ReLU, softmax loss and the SGD
// momentum update. BLAS is a dlopen'ed OpenBLAS; only BLAS runs multi-threaded, as in
// Caffe. Supported layers: Input, Split, Convolution (group 1), Pooling (MAX, AVE),
// InnerProduct, ReLU, SoftmaxWithLoss; anything else throws.
#pragma once
#include <map>
#include <vector>

#include "cblas_anchor.hpp"
#include "taihu/caffe/net.hpp"

namespace taihu::bench {

class CaffeStyleNet {
 public:
  CaffeStyleNet(const caffe::Net& net, const CblasAnchor& blas);
  // One SGD iteration: zero diffs, forward, backward, momentum update. Returns the loss.
  float train_step(float lr, float momentum);
  // Reporting only: mean seconds of each layer's forward and backward (layer order)
  // over `reps` forward+backward passes, timed one layer at a time.
  struct LayerTime {
    double forward = 0, backward = 0;
  };
  std::vector<LayerTime> time_layers(int reps);

 private:
  struct Buf {
    std::vector<float> data, diff;
  };
  struct LayerRef {
    std::string type;
    const caffe::Layer* layer;
    std::vector<int> bottoms, tops, shape_b, shape_t;  // blob ids
    std::vector<std::vector<int>> bshapes, tshapes;
    std::vector<int> params;  // ids into params_
    std::vector<int> mask;    // max pooling argmax
  };
  int blob_id(const caffe::Blob* b);
  void forward(LayerRef& l);
  void backward(LayerRef& l);
  void conv_forward(LayerRef& l);
  void conv_backward(LayerRef& l);
  void pool_forward(LayerRef& l);
  void pool_backward(LayerRef& l);
  void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) const;

  const CblasAnchor& blas_;
  std::map<const caffe::Blob*, int> ids_;
  std::vector<Buf> blobs_;
  std::vector<Buf> params_, history_;
  std::vector<LayerRef> layers_;
  std::vector<float> col_;
  float loss_ = 0;
};

}  // namespace taihu::bench
