// taihu::caffe::Net: a directed acyclic graph of Layers built from a NetParameter.
// Construction (Caffe's rules):
//   - layers whose include/exclude rules the NetState does not meet are dropped;
//   - tops create blobs by name; a top named like its bottom is computed in place;
//   - a blob consumed by several layers gets an automatic Split layer so gradients
//     from all consumers add up;
//   - parameters named in `param { name: ... }` are shared (one owner, same data and
//     diff); lr_mult / decay_mult are kept per learnable parameter;
//   - which layers need backward follows from the learning rates and the graph;
//   - net outputs are the blobs no layer consumes; a top with loss weight != 0 adds
//     to the objective.
// Gradient hook (data-parallel training): after backward() of each layer, in backward
// order, the GradientListener (if set) is told which learnable parameters are final,
// so an allreduce can start per bucket while earlier layers still run backward.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "taihu/caffe/blob.hpp"
#include "taihu/caffe/layer.hpp"
#include "taihu/caffe/layer_registry.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {

class GradientListener {
 public:
  virtual ~GradientListener() = default;
  // Called after layer `layer_id`'s backward with the indices (into
  // Net::learnable_params()) whose gradients no later backward step changes.
  virtual void gradients_ready(int layer_id, const std::vector<int>& learnable_param_ids) = 0;
  // Called once backward() has finished all layers.
  virtual void backward_done() {}
};

class Net {
 public:
  // `param` is filtered by `state` (phase, level, stages). Throws taihu::Error naming
  // the layer for an unknown type, a missing bottom, a bad blob count or shape.
  Net(const proto::NetParameter& param, const proto::NetState& state,
      const LayerRegistry& registry = LayerRegistry::builtin());
  Net(const proto::NetParameter& param, proto::Phase phase,
      const LayerRegistry& registry = LayerRegistry::builtin());
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  // Keeps the layers whose rules `state` meets (Caffe's Net::FilterNet).
  static proto::NetParameter filter(const proto::NetParameter& param, const proto::NetState& state);
  static bool state_meets_rule(const proto::NetState& state, const proto::NetStateRule& rule);

  float forward();                 // returns the weighted loss
  void backward();
  float forward_backward() { float l = forward(); backward(); return l; }
  // One layer (caffe time); an in-place ReLU fused into the layer before it
  // (fused_into_previous) does nothing here. TAIHU_CAFFE_FUSE=0 at construction keeps
  // every ReLU separate (the comparison run).
  void forward_layer(int i);
  bool fused_into_previous(int i) const { return fused_into_previous_[static_cast<std::size_t>(i)]; }
  void backward_layer(int i);
  void reshape();                  // re-runs every layer's reshape (input shape changed)

  void clear_param_diffs();
  void update();                   // data -= diff for every learnable parameter

  // Weights: by layer name, as Caffe's CopyTrainedLayersFrom (layers missing from
  // `trained` keep their values; a blob shape mismatch throws naming the layer).
  // Returns the number of layers copied; a source layer with weights that matches no
  // layer of the net logs a warning.
  int copy_trained_layers_from(const proto::NetParameter& trained);
  // As above from a .caffemodel; also throws when the file is a .solverstate (use
  // --snapshot) or when no layer of it matches the net's layers with parameters.
  void copy_trained_layers_from(const std::string& caffemodel_path);
  // Test nets share the train net's parameter storage (Caffe's ShareTrainedLayersWith).
  void share_trained_layers_with(const Net& other);
  void to_proto(proto::NetParameter* out, bool write_diff = false) const;

  const std::string& name() const { return name_; }
  proto::Phase phase() const { return phase_; }
  int num_layers() const { return static_cast<int>(layers_.size()); }
  Layer& layer(int i) { return *layers_[static_cast<std::size_t>(i)]; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  const std::vector<std::string>& layer_names() const { return layer_names_; }
  const std::vector<std::string>& blob_names() const { return blob_names_; }
  const std::vector<std::shared_ptr<Blob>>& blobs() const { return blobs_; }
  const std::vector<BlobVec>& bottom_vecs() const { return bottom_vecs_; }
  const std::vector<BlobVec>& top_vecs() const { return top_vecs_; }
  bool layer_needs_backward(int i) const { return layer_need_backward_[static_cast<std::size_t>(i)]; }
  Blob* blob_by_name(const std::string& name) const;   // nullptr when absent
  Layer* layer_by_name(const std::string& name) const;  // nullptr when absent

  // Net outputs (blobs no layer consumes), with their names and loss weights.
  const std::vector<Blob*>& output_blobs() const { return output_blobs_; }
  const std::vector<int>& output_blob_indices() const { return output_blob_indices_; }
  float output_loss_weight(int output) const;

  // Learnable parameters (owners only) with their multipliers, in layer order.
  const std::vector<Blob*>& learnable_params() const { return learnable_params_; }
  const std::vector<float>& params_lr() const { return params_lr_; }
  const std::vector<float>& params_weight_decay() const { return params_decay_; }
  // Every parameter blob of every layer, and its owner index into learnable_params().
  const std::vector<std::shared_ptr<Blob>>& params() const { return params_; }

  void set_gradient_listener(GradientListener* listener) { listener_ = listener; }
  // For each layer, the learnable parameter ids the listener is told are final after
  // that layer's backward (every learnable parameter appears exactly once).
  const std::vector<std::vector<int>>& params_ready_after_layer() const { return ready_after_layer_; }

 private:
  void init(const proto::NetParameter& filtered, const LayerRegistry& registry);
  void append_top(const proto::LayerParameter& lp, int layer_id, int top_id,
                  std::map<std::string, int>* available);
  int append_bottom(const proto::LayerParameter& lp, int layer_id, int bottom_id,
                    std::map<std::string, int>* available);
  void append_params(const proto::LayerParameter& lp, int layer_id);

  std::string name_;
  proto::Phase phase_ = proto::TRAIN;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::string> layer_names_;
  std::vector<std::shared_ptr<Blob>> blobs_;
  std::vector<std::string> blob_names_;
  std::vector<bool> blob_need_backward_;
  std::vector<BlobVec> bottom_vecs_, top_vecs_;
  std::vector<std::vector<int>> bottom_id_vecs_, top_id_vecs_;
  std::vector<std::vector<bool>> bottom_need_backward_;
  std::vector<bool> layer_need_backward_;
  std::vector<bool> fused_into_previous_;  // forward done by layer i - 1 (fuse_relu)
  void fuse_layers();
  std::vector<std::vector<int>> layer_param_ids_;  // into params_
  std::vector<std::shared_ptr<Blob>> params_;
  std::vector<int> param_owners_;                 // -1: owner itself
  std::vector<int> param_learnable_id_;           // index into learnable_params_
  std::map<std::string, int> param_name_owner_;   // ParamSpec name -> owning param
  std::vector<Blob*> learnable_params_;
  std::vector<float> params_lr_, params_decay_;
  std::vector<Blob*> output_blobs_;
  std::vector<int> output_blob_indices_;
  std::vector<float> blob_loss_weights_;
  std::vector<std::vector<int>> ready_after_layer_;  // learnable ids final after layer i's backward
  GradientListener* listener_ = nullptr;
};

}  // namespace taihu::caffe
