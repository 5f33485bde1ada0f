// Accuracy: Caffe's AccuracyLayer (top_k, axis, ignore_label): the fraction of
// positions whose true class is among the top_k scores (ties count against, as Caffe);
// an optional second top gives the per-class accuracy. No backward.
#include "layers/builtin_layers.hpp"

namespace taihu::caffe {
namespace {

class AccuracyLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Accuracy"; }
  int exact_bottoms() const override { return 2; }
  int min_tops() const override { return 1; }
  int max_tops() const override { return 2; }
  bool allow_force_backward(int) const override { return false; }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const auto& ap = param_.accuracy_param();
    axis_ = bottom[0]->canonical_axis(ap.axis());
    outer_ = bottom[0]->count(0, axis_);
    classes_ = bottom[0]->shape(axis_);
    inner_ = bottom[0]->count(axis_ + 1);
    require(static_cast<std::int64_t>(ap.top_k()) <= classes_, "top_k " + std::to_string(ap.top_k()) +
                                                                    " exceeds the number of classes " + std::to_string(classes_));
    require(bottom[1]->count() == outer_ * inner_, "label count " + std::to_string(bottom[1]->count()) +
                                                       " must equal " + std::to_string(outer_ * inner_));
    top[0]->reshape({});
    if (top.size() > 1) top[1]->reshape({static_cast<int>(classes_)});
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    const auto& ap = param_.accuracy_param();
    const float* x = bottom[0]->data();
    const float* label = bottom[1]->data();
    std::vector<double> per_class_ok(static_cast<std::size_t>(classes_), 0), per_class_n(static_cast<std::size_t>(classes_), 0);
    double ok = 0, n = 0;
    for (std::int64_t i = 0; i < outer_; ++i) {
      for (std::int64_t j = 0; j < inner_; ++j) {
        const auto l = static_cast<std::int64_t>(label[i * inner_ + j]);
        if (ap.has_ignore_label() && l == ap.ignore_label()) continue;
        require(l >= 0 && l < classes_, "label " + std::to_string(l) + " outside [0, " + std::to_string(classes_) + ")");
        const float truth = x[(i * classes_ + l) * inner_ + j];
        std::int64_t better = -1;  // the true class counts itself
        for (std::int64_t k = 0; k < classes_; ++k) better += x[(i * classes_ + k) * inner_ + j] >= truth;
        const bool hit = better < static_cast<std::int64_t>(ap.top_k());
        ok += hit;
        n += 1;
        per_class_ok[static_cast<std::size_t>(l)] += hit;
        per_class_n[static_cast<std::size_t>(l)] += 1;
      }
    }
    top[0]->mutable_data()[0] = n > 0 ? static_cast<float>(ok / n) : 0.f;
    if (top.size() > 1) {
      for (std::int64_t k = 0; k < classes_; ++k) {
        const auto uk = static_cast<std::size_t>(k);
        top[1]->mutable_data()[k] = per_class_n[uk] > 0 ? static_cast<float>(per_class_ok[uk] / per_class_n[uk]) : 0.f;
      }
    }
  }

  void backward(const BlobVec&, const std::vector<bool>& down, const BlobVec&) override {
    for (bool d : down) require(!d, "has no backward");
  }

 private:
  int axis_ = 1;
  std::int64_t outer_ = 1, classes_ = 1, inner_ = 1;
};

}  // namespace

void register_accuracy_layer(LayerRegistry& r) { add_layer<AccuracyLayer>(r, "Accuracy"); }

}  // namespace taihu::caffe
