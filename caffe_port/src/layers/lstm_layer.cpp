// LSTM: Caffe's LSTMLayer (recurrent_param.num_output hidden units; bottoms x [T][N][...],
// cont [T][N] and optionally x_static [N][...], a static input whose projection is
// added to every step's gates; top h [T][N][H]; blobs W_xc [4H][I], b_c [4H],
// W_xc_static [4H][S] (with x_static only), W_hc [4H][H] in Caffe's order) on
// dnn::lstm_forward/backward. As Caffe, the final h and c of one forward pass are the
// initial state of the next (cont = 0 resets it).
// x_static runs as S extra inputs of every step: x' = [x_t | x_static], W' =
// [W_xc | W_xc_static] (the same gate sums; dnn's LSTM has no per-stream term); its
// gradient is the sum over steps of those inputs' gradients.
#include <algorithm>
#include <cstring>
#include <limits>
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
  int min_bottoms() const override { return 2; }
  int max_bottoms() const override { return 3; }
  int exact_tops() const override { return 1; }
  bool allow_force_backward(int bottom) const override { return bottom != 1; }

  void layer_setup(const BlobVec& bottom, const BlobVec&) override {
    const auto& rp = param_.recurrent_param();
    require(rp.num_output() > 0, "recurrent_param.num_output must be > 0");
    require(!rp.expose_hidden(), "expose_hidden is not supported");
    require(bottom[0]->num_axes() >= 3, "x must be T x N x ..., got " + bottom[0]->shape_string());
    static_ = bottom.size() == 3;
    if (static_) {
      require(bottom[2]->num_axes() >= 2 && bottom[2]->shape(0) == bottom[0]->shape(1),
              "x_static must be N x ... with N = " + std::to_string(bottom[0]->shape(1)) + ", got " + bottom[2]->shape_string());
    }
    const int h = blob_dim(rp.num_output(), where() + "recurrent_param.num_output");
    require(h <= std::numeric_limits<int>::max() / 4, "recurrent_param.num_output " + std::to_string(h) + " is too large (4 gates of it must fit an int)");
    const auto i = static_cast<int>(bottom[0]->count(2));
    if (blobs_.empty()) {
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h, i}));
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h}));
      if (static_) blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h, static_cast<int>(bottom[2]->count(1))}));
      blobs_.push_back(std::make_shared<Blob>(std::vector<int>{4 * h, h}));
      fill(rp.weight_filler(), blobs_[0].get());
      fill(rp.bias_filler(), blobs_[1].get());
      fill(rp.weight_filler(), blobs_[whc()].get());
      if (static_) fill(rp.weight_filler(), blobs_[2].get());
    }
  }

  void reshape(const BlobVec& bottom, const BlobVec& top) override {
    s_.steps = bottom[0]->shape(0);
    s_.batch = bottom[0]->shape(1);
    x_inputs_ = bottom[0]->count(2);
    static_inputs_ = static_ ? bottom[2]->count(1) : 0;
    s_.input = x_inputs_ + static_inputs_;
    s_.hidden = param_.recurrent_param().num_output();
    require(x_inputs_ * 4 * s_.hidden == blobs_[0]->count(), "input size " + std::to_string(x_inputs_) + " does not match W_xc " + blobs_[0]->shape_string());
    require(bottom[1]->num_axes() == 2 && bottom[1]->shape(0) == s_.steps && bottom[1]->shape(1) == s_.batch,
            "cont must be T x N = " + std::to_string(s_.steps) + " x " + std::to_string(s_.batch) + ", got " + bottom[1]->shape_string());
    if (static_) {
      require(bottom[2]->shape(0) == s_.batch, "x_static must have N = " + std::to_string(s_.batch) + " rows, got " + bottom[2]->shape_string());
      require(static_inputs_ * 4 * s_.hidden == blobs_[2]->count(),
              "x_static size " + std::to_string(static_inputs_) + " does not match W_xc_static " + blobs_[2]->shape_string());
      x_joined_.resize(static_cast<std::size_t>(s_.steps * s_.batch * s_.input));
      w_joined_.resize(static_cast<std::size_t>(4 * s_.hidden * s_.input));
    }
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
    dnn::lstm_forward<float>(s_, weights(), inputs(bottom), bottom[1]->data(), h0_.data(), c0_.data(),
                             top[0]->mutable_data(), workspace_.data(), h_last_.data(), c_last_.data());
    h0_ = h_last_;
    c0_ = c_last_;
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    float* dwhc = blobs_[whc()]->mutable_diff();
    if (!static_) {
      dnn::LstmWeightGrads<float> g{blobs_[0]->mutable_diff(), blobs_[1]->mutable_diff(), dwhc};
      dnn::lstm_backward<float>(s_, weights(), bottom[0]->data(), bottom[1]->data(), prev_h0_.data(), prev_c0_.data(),
                                top[0]->data(), workspace_.data(), top[0]->diff(), nullptr, nullptr,
                                down[0] ? bottom[0]->mutable_diff() : nullptr, g, nullptr, nullptr, true);
      return;
    }
    // The joined weights' gradient and the joined inputs' gradient, then split.
    const auto gates = static_cast<std::size_t>(4 * s_.hidden), in = static_cast<std::size_t>(s_.input);
    dw_joined_.assign(gates * in, 0.f);
    const bool want_dx = down[0] || down[2];
    if (want_dx) dx_joined_.resize(x_joined_.size());
    dnn::LstmWeightGrads<float> g{dw_joined_.data(), blobs_[1]->mutable_diff(), dwhc};
    dnn::lstm_backward<float>(s_, weights(), inputs(bottom), bottom[1]->data(), prev_h0_.data(), prev_c0_.data(),
                              top[0]->data(), workspace_.data(), top[0]->diff(), nullptr, nullptr,
                              want_dx ? dx_joined_.data() : nullptr, g, nullptr, nullptr, true);
    const auto xi = static_cast<std::size_t>(x_inputs_), si = static_cast<std::size_t>(static_inputs_);
    float* dwx = blobs_[0]->mutable_diff();
    float* dws = blobs_[2]->mutable_diff();
    for (std::size_t r = 0; r < gates; ++r) {
      for (std::size_t j = 0; j < xi; ++j) dwx[r * xi + j] += dw_joined_[r * in + j];
      for (std::size_t j = 0; j < si; ++j) dws[r * si + j] += dw_joined_[r * in + xi + j];
    }
    const auto rows = static_cast<std::size_t>(s_.steps * s_.batch), n = static_cast<std::size_t>(s_.batch);
    if (down[0]) {
      float* dx = bottom[0]->mutable_diff();
      for (std::size_t r = 0; r < rows; ++r) std::memcpy(dx + r * xi, dx_joined_.data() + r * in, xi * sizeof(float));
    }
    if (down[2]) {
      float* ds = bottom[2]->mutable_diff();
      std::fill(ds, ds + n * si, 0.f);
      for (std::size_t r = 0; r < rows; ++r)  // step-major rows: stream r % N
        for (std::size_t j = 0; j < si; ++j) ds[(r % n) * si + j] += dx_joined_[r * in + xi + j];
    }
  }

 private:
  std::size_t whc() const { return static_ ? 3 : 2; }

  // dnn's input: x itself, or [x_t | x_static] per step and stream.
  const float* inputs(const BlobVec& bottom) {
    if (!static_) return bottom[0]->data();
    const auto xi = static_cast<std::size_t>(x_inputs_), si = static_cast<std::size_t>(static_inputs_);
    const auto in = xi + si, n = static_cast<std::size_t>(s_.batch);
    const float* x = bottom[0]->data();
    const float* xs = bottom[2]->data();
    for (std::size_t r = 0; r < static_cast<std::size_t>(s_.steps) * n; ++r) {
      std::memcpy(x_joined_.data() + r * in, x + r * xi, xi * sizeof(float));
      std::memcpy(x_joined_.data() + r * in + xi, xs + (r % n) * si, si * sizeof(float));
    }
    return x_joined_.data();
  }

  dnn::LstmWeights<float> weights() {
    if (!static_) return {blobs_[0]->data(), blobs_[1]->data(), blobs_[2]->data()};
    const auto xi = static_cast<std::size_t>(x_inputs_), si = static_cast<std::size_t>(static_inputs_);
    const auto in = xi + si, gates = static_cast<std::size_t>(4 * s_.hidden);
    for (std::size_t r = 0; r < gates; ++r) {
      std::memcpy(w_joined_.data() + r * in, blobs_[0]->data() + r * xi, xi * sizeof(float));
      std::memcpy(w_joined_.data() + r * in + xi, blobs_[2]->data() + r * si, si * sizeof(float));
    }
    return {w_joined_.data(), blobs_[1]->data(), blobs_[3]->data()};
  }

  dnn::LstmShape s_;
  bool static_ = false;  // a third bottom x_static
  dnn::index_t x_inputs_ = 0, static_inputs_ = 0;
  std::vector<float> h0_, c0_, prev_h0_, prev_c0_, h_last_, c_last_, workspace_;
  std::vector<float> x_joined_, w_joined_, dw_joined_, dx_joined_;  // with x_static only
};

}  // namespace

void register_lstm_layer(LayerRegistry& r) { add_layer<LSTMLayer>(r, "LSTM"); }

}  // namespace taihu::caffe
