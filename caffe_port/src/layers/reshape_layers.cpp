// Flatten and Reshape: views of the bottom (the top shares its data and diff).
#include <limits>
#include <vector>

#include "layers/builtin_layers.hpp"

namespace taihu::caffe {
namespace {

class ViewLayer : public Layer {
 public:
  using Layer::Layer;
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }
  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    require(top[0] != bottom[0], "cannot run in place");
    const std::vector<int> shape = top_shape(*bottom[0]);
    top[0]->reshape(shape);
    require(top[0]->count() == bottom[0]->count(), "output count " + std::to_string(top[0]->count()) +
                                                       " differs from the input count " + std::to_string(bottom[0]->count()));
    top[0]->share_data(*bottom[0]);
    top[0]->share_diff(*bottom[0]);
  }
  void forward(const BlobVec&, const BlobVec&) override {}
  void backward(const BlobVec&, const std::vector<bool>&, const BlobVec&) override {}

 protected:
  virtual std::vector<int> top_shape(const Blob& bottom) const = 0;
};

class FlattenLayer : public ViewLayer {
 public:
  using ViewLayer::ViewLayer;
  const char* type() const override { return "Flatten"; }
  std::vector<int> top_shape(const Blob& b) const override {
    const int start = b.canonical_axis(param_.flatten_param().axis());
    const int end = b.canonical_axis(param_.flatten_param().end_axis());
    std::vector<int> s(b.shape().begin(), b.shape().begin() + start);
    s.push_back(static_cast<int>(b.count(start, end + 1)));
    s.insert(s.end(), b.shape().begin() + end + 1, b.shape().end());
    return s;
  }
};

class ReshapeLayer : public ViewLayer {
 public:
  using ViewLayer::ViewLayer;
  const char* type() const override { return "Reshape"; }
  std::vector<int> top_shape(const Blob& b) const override {
    const auto& rp = param_.reshape_param();
    const int n = b.num_axes();
    const int start = rp.axis() < 0 ? rp.axis() + n + 1 : rp.axis();
    require(start >= 0 && start <= n, "axis " + std::to_string(rp.axis()) + " out of range");
    const int end = rp.num_axes() < 0 ? n : start + rp.num_axes();
    require(end <= n, "num_axes " + std::to_string(rp.num_axes()) + " out of range");
    std::vector<int> s(b.shape().begin(), b.shape().begin() + start);
    int infer = -1;
    std::int64_t known = 1;
    for (int i = 0; i < rp.shape().dim_size(); ++i) {
      const std::int64_t d64 = rp.shape().dim(i);
      require(d64 >= -1 && d64 <= std::numeric_limits<int>::max(),
              "reshape_param.shape dim " + std::to_string(i) + " = " + std::to_string(d64) + " must be -1, 0 or a size up to " +
                  std::to_string(std::numeric_limits<int>::max()));
      auto d = static_cast<int>(d64);
      if (d == 0) {
        require(start + i < n, "dim " + std::to_string(i) + " = 0 copies an axis the bottom lacks");
        d = b.shape(start + i);
      }
      if (d == -1) {
        require(infer < 0, "at most one dim may be -1");
        infer = static_cast<int>(s.size());
      } else {
        known *= d;
      }
      s.push_back(d);
    }
    s.insert(s.end(), b.shape().begin() + end, b.shape().end());
    if (infer >= 0) {
      std::int64_t rest = 1;
      for (std::size_t i = 0; i < s.size(); ++i) if (static_cast<int>(i) != infer) rest *= s[i];
      require(rest > 0 && b.count() % rest == 0, "cannot infer the -1 dim: " + std::to_string(b.count()) + " values");
      s[static_cast<std::size_t>(infer)] = static_cast<int>(b.count() / rest);
    }
    return s;
  }
};

}  // namespace

void register_reshape_layers(LayerRegistry& r) {
  add_layer<FlattenLayer>(r, "Flatten");
  add_layer<ReshapeLayer>(r, "Reshape");
}

}  // namespace taihu::caffe
