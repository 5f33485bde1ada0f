// Convolution: Caffe's ConvolutionLayer (2-D, groups, dilation, bias) on
// taihu::dnn::Convolution. Weights [num_output][channels/group][kh][kw], bias
// [num_output]. Several bottoms share the weights (one top each).
// Algorithms: engine CAFFE asks dnn/ for explicit GEMM (Caffe's im2col); DEFAULT times
// dnn's candidates and the minibatch-level BatchConv ("batch", batch_conv.hpp) once
// per shape and direction on the first forward and keeps the fastest
// (TAIHU_CAFFE_CONV_TUNE=0: dnn's own automatic choice; TAIHU_VERBOSE=1 logs the
// measurements). The choice is saved in snapshots so resuming repeats it. Data-parallel
// ranks pick on the slowest rank's times (tuning_agreement.hpp), so they all agree.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <time.h>

#include "layers/batch_conv.hpp"
#include "layers/builtin_layers.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/filler.hpp"
#include "taihu/caffe/tuning_agreement.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"
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
    blob_dim(cp.num_output(), where() + "num_output");
    desc_.k = cp.num_output();
    desc_.kh = kh; desc_.kw = kw;
    desc_.stride_h = sh; desc_.stride_w = sw;
    desc_.pad_h = ph; desc_.pad_w = pw;
    desc_.dil_h = dh; desc_.dil_w = dw;
    desc_.groups = cp.group();
    // engine: CAFFE is Caffe's im2col + GEMM; DEFAULT lets dnn/ choose (heuristic or
    // tuning record, TAIHU_VERBOSE=1 shows the choice).
    algo_ = cp.engine() == proto::ConvolutionParameter::CAFFE ? dnn::ConvAlgo::explicit_gemm : dnn::ConvAlgo::automatic;
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
    if (!fwd_ || !(fwd_->desc() == d)) {
      try {
        fwd_ = std::make_unique<dnn::Convolution>(d, algo_);
        bwd_data_ = std::make_unique<dnn::Convolution>(d, algo_);
        bwd_weights_ = std::make_unique<dnn::Convolution>(d, algo_);
        batch_ = std::make_unique<BatchConv>(d);
      } catch (const std::exception& e) {
        require(false, e.what());
      }
      tuned_ = algo_ != dnn::ConvAlgo::automatic;  // tune on the first forward, if enabled then
      std::fill(std::begin(use_batch_), std::end(use_batch_), false);
    }
    for (Blob* t : top) {
      t->reshape({static_cast<int>(d.n), static_cast<int>(d.k), static_cast<int>(d.out_h()), static_cast<int>(d.out_w())});
    }
  }

  void forward(const BlobVec& bottom, const BlobVec& top) override {
    // Decided here, not at setup: a data-parallel tuning agreement is installed after
    // the nets are built.
    if (!tuned_) {
      if (tuning_enabled()) tune(bottom, top);
      tuned_ = true;
    }
    const float* bias = blobs_.size() > 1 ? blobs_[1]->data() : nullptr;
    for (std::size_t i = 0; i < bottom.size(); ++i) {
      if (use_batch_[kForward]) batch_->forward(bottom[i]->data(), blobs_[0]->data(), bias, top[i]->mutable_data());
      else fwd_->forward(bottom[i]->data(), blobs_[0]->data(), bias, top[i]->mutable_data());
    }
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    float* dbias = blobs_.size() > 1 ? blobs_[1]->mutable_diff() : nullptr;
    for (std::size_t i = 0; i < top.size(); ++i) {
      if (use_batch_[kBackwardWeights]) batch_->backward_weights(bottom[i]->data(), top[i]->diff(), blobs_[0]->mutable_diff(), dbias);
      else bwd_weights_->backward_weights(bottom[i]->data(), top[i]->diff(), blobs_[0]->mutable_diff(), dbias, true);
      if (!down[i]) continue;
      if (use_batch_[kBackwardData]) batch_->backward_data(top[i]->diff(), blobs_[0]->data(), bottom[i]->mutable_diff());
      else bwd_data_->backward_data(top[i]->diff(), blobs_[0]->data(), bottom[i]->mutable_diff());
    }
  }

  // The algorithms in use (measured once per shape), so a resumed run computes with
  // the same ones and repeats the loss sequence bit for bit.
  std::string save_state() const override {
    if (!fwd_) return {};
    auto name = [&](int dir, const dnn::Convolution& c, dnn::ConvDirection d) -> std::string {
      return use_batch_[dir] ? kBatchName : dnn::to_string(c.algorithm(d));
    };
    return name(kForward, *fwd_, dnn::ConvDirection::forward) + "," +
           name(kBackwardData, *bwd_data_, dnn::ConvDirection::backward_data) + "," +
           name(kBackwardWeights, *bwd_weights_, dnn::ConvDirection::backward_weights);
  }
  void load_state(const std::string& state) override {
    std::vector<dnn::ConvAlgo> a;
    std::vector<bool> batch;
    std::size_t start = 0;
    try {
      while (start <= state.size()) {
        const auto comma = state.find(',', start);
        const std::string token = state.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        batch.push_back(token == kBatchName);
        // A direction on BatchConv keeps a dnn object too (explicit GEMM, unused).
        a.push_back(token == kBatchName ? dnn::ConvAlgo::explicit_gemm : dnn::parse_conv_algo(token));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } catch (const std::exception& e) {
      require(false, std::string("saved algorithms: ") + e.what());
    }
    require(a.size() == 3 && fwd_, "saved algorithms \"" + state + "\" are malformed");
    const dnn::ConvDesc d = fwd_->desc();
    fwd_ = std::make_unique<dnn::Convolution>(d, a[0]);
    bwd_data_ = std::make_unique<dnn::Convolution>(d, a[1]);
    bwd_weights_ = std::make_unique<dnn::Convolution>(d, a[2]);
    for (int dir = 0; dir < 3; ++dir) use_batch_[dir] = batch[static_cast<std::size_t>(dir)];
    tuned_ = true;
  }

 private:
  bool tuning_enabled() const {
    // Data-parallel ranks (sharded training data) must compute alike, so they time
    // candidates only where the ranks agree on the times: TRAIN nets under a tuning
    // agreement. Elsewhere (TEST nets, which only rank 0 runs) they use dnn's heuristic.
    if (train_data_shard().count > 1 && (phase() != proto::TRAIN || !tuning_agreement())) return false;
    const char* v = std::getenv("TAIHU_CAFFE_CONV_TUNE");
    return v == nullptr || std::string(v) != "0";
  }

  // Seconds for timing candidates: this thread's CPU time when the layer runs on one
  // thread (time other processes take the core away does not count), else wall time.
  static double tuning_clock(int threads) {
    timespec t{};
    clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }

  // Times BatchConv and dnn's candidate algorithms for each direction on this layer's
  // buffers and keeps the fastest: kTuneRounds rounds, each running every candidate
  // once (round-robin, so a burst of load on a shared machine hits all candidates
  // alike), the fastest run of each counts; the reference algorithm is skipped.
  // Backward is measured only in TRAIN. Parameter diffs are not touched.
  void tune(const BlobVec& bottom, const BlobVec& top) {
    tuned_ = true;
    const dnn::ConvDesc d = fwd_->desc();
    const float* x = bottom[0]->data();
    const float* w = blobs_[0]->data();
    const float* bias = blobs_.size() > 1 ? blobs_[1]->data() : nullptr;
    std::vector<float> dw(static_cast<std::size_t>(blobs_[0]->count())), db(static_cast<std::size_t>(d.k));
    std::vector<float> dx(static_cast<std::size_t>(bottom[0]->count())), dy(static_cast<std::size_t>(top[0]->count()), 0.01f);
    const int threads = arch::threads_for_call();
    auto pick = [&](dnn::ConvDirection dir, std::unique_ptr<dnn::Convolution>* slot) {
      const int slot_dir = dir == dnn::ConvDirection::forward ? kForward
                           : dir == dnn::ConvDirection::backward_data ? kBackwardData : kBackwardWeights;
      // Candidate 0 is BatchConv, the others dnn algorithms.
      std::vector<std::unique_ptr<dnn::Convolution>> cands(1);
      std::vector<std::string> names{kBatchName};
      for (dnn::ConvAlgo a : dnn::conv_candidates(d, dir)) {
        if (a == dnn::ConvAlgo::reference) continue;
        try {
          cands.push_back(std::make_unique<dnn::Convolution>(d, a));
          names.emplace_back(dnn::to_string(a));
        } catch (const std::exception&) {
        }
      }
      std::vector<double> best(cands.size(), 1e30);
      for (int round = 0; round < kTuneRounds; ++round) {
        for (std::size_t i = 0; i < cands.size(); ++i) {
          const double t0 = tuning_clock(threads);
          dnn::Convolution* c = cands[i].get();
          if (dir == dnn::ConvDirection::forward) {
            if (c) c->forward(x, w, bias, top[0]->mutable_data());
            else batch_->forward(x, w, bias, top[0]->mutable_data());
          } else if (dir == dnn::ConvDirection::backward_data) {
            if (c) c->backward_data(dy.data(), w, dx.data());
            else batch_->backward_data(dy.data(), w, dx.data());
          } else {
            if (c) c->backward_weights(x, dy.data(), dw.data(), db.data(), false);
            else batch_->backward_weights(x, dy.data(), dw.data(), db.data());
          }
          best[i] = std::min(best[i], tuning_clock(threads) - t0);
        }
      }
      if (train_data_shard().count > 1) tuning_agreement()(best);
      std::size_t win = 0;
      std::string report;
      for (std::size_t i = 0; i < cands.size(); ++i) {
        report += " " + names[i] + "=" + std::to_string(best[i] * 1e3) + "ms";
        if (best[i] < best[win]) win = i;
      }
      use_batch_[slot_dir] = win == 0;
      if (win > 0) *slot = std::move(cands[win]);
      arch::log_verbose("caffe: layer %s %s %s:%s -> %s", name().c_str(), d.str().c_str(), dnn::to_string(dir),
                        report.c_str(), names[win].c_str());
    };
    pick(dnn::ConvDirection::forward, &fwd_);
    if (phase() == proto::TRAIN) {
      pick(dnn::ConvDirection::backward_data, &bwd_data_);
      pick(dnn::ConvDirection::backward_weights, &bwd_weights_);
    }
  }

  enum { kForward, kBackwardData, kBackwardWeights };
  static constexpr const char* kBatchName = "batch";
  static constexpr int kTuneRounds = 3;

  dnn::ConvDesc desc_;
  dnn::ConvAlgo algo_ = dnn::ConvAlgo::automatic;
  std::unique_ptr<BatchConv> batch_;
  bool use_batch_[3] = {false, false, false};  // per direction: BatchConv instead of dnn
  std::unique_ptr<dnn::Convolution> fwd_, bwd_data_, bwd_weights_;
  bool tuned_ = true;
};

}  // namespace

void register_convolution_layer(LayerRegistry& r) { add_layer<ConvolutionLayer>(r, "Convolution"); }

}  // namespace taihu::caffe
