// Softmax over softmax_param.axis on dnn::softmax_*.
#include "layers/builtin_layers.hpp"
#include "taihu/dnn/softmax.hpp"

namespace taihu::caffe {
namespace {

class SoftmaxLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Softmax"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }
  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const int axis = bottom[0]->canonical_axis(param_.softmax_param().axis());
    outer_ = bottom[0]->count(0, axis);
    channels_ = bottom[0]->shape(axis);
    inner_ = bottom[0]->count(axis + 1);
    if (top[0] != bottom[0]) top[0]->reshape_like(*bottom[0]);
  }
  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::softmax_forward<float>(outer_, channels_, inner_, bottom[0]->data(), top[0]->mutable_data());
  }
  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::softmax_backward<float>(outer_, channels_, inner_, top[0]->data(), top[0]->diff(), bottom[0]->mutable_diff());
  }

 private:
  dnn::index_t outer_ = 1, channels_ = 1, inner_ = 1;
};

}  // namespace

void register_softmax_layer(LayerRegistry& r) { add_layer<SoftmaxLayer>(r, "Softmax"); }

}  // namespace taihu::caffe
