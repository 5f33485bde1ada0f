// BatchNorm: Caffe's BatchNormLayer (no affine part; blobs mean_sum, var_sum, factor
// with lr_mult 0 when no param specs are given; use_global_stats defaults to TEST).
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/dnn/batch_norm.hpp"

namespace taihu::caffe {
namespace {

class BatchNormLayer : public Layer {
 public:
  explicit BatchNormLayer(const proto::LayerParameter& p) : Layer(p) {
    // Caffe: the statistics are not learned.
    if (param_.param_size() == 0) {
      for (int i = 0; i < 3; ++i) {
        auto* spec = param_.add_param();
        spec->set_lr_mult(0.f);
        spec->set_decay_mult(0.f);
      }
    }
  }
  const char* type() const override { return "BatchNorm"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void layer_setup(const BlobVec& bottom, const BlobVec&) override {
    const auto& bp = param_.batch_norm_param();
    use_global_ = bp.has_use_global_stats() ? bp.use_global_stats() : phase() == proto::TEST;
    const int c = bottom[0]->num_axes() > 1 ? bottom[0]->shape(1) : 1;
    if (blobs_.empty()) {
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{c}));
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{c}));
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{1}));
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const Blob& x = *bottom[0];
    s_.batch = x.shape(0);
    s_.channels = x.num_axes() > 1 ? x.shape(1) : 1;
    s_.spatial = x.count() / (s_.batch * s_.channels);
    require(s_.channels == blobs_[0]->count(), "channels " + std::to_string(s_.channels) + " do not match the statistics " + blobs_[0]->shape_string());
    if (top[0] != bottom[0]) top[0]->reshape_like(x);
    mean_.resize(static_cast<std::size_t>(s_.channels));
    var_.resize(static_cast<std::size_t>(s_.channels));
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    const float eps = param_.batch_norm_param().eps();
    if (use_global_) {
      dnn::batch_norm_global_stats<float>(s_.channels, blobs_[0]->data(), blobs_[1]->data(), blobs_[2]->data()[0],
                                          mean_.data(), var_.data());
      dnn::batch_norm_forward_inference<float>(s_, eps, mean_.data(), var_.data(), bottom[0]->data(), top[0]->mutable_data());
    } else {
      dnn::batch_norm_forward_training<float>(s_, eps, bottom[0]->data(), top[0]->mutable_data(), mean_.data(), var_.data());
      dnn::batch_norm_update_moving_average<float>(s_, param_.batch_norm_param().moving_average_fraction(), mean_.data(),
                                                   var_.data(), blobs_[0]->mutable_data(), blobs_[1]->mutable_data(),
                                                   blobs_[2]->mutable_data());
    }
    // Backward needs the normalised values; a later in-place layer (Scale) may
    // overwrite the top, so keep them (as Caffe's x_norm_).
    x_norm_.assign(top[0]->data(), top[0]->data() + top[0]->count());
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::batch_norm_backward<float>(s_, param_.batch_norm_param().eps(), x_norm_.data(), var_.data(), top[0]->diff(),
                                    bottom[0]->mutable_diff(), use_global_);
  }

 private:
  dnn::BatchNormShape s_;
  bool use_global_ = false;
  std::vector<float> mean_, var_, x_norm_;
};

}  // namespace

void register_batch_norm_layer(LayerRegistry& r) { add_layer<BatchNormLayer>(r, "BatchNorm"); }

}  // namespace taihu::caffe
