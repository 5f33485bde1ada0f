// LSTM: Caffe's LSTMLayer (recurrent_param.num_output hidden units; bottoms x [T][N][...]
// and cont [T][N]; top h [T][N][H]; blobs W_xc [4H][I], b_c [4H], W_hc [4H][H] in
// Caffe's order) on dnn::lstm_forward/backward. As Caffe, the final h and c of one
// forward pass are the initial state of the next (cont = 0 resets it).
#include <cstring>
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/caffe/filler.hpp"
#include "taihu/dnn/lstm.hpp"

namespace taihu::caffe {
namespace {

class LSTMLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "LSTM"; }
  int exact_bottoms() const override { return 2; }
  int exact_tops() const override { return 1; }
  bool allow_force_backward(int bottom) const override { return bottom == 0; }

  void layer_setup(const BlobVec& bottom, const BlobVec&) override {
    const auto& rp = param_.recurrent_param();
    require(rp.num_output() > 0, "recurrent_param.num_output must be > 0");
    require(!rp.expose_hidden(), "expose_hidden is not supported");
    require(bottom[0]->num_axes() >= 3, "x must be T x N x ..., got " + bottom[0]->shape_string());
    const int h = static_cast<int>(rp.num_output());
    const auto i = static_cast<int>(bottom[0]->count(2));
    if (blobs_.empty()) {
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h, i}));
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h}));
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h, h}));
      fill(rp.weight_filler(), blobs_[0].get());
      fill(rp.bias_filler(), blobs_[1].get());
      fill(rp.weight_filler(), blobs_[2].get());
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    s_.steps = bottom[0]->shape(0);
    s_.batch = bottom[0]->shape(1);
    s_.input = bottom[0]->count(2);
    s_.hidden = param_.recurrent_param().num_output();
    require(s_.input * 4 * s_.hidden == blobs_[0]->count(), "input size " + std::to_string(s_.input) + " does not match W_xc " + blobs_[0]->shape_string());
    require(bottom[1]->num_axes() == 2 && bottom[1]->shape(0) == s_.steps && bottom[1]->shape(1) == s_.batch,
            "cont must be T x N = " + std::to_string(s_.steps) + " x " + std::to_string(s_.batch) + ", got " + bottom[1]->shape_string());
    top[0]->reshape({static_cast<int>(s_.steps), static_cast<int>(s_.batch), static_cast<int>(s_.hidden)});
    const auto state = static_cast<std::size_t>(s_.batch * s_.hidden);
    if (h0_.size() != state) {
      h0_.assign(state, 0.f);
      c0_.assign(state, 0.f);
    }
    h_last_.resize(state);
    c_last_.resize(state);
    workspace_.resize(static_cast<std::size_t>(s_.workspace_elements()));
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    prev_h0_ = h0_;
    prev_c0_ = c0_;
    dnn::lstm_forward<float>(s_, weights(), bottom[0]->data(), bottom[1]->data(), h0_.data(), c0_.data(),
                             top[0]->mutable_data(), workspace_.data(), h_last_.data(), c_last_.data());
    h0_ = h_last_;
    c0_ = c_last_;
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    dnn::LstmWeightGrads<float> g{blobs_[0]->mutable_diff(), blobs_[1]->mutable_diff(), blobs_[2]->mutable_diff()};
    dnn::lstm_backward<float>(s_, weights(), bottom[0]->data(), bottom[1]->data(), prev_h0_.data(), prev_c0_.data(),
                              top[0]->data(), workspace_.data(), top[0]->diff(), nullptr, nullptr,
                              down[0] ? bottom[0]->mutable_diff() : nullptr, g, nullptr, nullptr, true);
  }

 private:
  dnn::LstmWeights<float> weights() const { return {blobs_[0]->data(), blobs_[1]->data(), blobs_[2]->data()}; }
  dnn::LstmShape s_;
  std::vector<float> h0_, c0_, prev_h0_, prev_c0_, h_last_, c_last_, workspace_;
};

}  // namespace

void register_lstm_layer(LayerRegistry& r) { add_layer<LSTMLayer>(r, "LSTM"); }

}  // namespace taihu::caffe
