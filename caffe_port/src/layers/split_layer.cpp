// Split (inserted by the Net): every top shares the bottom's data; backward sums the
// tops' diffs into the bottom diff (dnn::split_backward).
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/dnn/concat.hpp"

namespace taihu::caffe {
namespace {

class SplitLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Split"; }
  int exact_bottoms() const override { return 1; }
  int min_tops() const override { return 1; }
  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    for (Blob* t : top) {
      require(t != bottom[0], "in-place split is not allowed");
      t->reshape_like(*bottom[0]);
      t->share_data(*bottom[0]);
    }
  }
  void forward(const BlobVec&, const BlobVec&) override {}
  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    std::vector<const float*> dys;
    for (Blob* t : top) dys.push_back(t->diff());
    dnn::split_backward<float>(bottom[0]->count(), dys, bottom[0]->mutable_diff());
  }
};

}  // namespace

void register_split_layer(LayerRegistry& r) { add_layer<SplitLayer>(r, "Split"); }

}  // namespace taihu::caffe
