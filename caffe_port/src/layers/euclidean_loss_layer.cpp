// EuclideanLoss: Caffe's sum of squared differences / (2 N), N = bottom[0].shape(0).
// An elementwise reduction with no dnn/ operator behind it (it is not a hot spot).
#include <vector>

#include "layers/builtin_layers.hpp"

namespace taihu::caffe {
namespace {

class EuclideanLossLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "EuclideanLoss"; }
  int exact_bottoms() const override { return 2; }
  int exact_tops() const override { return 1; }
  bool is_loss() const override { return true; }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    require(bottom[0]->count() == bottom[1]->count(), "bottoms must have equal counts (" + bottom[0]->shape_string() +
                                                          " vs " + bottom[1]->shape_string() + ")");
    diff_.resize(static_cast<std::size_t>(bottom[0]->count()));
    top[0]->reshape({});
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    const float* a = bottom[0]->data();
    const float* b = bottom[1]->data();
    double sum = 0;
    for (std::size_t i = 0; i < diff_.size(); ++i) {
      diff_[i] = a[i] - b[i];
      sum += static_cast<double>(diff_[i]) * diff_[i];
    }
    top[0]->mutable_data()[0] = static_cast<float>(sum / bottom[0]->shape(0) / 2);
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    for (std::size_t k = 0; k < 2; ++k) {
      if (!down[k]) continue;
      const float alpha = (k == 0 ? 1.f : -1.f) * top[0]->diff()[0] / static_cast<float>(bottom[k]->shape(0));
      float* d = bottom[k]->mutable_diff();
      for (std::size_t i = 0; i < diff_.size(); ++i) d[i] = alpha * diff_[i];
    }
  }

 private:
  std::vector<float> diff_;
};

}  // namespace

void register_euclidean_loss_layer(LayerRegistry& r) { add_layer<EuclideanLossLayer>(r, "EuclideanLoss"); }

}  // namespace taihu::caffe
