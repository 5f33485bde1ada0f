// LRN: Caffe's local response normalization (across or within channels) on dnn::lrn_*.
#include "layers/builtin_layers.hpp"
#include "taihu/dnn/lrn.hpp"

namespace taihu::caffe {
namespace {

class LRNLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "LRN"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const Blob& x = *bottom[0];
    require(x.num_axes() == 4, "bottom must be 4-D, got " + x.shape_string());
    require(top[0] != bottom[0], "LRN cannot run in place");
    const auto& lp = param_.lrn_param();
    p_.batch = x.shape(0); p_.channels = x.shape(1); p_.height = x.shape(2); p_.width = x.shape(3);
    p_.local_size = lp.local_size();
    p_.alpha = lp.alpha(); p_.beta = lp.beta(); p_.k = lp.k();
    p_.region = lp.norm_region() == proto::LRNParameter::ACROSS_CHANNELS ? dnn::LrnRegion::across_channels
                                                                          : dnn::LrnRegion::within_channel;
    try {
      p_.validate("LRN");
    } catch (const std::exception& e) {
      require(false, e.what());
    }
    top[0]->reshape_like(x);
    scale_.reshape_like(x);
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::lrn_forward<float>(p_, bottom[0]->data(), top[0]->mutable_data(), scale_.mutable_data());
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::lrn_backward<float>(p_, bottom[0]->data(), top[0]->data(), scale_.data(), top[0]->diff(),
                             bottom[0]->mutable_diff());
  }

 private:
  dnn::LrnParams p_;
  Blob scale_;
};

}  // namespace

void register_lrn_layer(LayerRegistry& r) { add_layer<LRNLayer>(r, "LRN"); }

}  // namespace taihu::caffe
