// ReLU (with negative_slope), Sigmoid, TanH on dnn's activations; in place allowed.
#include "layers/builtin_layers.hpp"
#include "taihu/dnn/activation.hpp"

namespace taihu::caffe {
namespace {

class NeuronLayer : public Layer {
 public:
  using Layer::Layer;
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }
  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    if (top[0] != bottom[0]) top[0]->reshape_like(*bottom[0]);
  }
};

class ReLULayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  const char* type() const override { return "ReLU"; }
  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::relu_forward<float>(bottom[0]->count(), bottom[0]->data(), top[0]->mutable_data(),
                             param_.relu_param().negative_slope());
  }
  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::relu_backward<float>(bottom[0]->count(), bottom[0]->data(), top[0]->diff(), bottom[0]->mutable_diff(),
                              param_.relu_param().negative_slope());
  }
};

class SigmoidLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  const char* type() const override { return "Sigmoid"; }
  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::sigmoid_forward<float>(bottom[0]->count(), bottom[0]->data(), top[0]->mutable_data());
  }
  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::sigmoid_backward<float>(top[0]->count(), top[0]->data(), top[0]->diff(), bottom[0]->mutable_diff());
  }
};

class TanHLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  const char* type() const override { return "TanH"; }
  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::tanh_forward<float>(bottom[0]->count(), bottom[0]->data(), top[0]->mutable_data());
  }
  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::tanh_backward<float>(top[0]->count(), top[0]->data(), top[0]->diff(), bottom[0]->mutable_diff());
  }
};

}  // namespace

void register_activation_layers(LayerRegistry& r) {
  add_layer<ReLULayer>(r, "ReLU");
  add_layer<SigmoidLayer>(r, "Sigmoid");
  add_layer<TanHLayer>(r, "TanH");
}

}  // namespace taihu::caffe
