// Convolution: Caffe's ConvolutionLayer (2-D, groups, dilation, bias) on one
// taihu::dnn::Convolution, which serves all three directions. Weights
// [num_output][channels/group][kh][kw], bias [num_output]. Several bottoms share the
// weights (one top each).
// Algorithms: engine CAFFE asks dnn for explicit GEMM (Caffe's im2col); DEFAULT lets dnn
// time its candidates once per shape and direction on the first forward and keep the
// fastest (Convolution::choose_by_timing; TAIHU_CAFFE_CONV_TUNE=0: dnn's automatic
// choice; TAIHU_VERBOSE=1 logs the times; TAIHU_CAFFE_CONV_RECORDS=file keeps them as
// dnn tuning records). The choice (Convolution::choice) is saved in snapshots so
// resuming repeats it. Data-parallel ranks pass the tuning agreement
// (tuning_agreement.hpp) to dnn, so they pick on the same numbers and agree.
// An in-place ReLU that follows (the Net asks fuse_relu) runs as dnn's ReLU post-op,
// inside the kernels where the entry fuses it (dnn::ConvPostOps).
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "layers/builtin_layers.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/filler.hpp"
#include "taihu/caffe/tuning_agreement.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

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
    if (!conv_ || !(conv_->desc() == d)) {
      try {
        conv_ = std::make_unique<dnn::Convolution>(d, algo_);
      } catch (const std::exception& e) {
        require(false, e.what());
      }
      tuned_ = algo_ != dnn::ConvAlgo::automatic;  // tune on the first forward, if enabled then
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
    for (std::size_t i = 0; i < bottom.size(); ++i)
      conv_->forward(bottom[i]->data(), blobs_[0]->data(), bias, top[i]->mutable_data(), post_);
  }

  // One top only: the Net fuses a ReLU into the layer whose single top it reads.
  bool fuse_relu() override {
    post_.relu = true;
    return true;
  }

  void backward(const BlobVec& top, const std::vector<bool>& down, const BlobVec& bottom) override {
    float* dbias = blobs_.size() > 1 ? blobs_[1]->mutable_diff() : nullptr;
    for (std::size_t i = 0; i < top.size(); ++i) {
      conv_->backward_weights(bottom[i]->data(), top[i]->diff(), blobs_[0]->mutable_diff(), dbias, true);
      if (down[i]) conv_->backward_data(top[i]->diff(), blobs_[0]->data(), bottom[i]->mutable_diff());
    }
  }

  // The entries in use (measured once per shape), so a resumed run computes with the
  // same ones and repeats the loss sequence bit for bit. Snapshots written before the
  // choice moved into dnn ("batch,direct,explicit_gemm") still load (set_choice).
  std::string save_state() const override { return conv_ ? conv_->choice() : std::string(); }
  void load_state(const std::string& state) override {
    require(conv_ != nullptr, "saved algorithms \"" + state + "\" arrive before the layer's shape");
    try {
      conv_->set_choice(state);
    } catch (const std::exception& e) {
      require(false, std::string("saved algorithms: ") + e.what());
    }
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

  // dnn times its candidates on this layer's buffers (forward writes top[0], which the
  // forward pass then overwrites; backward uses dnn's scratch, parameter diffs are not
  // touched). Backward is measured only in TRAIN.
  void tune(const BlobVec& bottom, const BlobVec& top) {
    const dnn::ConvAgreement agree = train_data_shard().count > 1 ? dnn::ConvAgreement(tuning_agreement()) : nullptr;
    const float* x = bottom[0]->data();
    const float* w = blobs_[0]->data();
    const float* bias = blobs_.size() > 1 ? blobs_[1]->data() : nullptr;
    conv_->choose_by_timing(dnn::ConvDirection::forward, x, w, bias, top[0]->mutable_data(), agree);
    if (phase() == proto::TRAIN) {
      conv_->choose_by_timing(dnn::ConvDirection::backward_data, x, w, nullptr, nullptr, agree);
      conv_->choose_by_timing(dnn::ConvDirection::backward_weights, x, w, nullptr, nullptr, agree);
    }
    arch::log_verbose("caffe: layer %s %s -> %s", name().c_str(), conv_->desc().str().c_str(), conv_->choice().c_str());
    save_timings();
  }

  // TAIHU_CAFFE_CONV_RECORDS=file: the measured times are merged into dnn's tuning
  // records (the fastest per key kept; rank 0 writes, the times being agreed), which
  // TAIHU_TUNING_RECORDS then reads in later runs (engine DEFAULT with
  // TAIHU_CAFFE_CONV_TUNE=0, bench_conv, any dnn user).
  void save_timings() const {
    const char* path = std::getenv("TAIHU_CAFFE_CONV_RECORDS");
    if (path == nullptr || *path == '\0' || train_data_shard().index != 0) return;
    try {
      dnn::TuningRecords records;
      if (std::filesystem::exists(path)) records = dnn::TuningRecords::load(path);
      for (const auto& r : conv_->timing_records()) records.add(r);
      dnn::save_tuning_records(records, path);
    } catch (const std::exception& e) {
      require(false, std::string("TAIHU_CAFFE_CONV_RECORDS: ") + e.what());
    }
  }

  dnn::ConvDesc desc_;
  dnn::ConvAlgo algo_ = dnn::ConvAlgo::automatic;
  std::unique_ptr<dnn::Convolution> conv_;
  bool tuned_ = true;
  dnn::ConvPostOps post_;  // a fused ReLU (fuse_relu)
};

}  // namespace

void register_convolution_layer(LayerRegistry& r) { add_layer<ConvolutionLayer>(r, "Convolution"); }

}  // namespace taihu::caffe
