// Scale: Caffe's ScaleLayer with a learned scale (and optional bias) over
// [axis, axis + num_axes) of the bottom, on dnn::scale_*. One bottom only.
#include <cstring>
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/caffe/filler.hpp"
#include "taihu/dnn/scale.hpp"

namespace taihu::caffe {
namespace {

class ScaleLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Scale"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void layer_setup(const BlobVec& bottom, const BlobVec&) override {
    const auto& sp = param_.scale_param();
    axis_ = bottom[0]->canonical_axis(sp.axis());
    const int num_axes = sp.num_axes() < 0 ? bottom[0]->num_axes() - axis_ : sp.num_axes();
    require(axis_ + num_axes <= bottom[0]->num_axes(), "num_axes reaches past the bottom's axes");
    end_ = axis_ + num_axes;
    if (blobs_.empty()) {
      std::vector<int> shape(bottom[0]->shape().begin() + axis_, bottom[0]->shape().begin() + end_);
      blobs_.push_back(std::make_shared<Blob>(shape));
      if (sp.has_filler()) fill(sp.filler(), blobs_[0].get());
      else blobs_[0]->set_data(1.f);
      if (sp.bias_term()) {
        blobs_.push_back(std::make_shared<Blob>(shape));
        fill(sp.bias_filler(), blobs_[1].get());
      }
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    outer_ = bottom[0]->count(0, axis_);
    dim_ = bottom[0]->count(axis_, end_);
    inner_ = bottom[0]->count(end_);
    require(dim_ == blobs_[0]->count(), "scale size " + blobs_[0]->shape_string() + " does not match the bottom " + bottom[0]->shape_string());
    if (top[0] != bottom[0]) top[0]->reshape_like(*bottom[0]);
    else x_copy_.reshape_like(*bottom[0]);
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    if (top[0] == bottom[0]) {
      std::memcpy(x_copy_.mutable_data(), bottom[0]->data(), static_cast<std::size_t>(bottom[0]->count()) * sizeof(float));
    }
    dnn::scale_forward<float>(outer_, dim_, inner_, bottom[0]->data(), blobs_[0]->data(),
                              blobs_.size() > 1 ? blobs_[1]->data() : nullptr, top[0]->mutable_data());
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    const float* x = top[0] == bottom[0] ? x_copy_.data() : bottom[0]->data();
    dnn::scale_backward<float>(outer_, dim_, inner_, x, blobs_[0]->data(), top[0]->diff(),
                               down[0] ? bottom[0]->mutable_diff() : nullptr, blobs_[0]->mutable_diff(),
                               blobs_.size() > 1 ? blobs_[1]->mutable_diff() : nullptr, true);
  }

 private:
  int axis_ = 1, end_ = 2;
  dnn::index_t outer_ = 1, dim_ = 1, inner_ = 1;
  Blob x_copy_;
};

}  // namespace

void register_scale_layer(LayerRegistry& r) { add_layer<ScaleLayer>(r, "Scale"); }

}  // namespace taihu::caffe
