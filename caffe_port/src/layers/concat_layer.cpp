// Concat: Caffe's ConcatLayer along `axis` (or the legacy concat_dim) on dnn::concat_*.
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/dnn/concat.hpp"

namespace taihu::caffe {
namespace {

class ConcatLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Concat"; }
  int min_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const auto& cp = param_.concat_param();
    axis_ = bottom[0]->canonical_axis(cp.has_concat_dim() ? static_cast<int>(cp.concat_dim()) : cp.axis());
    std::vector<int> shape = bottom[0]->shape();
    channels_.clear();
    int total = 0;
    for (Blob* b : bottom) {
      require(b->num_axes() == bottom[0]->num_axes(), "bottoms must have the same number of axes");
      for (int a = 0; a < b->num_axes(); ++a) {
        require(a == axis_ || b->shape(a) == shape[static_cast<std::size_t>(a)],
                "bottoms differ in axis " + std::to_string(a) + " (" + b->shape_string() + " vs " + bottom[0]->shape_string() + ")");
      }
      channels_.push_back(b->shape(axis_));
      total += b->shape(axis_);
    }
    shape[static_cast<std::size_t>(axis_)] = total;
    top[0]->reshape(shape);
    outer_ = bottom[0]->count(0, axis_);
    inner_ = bottom[0]->count(axis_ + 1);
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    std::vector<const float*> in;
    for (Blob* b : bottom) in.push_back(b->data());
    dnn::concat_forward<float>(outer_, inner_, channels_, in, top[0]->mutable_data());
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    std::vector<float*> dx;
    for (std::size_t i = 0; i < bottom.size(); ++i) dx.push_back(down[i] ? bottom[i]->mutable_diff() : nullptr);
    dnn::concat_backward<float>(outer_, inner_, channels_, top[0]->diff(), dx);
  }

 private:
  int axis_ = 1;
  dnn::index_t outer_ = 1, inner_ = 1;
  std::vector<dnn::index_t> channels_;
};

}  // namespace

void register_concat_layer(LayerRegistry& r) { add_layer<ConcatLayer>(r, "Concat"); }

}  // namespace taihu::caffe
