// Dropout: Caffe's DropoutLayer (scaled at training, identity at test) on dnn's
// counter-based dropout. The mask of call k comes from (process seed, layer, k), and
// k is saved with snapshots, so a resumed run drops the same units.
#include <cstdint>
#include <functional>
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/rng.hpp"
#include "taihu/dnn/dropout.hpp"

namespace taihu::caffe {
namespace {

class DropoutLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "Dropout"; }
  int exact_bottoms() const override { return 1; }
  int exact_tops() const override { return 1; }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    if (top[0] != bottom[0]) top[0]->reshape_like(*bottom[0]);
    mask_.resize(static_cast<std::size_t>(bottom[0]->count()));
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    p_.ratio = param_.dropout_param().dropout_ratio();
    // Each data-parallel rank draws its own masks (same seed, different shard).
    p_.seed = rng_seed_for_streams() ^ std::hash<std::string>{}(name()) ^
              (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(train_data_shard().index));
    if (phase() == proto::TRAIN) {
      p_.stream = calls_++;
      dnn::dropout_forward_training<float>(p_, bottom[0]->count(), bottom[0]->data(), top[0]->mutable_data(), mask_.data());
    } else {
      dnn::dropout_forward_inference<float>(p_, bottom[0]->count(), bottom[0]->data(), top[0]->mutable_data());
    }
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    if (!down[0]) return;
    require(phase() == proto::TRAIN, "backward in TEST phase is not supported");
    dnn::dropout_backward<float>(p_, top[0]->count(), mask_.data(), top[0]->diff(), bottom[0]->mutable_diff());
  }

  std::string save_state() const override { return std::to_string(calls_); }
  void load_state(const std::string& s) override { calls_ = std::stoull(s); }

 private:
  dnn::DropoutParams p_;
  std::uint64_t calls_ = 0;
  std::vector<std::uint8_t> mask_;
};

}  // namespace

void register_dropout_layer(LayerRegistry& r) { add_layer<DropoutLayer>(r, "Dropout"); }

}  // namespace taihu::caffe
