// Pooling: Caffe's PoolingLayer (MAX, AVE; global pooling; Caffe's ceil rounding)
// on dnn::pooling_forward/backward (which has its own kernels for MAX 2x2 stride 2,
// LeNet's pools).
#include <cstdint>
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/dnn/pooling.hpp"

namespace taihu::caffe {
namespace {

class PoolingLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Pooling"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void layer_setup(const BlobVec&, const BlobVec&) override {
    const auto& pp = param_.pooling_param();
    require(pp.pool() != proto::PoolingParameter::STOCHASTIC, "STOCHASTIC pooling is not supported");
    require(pp.round_mode() == proto::PoolingParameter::CEIL, "round_mode FLOOR is not supported (Caffe's default CEIL is)");
    s_.method = pp.pool() == proto::PoolingParameter::MAX ? dnn::PoolMethod::max : dnn::PoolMethod::average;
    global_ = pp.global_pooling();
    if (!global_) {
      require(pp.has_kernel_size() != (pp.has_kernel_h() && pp.has_kernel_w()),
              "give kernel_size or kernel_h and kernel_w");
      s_.kernel_h = pp.has_kernel_size() ? pp.kernel_size() : pp.kernel_h();
      s_.kernel_w = pp.has_kernel_size() ? pp.kernel_size() : pp.kernel_w();
      s_.stride_h = pp.has_stride_h() ? pp.stride_h() : pp.stride();
      s_.stride_w = pp.has_stride_w() ? pp.stride_w() : pp.stride();
      s_.pad_h = pp.has_pad_h() ? pp.pad_h() : pp.pad();
      s_.pad_w = pp.has_pad_w() ? pp.pad_w() : pp.pad();
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    const Blob& x = *bottom[0];
    require(x.num_axes() == 4, "bottom must be 4-D, got " + x.shape_string());
    s_.batch = x.shape(0); s_.channels = x.shape(1); s_.height = x.shape(2); s_.width = x.shape(3);
    if (global_) {
      s_.kernel_h = s_.height; s_.kernel_w = s_.width;
      s_.stride_h = s_.stride_w = 1; s_.pad_h = s_.pad_w = 0;
    }
    try {
      s_.validate("Pooling");
    } catch (const std::exception& e) {
      require(false, e.what());
    }
    top[0]->reshape({x.shape(0), x.shape(1), static_cast<int>(s_.out_h()), static_cast<int>(s_.out_w())});
    if (s_.method == dnn::PoolMethod::max) mask_.resize(static_cast<std::size_t>(top[0]->count()));
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    dnn::pooling_forward<float>(s_, bottom[0]->data(), top[0]->mutable_data(),
                                s_.method == dnn::PoolMethod::max ? mask_.data() : nullptr);
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    dnn::pooling_backward<float>(s_, top[0]->diff(), mask_.data(), bottom[0]->mutable_diff());
  }

 private:
  dnn::PoolingShape s_;
  bool global_ = false;
  std::vector<std::int32_t> mask_;
};

}  // namespace

void register_pooling_layer(LayerRegistry& r) { add_layer<PoolingLayer>(r, "Pooling"); }

}  // namespace taihu::caffe
