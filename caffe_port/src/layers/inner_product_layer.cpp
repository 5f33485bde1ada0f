// InnerProduct: Caffe's fully connected layer (axis, transpose, bias) on
// dnn::inner_product_*. Weights [num_output][K] ([K][num_output] with transpose).
#include "layers/builtin_layers.hpp"
#include "taihu/caffe/filler.hpp"
#include "taihu/dnn/inner_product.hpp"

namespace taihu::caffe {
namespace {

class InnerProductLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "InnerProduct"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void layer_setup(const BlobVec& bottom, const BlobVec&) override {
    const auto& ip = param_.inner_product_param();
    require(ip.num_output() > 0, "num_output must be > 0");
    axis_ = bottom[0]->canonical_axis(ip.axis());
    const auto k = static_cast<int>(bottom[0]->count(axis_));
    const int n = blob_dim(ip.num_output(), where() + "num_output");
    if (blobs_.empty()) {
      blobs_.push_back(std::make_shared<Blob>(ip.transpose() ? std::vector<int>{k, n} : std::vector<int>{n, k}));
      fill(ip.weight_filler(), blobs_[0].get());
      if (ip.bias_term()) {
        blobs_.push_back(std::make_shared<Blob>(std::vector<int>{n}));
        fill(ip.bias_filler(), blobs_[1].get());
      }
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const auto& ip = param_.inner_product_param();
    s_.batch = bottom[0]->count(0, axis_);
    s_.inputs = bottom[0]->count(axis_);
    s_.outputs = ip.num_output();
    s_.transpose = ip.transpose();
    require(s_.inputs * s_.outputs == blobs_[0]->count(),
            "input size " + std::to_string(s_.inputs) + " does not match the weights " + blobs_[0]->shape_string());
    std::vector<int> shape(bottom[0]->shape().begin(), bottom[0]->shape().begin() + axis_);
    shape.push_back(static_cast<int>(s_.outputs));
    top[0]->reshape(shape);
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::inner_product_forward<float>(s_, bottom[0]->data(), blobs_[0]->data(),
                                      blobs_.size() > 1 ? blobs_[1]->data() : nullptr, top[0]->mutable_data());
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    dnn::inner_product_backward_weights<float>(s_, bottom[0]->data(), top[0]->diff(), blobs_[0]->mutable_diff(),
                                               blobs_.size() > 1 ? blobs_[1]->mutable_diff() : nullptr, true);
    if (down[0]) dnn::inner_product_backward_data<float>(s_, top[0]->diff(), blobs_[0]->data(), bottom[0]->mutable_diff());
  }

 private:
  int axis_ = 1;
  dnn::InnerProductShape s_;
};

}  // namespace

void register_inner_product_layer(LayerRegistry& r) { add_layer<InnerProductLayer>(r, "InnerProduct"); }

}  // namespace taihu::caffe
