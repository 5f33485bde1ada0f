// Eltwise: Caffe's EltwiseLayer (SUM with coefficients, PROD, MAX) on dnn::eltwise_*.
#include <cstdint>
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/dnn/eltwise.hpp"

namespace taihu::caffe {
namespace {

class EltwiseLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Eltwise"; }
  int min_bottoms() const override { return 2; }
  int exact_tops() const override { return 1; }

  void layer_setup(const BlobVec& bottom, const BlobVec&) override {
    const auto& ep = param_.eltwise_param();
    op_ = ep.operation() == proto::EltwiseParameter::SUM    ? dnn::EltwiseOp::sum
          : ep.operation() == proto::EltwiseParameter::PROD ? dnn::EltwiseOp::prod
                                                            : dnn::EltwiseOp::max;
    require(ep.coeff_size() == 0 || (op_ == dnn::EltwiseOp::sum && ep.coeff_size() == static_cast<int>(bottom.size())),
            "coeff is only for SUM and needs one value per bottom");
    coeffs_.assign(ep.coeff().begin(), ep.coeff().end());
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    for (Blob* b : bottom) require(b->shape() == bottom[0]->shape(), "bottoms must have equal shapes");
    top[0]->reshape_like(*bottom[0]);
    if (op_ == dnn::EltwiseOp::max) mask_.resize(static_cast<std::size_t>(top[0]->count()));
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    std::vector<const float*> in;
    for (Blob* b : bottom) in.push_back(b->data());
    dnn::eltwise_forward<float>(op_, top[0]->count(), in, coeffs_, top[0]->mutable_data(), mask_.data());
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    std::vector<const float*> in;
    for (Blob* b : bottom) in.push_back(b->data());
    for (std::size_t i = 0; i < bottom.size(); ++i) {
      if (!down[i]) continue;
      dnn::eltwise_backward<float>(op_, top[0]->count(), in, coeffs_, mask_.data(), top[0]->diff(),
                                   static_cast<dnn::index_t>(i), bottom[i]->mutable_diff());
    }
  }

 private:
  dnn::EltwiseOp op_ = dnn::EltwiseOp::sum;
  std::vector<float> coeffs_;
  std::vector<std::int32_t> mask_;
};

}  // namespace

void register_eltwise_layer(LayerRegistry& r) { add_layer<EltwiseLayer>(r, "Eltwise"); }

}  // namespace taihu::caffe
