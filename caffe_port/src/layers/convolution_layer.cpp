// Convolution: Caffe's ConvolutionLayer (2-D, groups, dilation, bias) on
// taihu::dnn::Convolution. Weights [num_output][channels/group][kh][kw], bias
// [num_output]. Several bottoms share the weights (one top each).
#include <memory>

#include "layers/builtin_layers.hpp"
#include "taihu/caffe/filler.hpp"
#include "taihu/dnn/conv.hpp"

namespace taihu::caffe {
namespace {

class ConvolutionLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Convolution"; }
  int min_bottoms() const override { return 1; }
  int min_tops() const override { return 1; }

  void layer_setup(const BlobVec& bottom, const BlobVec& top) override {
    const auto& cp = param_.convolution_param();
    require(bottom.size() == top.size(), "needs as many tops as bottoms");
    require(cp.axis() == 1, "only axis 1 (NCHW) is supported");
    require(bottom[0]->num_axes() == 4, "bottom must be 4-D (N C H W), got " + bottom[0]->shape_string());
    auto pick = [&](const auto& repeated, bool has_hw, unsigned h, unsigned w, unsigned dflt,
                    const char* name, unsigned* out_h, unsigned* out_w) {
      if (has_hw) {
        require(repeated.size() == 0, std::string(name) + " and " + name + "_h/_w are exclusive");
        *out_h = h;
        *out_w = w;
      } else if (repeated.size() == 0) {
        *out_h = *out_w = dflt;
      } else {
        require(repeated.size() <= 2, std::string(name) + " takes 1 or 2 values (2-D only)");
        *out_h = repeated.Get(0);
        *out_w = repeated.Get(repeated.size() - 1);
      }
    };
    unsigned kh, kw, sh, sw, ph, pw, dh, dw;
    require(cp.kernel_size_size() > 0 || (cp.has_kernel_h() && cp.has_kernel_w()),
            "kernel_size (or kernel_h and kernel_w) is required");
    pick(cp.kernel_size(), cp.has_kernel_h() || cp.has_kernel_w(), cp.kernel_h(), cp.kernel_w(), 1, "kernel_size", &kh, &kw);
    pick(cp.stride(), cp.has_stride_h() || cp.has_stride_w(), cp.stride_h(), cp.stride_w(), 1, "stride", &sh, &sw);
    pick(cp.pad(), cp.has_pad_h() || cp.has_pad_w(), cp.pad_h(), cp.pad_w(), 0, "pad", &ph, &pw);
    pick(cp.dilation(), false, 0, 0, 1, "dilation", &dh, &dw);
    require(cp.num_output() > 0, "num_output must be > 0");
    desc_.k = cp.num_output();
    desc_.kh = kh; desc_.kw = kw;
    desc_.stride_h = sh; desc_.stride_w = sw;
    desc_.pad_h = ph; desc_.pad_w = pw;
    desc_.dil_h = dh; desc_.dil_w = dw;
    desc_.groups = cp.group();
    const int channels = bottom[0]->shape(1);
    require(channels % static_cast<int>(cp.group()) == 0 && cp.num_output() % cp.group() == 0,
            "group " + std::to_string(cp.group()) + " must divide channels " + std::to_string(channels) +
                " and num_output " + std::to_string(cp.num_output()));
    if (blobs_.empty()) {
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{static_cast<int>(cp.num_output()),
                                                               channels / static_cast<int>(cp.group()),
                                                               static_cast<int>(kh), static_cast<int>(kw)}));
      fill(cp.weight_filler(), blobs_[0].get());
      if (cp.bias_term()) {
        blobs_.push_back(std::make_shared<Blob>(std::vector<int>{static_cast<int>(cp.num_output())}));
        fill(cp.bias_filler(), blobs_[1].get());
      }
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const Blob& x = *bottom[0];
    for (std::size_t i = 1; i < bottom.size(); ++i) {
      require(bottom[i]->shape() == x.shape(), "all bottoms must have the same shape");
    }
    dnn::ConvDesc d = desc_;
    d.n = x.shape(0); d.c = x.shape(1); d.h = x.shape(2); d.w = x.shape(3);
    if (!conv_ || !(conv_->desc() == d)) {
      try {
        conv_ = std::make_unique<dnn::Convolution>(d);
      } catch (const std::exception& e) {
        require(false, e.what());
      }
    }
    for (Blob* t : top) {
      t->reshape({static_cast<int>(d.n), static_cast<int>(d.k), static_cast<int>(d.out_h()), static_cast<int>(d.out_w())});
    }
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    const float* bias = blobs_.size() > 1 ? blobs_[1]->data() : nullptr;
    for (std::size_t i = 0; i < bottom.size(); ++i) {
      conv_->forward(bottom[i]->data(), blobs_[0]->data(), bias, top[i]->mutable_data());
    }
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    float* dbias = blobs_.size() > 1 ? blobs_[1]->mutable_diff() : nullptr;
    for (std::size_t i = 0; i < top.size(); ++i) {
      conv_->backward_weights(bottom[i]->data(), top[i]->diff(), blobs_[0]->mutable_diff(), dbias, true);
      if (down[i]) conv_->backward_data(top[i]->diff(), blobs_[0]->data(), bottom[i]->mutable_diff());
    }
  }

 private:
  dnn::ConvDesc desc_;
  std::unique_ptr<dnn::Convolution> conv_;
};

}  // namespace

void register_convolution_layer(LayerRegistry& r) { add_layer<ConvolutionLayer>(r, "Convolution"); }

}  // namespace taihu::caffe
