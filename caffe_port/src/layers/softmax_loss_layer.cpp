// SoftmaxWithLoss: softmax + multinomial logistic loss with Caffe's normalization
// modes and ignore_label, on dnn::softmax_loss_*. Tops: loss (+ probabilities).
#include "layers/builtin_layers.hpp"
#include "taihu/dnn/softmax.hpp"

namespace taihu::caffe {
namespace {

class SoftmaxWithLossLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "SoftmaxWithLoss"; }
  int exact_bottoms() const override { return 2; }
  int min_tops() const override { return 1; }
  int max_tops() const override { return 2; }
  bool is_loss() const override { return true; }
  bool allow_force_backward(int bottom) const override { return bottom != 1; }

  void layer_setup(const BlobVec&, const BlobVec&) override {
    const auto& lp = param_.loss_param();
    using N = proto::LossParameter;
    N::NormalizationMode mode = N::VALID;
    if (lp.has_normalization()) mode = lp.normalization();
    else if (lp.has_normalize()) mode = lp.normalize() ? N::VALID : N::BATCH_SIZE;
    p_.normalization = mode == N::FULL ? dnn::LossNormalization::full
                       : mode == N::VALID ? dnn::LossNormalization::valid
                       : mode == N::BATCH_SIZE ? dnn::LossNormalization::batch_size
                                               : dnn::LossNormalization::none;
    p_.has_ignore_label = lp.has_ignore_label();
    p_.ignore_label = lp.ignore_label();
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const int axis = bottom[0]->canonical_axis(param_.softmax_param().axis());
    p_.outer = bottom[0]->count(0, axis);
    p_.channels = bottom[0]->shape(axis);
    p_.inner = bottom[0]->count(axis + 1);
    require(bottom[1]->count() == p_.outer * p_.inner,
            "label count " + std::to_string(bottom[1]->count()) + " must equal the prediction count " +
                std::to_string(p_.outer * p_.inner) + " (outer x inner of " + bottom[0]->shape_string() + ")");
    top[0]->reshape({});
    prob_.reshape_like(*bottom[0]);
    if (top.size() > 1) {
      top[1]->reshape_like(*bottom[0]);
      top[1]->share_data(prob_);
    }
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    try {
      top[0]->mutable_data()[0] =
          dnn::softmax_loss_forward<float>(p_, bottom[0]->data(), bottom[1]->data(), prob_.mutable_data());
    } catch (const std::exception& e) {
      require(false, e.what());
    }
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    require(!down[1], "cannot backpropagate to the labels");
    if (!down[0]) return;
    dnn::softmax_loss_backward<float>(p_, prob_.data(), bottom[1]->data(), top[0]->diff()[0], bottom[0]->mutable_diff());
  }

 private:
  dnn::SoftmaxLossParams p_;
  Blob prob_;
};

}  // namespace

void register_softmax_loss_layer(LayerRegistry& r) { add_layer<SoftmaxWithLossLayer>(r, "SoftmaxWithLoss"); }

}  // namespace taihu::caffe
