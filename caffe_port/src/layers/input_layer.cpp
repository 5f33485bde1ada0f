// Input: tops of fixed shapes (input_param.shape, one per top or one for all), filled
// by the caller (deploy nets, caffe time, tests).
#include "layers/builtin_layers.hpp"

namespace taihu::caffe {
namespace {

class InputLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Input"; }
  int exact_bottoms() const override { return 0; }
  int min_tops() const override { return 1; }
  void layer_setup(const BlobVec&, const BlobVec& top) override {
    const auto& ip = param_.input_param();
    const int n = ip.shape_size();
    require(n == 1 || n == static_cast<int>(top.size()),
            "input_param needs one shape, or one per top (" + std::to_string(top.size()) + "), got " + std::to_string(n));
    for (std::size_t i = 0; i < top.size(); ++i) {
      std::vector<int> shape;
      for (auto d : ip.shape(n == 1 ? 0 : static_cast<int>(i)).dim()) {
        shape.push_back(blob_dim(d, where() + "input_param.shape dim " + std::to_string(shape.size())));
      }
      top[i]->reshape(shape);
    }
  }
  void reshape(const BlobVec&, const BlobVec&) override {}
  void forward(const BlobVec&, const BlobVec&) override {}
  void backward(const BlobVec&, const std::vector<bool>&, const BlobVec&) override {}
};

}  // namespace

void register_input_layer(LayerRegistry& r) { add_layer<InputLayer>(r, "Input"); }

}  // namespace taihu::caffe
