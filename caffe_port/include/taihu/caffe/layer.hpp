// taihu::caffe::Layer: the base of every layer, Caffe's contract.
//   setup(bottom, top): checks the blob counts, layer_setup() (create and fill
//     parameter blobs), reshape() (shape the tops), loss weights into top diffs.
//   forward(bottom, top): computes tops from bottoms.
//   backward(top, propagate_down, bottom): writes (overwrites) bottom diffs for the
//     bottoms with propagate_down[i], and ADDS parameter gradients to blobs()[j]'s
//     diff (the Net zeroes them once per iteration, so iter_size and shared
//     parameters accumulate).
// A top with a non-zero loss weight contributes dot(top data, top diff) to the
// objective; setup writes the weight into every element of that top's diff.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "taihu/caffe/blob.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {

using BlobVec = std::vector<Blob*>;

class Layer {
 public:
  explicit Layer(const proto::LayerParameter& param);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  virtual const char* type() const = 0;
  const std::string& name() const { return param_.name(); }
  const proto::LayerParameter& param() const { return param_; }
  proto::Phase phase() const { return param_.phase(); }

  void setup(const BlobVec& bottom, const BlobVec& top);
  virtual void layer_setup(const BlobVec& /*bottom*/, const BlobVec& /*top*/) {}
  virtual void reshape(const BlobVec& bottom, const BlobVec& top) = 0;
  virtual void forward(const BlobVec& bottom, const BlobVec& top) = 0;
  virtual void backward(const BlobVec& top, const std::vector<bool>& propagate_down,
                        const BlobVec& bottom) = 0;

  // Blob-count contract; -1 = no constraint.
  virtual int exact_bottoms() const { return -1; }
  virtual int min_bottoms() const { return -1; }
  virtual int max_bottoms() const { return -1; }
  virtual int exact_tops() const { return -1; }
  virtual int min_tops() const { return -1; }
  virtual int max_tops() const { return -1; }
  // Loss layers default to loss weight 1 on top 0.
  virtual bool is_loss() const { return false; }
  // False for inputs that have no gradient (labels).
  virtual bool allow_force_backward(int /*bottom*/) const { return true; }
  // Called by the Net when an in-place ReLU (negative_slope 0) follows this layer and
  // reads its only top: true when this layer's forward now applies max(top, 0) itself
  // (Convolution: fused into its kernels), so the Net skips the ReLU's forward. The
  // ReLU's backward still runs: it reads the top, which holds the same values.
  virtual bool fuse_relu() { return false; }

  std::vector<std::shared_ptr<Blob>>& blobs() { return blobs_; }
  const std::vector<std::shared_ptr<Blob>>& blobs() const { return blobs_; }
  float loss_weight(int top) const;

  // Parameters (and their diffs) into a LayerParameter, as a .caffemodel stores them.
  void to_proto(proto::LayerParameter* out, bool write_diff) const;

  // State beyond the parameters that an exact resume needs (a data layer's read
  // position). Empty when the layer has none.
  virtual std::string save_state() const { return {}; }
  virtual void load_state(const std::string& /*state*/) {}

 protected:
  // "layer conv1 (Convolution): " for error messages.
  std::string where() const;
  // Throws taihu::Error "<where><message>" when !condition.
  void require(bool condition, const std::string& message) const;

  proto::LayerParameter param_;
  std::vector<std::shared_ptr<Blob>> blobs_;

 private:
  void check_blob_counts(const BlobVec& bottom, const BlobVec& top) const;
  std::vector<float> loss_weights_;
};

}  // namespace taihu::caffe
