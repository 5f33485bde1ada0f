// Net construction (filtering, split insertion, wiring, parameter sharing, backward
// needs), forward/backward, weights I/O. See taihu/caffe/net.hpp.
#include "taihu/caffe/net.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/log.hpp"

namespace taihu::caffe {
namespace {

std::string split_layer_name(const std::string& blob, const std::string& layer, int top) {
  return blob + "_" + layer + "_" + std::to_string(top) + "_split";
}
std::string split_blob_name(const std::string& blob, const std::string& layer, int top, int k) {
  return split_layer_name(blob, layer, top) + "_" + std::to_string(k);
}

// Caffe's InsertSplits: a top consumed by several bottoms (or consumed and also
// weighted as a loss) gets a Split layer with one top per consumer.
proto::NetParameter insert_splits(const proto::NetParameter& in) {
  using Slot = std::pair<int, int>;  // (layer, top)
  std::map<std::string, Slot> last_top;
  std::map<Slot, Slot> bottom_source;
  std::map<Slot, int> consumers;
  std::map<Slot, float> loss_weight;
  for (int i = 0; i < in.layer_size(); ++i) {
    const auto& lp = in.layer(i);
    for (int j = 0; j < lp.bottom_size(); ++j) {
      auto it = last_top.find(lp.bottom(j));
      if (it == last_top.end()) {
        throw Error("layer " + lp.name() + " (" + lp.type() + "): unknown bottom blob \"" +
                    lp.bottom(j) + "\" (bottom " + std::to_string(j) + ")");
      }
      bottom_source[{i, j}] = it->second;
      ++consumers[it->second];
    }
    for (int j = 0; j < lp.top_size(); ++j) {
      last_top[lp.top(j)] = {i, j};
      if (j < lp.loss_weight_size() && lp.loss_weight(j) != 0.f) {
        loss_weight[{i, j}] = lp.loss_weight(j);
        ++consumers[{i, j}];
      }
    }
  }
  proto::NetParameter out = in;
  out.clear_layer();
  std::map<Slot, int> next_split;
  for (int i = 0; i < in.layer_size(); ++i) {
    proto::LayerParameter* lp = out.add_layer();
    lp->CopyFrom(in.layer(i));
    for (int j = 0; j < lp->bottom_size(); ++j) {
      const Slot src = bottom_source[{i, j}];
      if (consumers[src] > 1) {
        const auto& src_layer = in.layer(src.first);
        lp->set_bottom(j, split_blob_name(lp->bottom(j), src_layer.name(), src.second, next_split[src]++));
      }
    }
    for (int j = 0; j < lp->top_size(); ++j) {
      const Slot me{i, j};
      if (consumers[me] <= 1) continue;
      proto::LayerParameter* split = out.add_layer();
      const std::string& blob = lp->top(j);
      split->set_name(split_layer_name(blob, lp->name(), j));
      split->set_type("Split");
      split->add_bottom(blob);
      for (int k = 0; k < consumers[me]; ++k) {
        split->add_top(split_blob_name(blob, lp->name(), j, k));
      }
      if (loss_weight.count(me)) {
        // The loss moves to the split's last top, which no layer consumes.
        for (int k = 0; k < consumers[me]; ++k) split->add_loss_weight(k + 1 == consumers[me] ? loss_weight[me] : 0.f);
        lp->set_loss_weight(j, 0.f);
      }
    }
  }
  return out;
}

double dot(const float* a, const float* b, std::int64_t n) {
  double s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

bool Net::state_meets_rule(const proto::NetState& state, const proto::NetStateRule& rule) {
  if (rule.has_phase() && rule.phase() != state.phase()) return false;
  if (rule.has_min_level() && state.level() < rule.min_level()) return false;
  if (rule.has_max_level() && state.level() > rule.max_level()) return false;
  const std::set<std::string> stages(state.stage().begin(), state.stage().end());
  for (const auto& s : rule.stage()) if (!stages.count(s)) return false;
  for (const auto& s : rule.not_stage()) if (stages.count(s)) return false;
  return true;
}

proto::NetParameter Net::filter(const proto::NetParameter& param, const proto::NetState& state) {
  proto::NetParameter out = param;
  out.clear_layer();
  for (const auto& lp : param.layer()) {
    if (lp.include_size() > 0 && lp.exclude_size() > 0) {
      throw Error("layer " + lp.name() + ": specify include or exclude rules, not both");
    }
    bool keep = lp.include_size() == 0;
    for (const auto& r : lp.exclude()) if (state_meets_rule(state, r)) keep = false;
    for (const auto& r : lp.include()) if (state_meets_rule(state, r)) keep = true;
    if (keep) out.add_layer()->CopyFrom(lp);
  }
  return out;
}

Net::Net(const proto::NetParameter& param, const proto::NetState& state, const LayerRegistry& registry) {
  phase_ = state.phase();
  proto::NetState merged = param.state();
  merged.MergeFrom(state);
  merged.set_phase(state.phase());
  init(insert_splits(filter(param, merged)), registry);
}

Net::Net(const proto::NetParameter& param, proto::Phase phase, const LayerRegistry& registry)
    : Net(param, [&] { proto::NetState s; s.set_phase(phase); return s; }(), registry) {}

Net::~Net() = default;

void Net::init(const proto::NetParameter& param, const LayerRegistry& registry) {
  name_ = param.name();
  if (param.input_size() > 0) {
    throw Error("net " + name_ + ": the deprecated `input:` fields are not supported; use an Input layer");
  }
  std::map<std::string, int> available;  // blob name -> id, not yet consumed
  const int n = param.layer_size();
  layers_.reserve(static_cast<std::size_t>(n));
  bottom_vecs_.resize(static_cast<std::size_t>(n));
  top_vecs_.resize(static_cast<std::size_t>(n));
  bottom_id_vecs_.resize(static_cast<std::size_t>(n));
  top_id_vecs_.resize(static_cast<std::size_t>(n));
  bottom_need_backward_.resize(static_cast<std::size_t>(n));
  layer_param_ids_.resize(static_cast<std::size_t>(n));

  for (int i = 0; i < n; ++i) {
    proto::LayerParameter lp = param.layer(i);
    if (!lp.has_phase()) lp.set_phase(phase_);
    layers_.push_back(registry.create(lp));
    layer_names_.push_back(lp.name());
    const auto ui = static_cast<std::size_t>(i);
    bool need_backward = false;
    for (int j = 0; j < lp.bottom_size(); ++j) {
      auto it = available.find(lp.bottom(j));
      if (it == available.end()) {
        throw Error("layer " + lp.name() + " (" + lp.type() + "): bottom blob \"" + lp.bottom(j) +
                    "\" is not produced by an earlier layer in phase " +
                    proto::Phase_Name(phase_));
      }
      const int id = it->second;
      bool nb = blob_need_backward_[static_cast<std::size_t>(id)] || param.force_backward();
      if (j < lp.propagate_down_size()) nb = nb && lp.propagate_down(j);
      if (!layers_.back()->allow_force_backward(j)) nb = false;
      bottom_vecs_[ui].push_back(blobs_[static_cast<std::size_t>(id)].get());
      bottom_id_vecs_[ui].push_back(id);
      bottom_need_backward_[ui].push_back(nb);
      need_backward = need_backward || nb;
      available.erase(it);
    }
    for (int j = 0; j < lp.top_size(); ++j) {
      const std::string& top = lp.top(j);
      int id;
      if (j < lp.bottom_size() && lp.bottom(j) == top) {
        id = bottom_id_vecs_[ui][static_cast<std::size_t>(j)];  // in place
      } else {
        // A name produced again (e.g. in place on a split copy) names a new blob;
        // later bottoms read the latest producer.
        id = static_cast<int>(blobs_.size());
        blobs_.push_back(std::make_shared<Blob>());
        blob_names_.push_back(top);
        blob_need_backward_.push_back(false);
        blob_loss_weights_.push_back(0.f);
      }
      top_vecs_[ui].push_back(blobs_[static_cast<std::size_t>(id)].get());
      top_id_vecs_[ui].push_back(id);
      available[top] = id;
    }
    layers_.back()->setup(bottom_vecs_[ui], top_vecs_[ui]);
    log_info("Setting up " + lp.name());
    for (int j = 0; j < lp.top_size(); ++j) {
      const auto id = static_cast<std::size_t>(top_id_vecs_[ui][static_cast<std::size_t>(j)]);
      blob_loss_weights_[id] = layers_.back()->loss_weight(j);
      log_info("Top shape: " + blobs_[id]->shape_string());
      if (blob_loss_weights_[id] != 0.f) {
        log_info("    with loss weight " + std::to_string(blob_loss_weights_[id]));
      }
    }
    append_params(layers_.back()->param(), i);
    for (int pid : layer_param_ids_[ui]) {
      const auto up = static_cast<std::size_t>(pid);
      const int owner = param_owners_[up] < 0 ? pid : param_owners_[up];
      const auto lid = static_cast<std::size_t>(param_learnable_id_[static_cast<std::size_t>(owner)]);
      if (params_lr_[lid] != 0.f) need_backward = true;
    }
    if (param.force_backward()) need_backward = true;
    layer_need_backward_.push_back(need_backward);
    for (int id : top_id_vecs_[ui]) {
      if (need_backward) blob_need_backward_[static_cast<std::size_t>(id)] = true;
    }
  }

  // Layers that do not contribute to any loss need no backward (Caffe's pruning).
  std::set<int> under_loss;
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    bool contributes = false;
    for (std::size_t j = 0; j < top_id_vecs_[ui].size(); ++j) {
      const int id = top_id_vecs_[ui][j];
      if (layers_[ui]->loss_weight(static_cast<int>(j)) != 0.f || under_loss.count(id)) contributes = true;
    }
    if (!contributes) {
      layer_need_backward_[ui] = false;
      for (std::size_t j = 0; j < bottom_need_backward_[ui].size(); ++j) bottom_need_backward_[ui][j] = false;
    } else {
      for (int id : bottom_id_vecs_[ui]) under_loss.insert(id);
    }
  }

  for (const auto& [name, id] : available) {
    output_blobs_.push_back(blobs_[static_cast<std::size_t>(id)].get());
    output_blob_indices_.push_back(id);
  }
  // Outputs in blob creation order (Caffe's order).
  std::vector<std::size_t> order(output_blob_indices_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return output_blob_indices_[a] < output_blob_indices_[b]; });
  std::vector<Blob*> ob;
  std::vector<int> oi;
  for (auto k : order) { ob.push_back(output_blobs_[k]); oi.push_back(output_blob_indices_[k]); }
  output_blobs_ = ob;
  output_blob_indices_ = oi;

  // Which learnable parameters are final after each layer's backward: the lowest
  // layer index using a parameter is the last one backward touches.
  ready_after_layer_.assign(static_cast<std::size_t>(n), {});
  std::vector<int> first_user(learnable_params_.size(), n);
  for (int i = 0; i < n; ++i) {
    for (int pid : layer_param_ids_[static_cast<std::size_t>(i)]) {
      const int owner = param_owners_[static_cast<std::size_t>(pid)] < 0 ? pid : param_owners_[static_cast<std::size_t>(pid)];
      auto& f = first_user[static_cast<std::size_t>(param_learnable_id_[static_cast<std::size_t>(owner)])];
      f = std::min(f, i);
    }
  }
  for (std::size_t p = 0; p < first_user.size(); ++p) {
    if (first_user[p] < n) ready_after_layer_[static_cast<std::size_t>(first_user[p])].push_back(static_cast<int>(p));
  }
  fuse_layers();
  log_info("Network initialization done.");
}

// An in-place ReLU (negative_slope 0) right after a layer whose only top it reads, and
// writes back, runs inside that layer's forward when the layer can (fuse_relu): the
// values are those the ReLU would write, and its backward, which reads that top, is
// unchanged. TAIHU_CAFFE_FUSE=0 keeps them separate.
void Net::fuse_layers() {
  fused_into_previous_.assign(layers_.size(), false);
  const char* env = std::getenv("TAIHU_CAFFE_FUSE");
  if (env != nullptr && std::string(env) == "0") return;
  for (std::size_t i = 1; i < layers_.size(); ++i) {
    const Layer& relu = *layers_[i];
    if (std::string(relu.type()) != "ReLU" || relu.param().relu_param().negative_slope() != 0.f) continue;
    if (fused_into_previous_[i - 1] || top_id_vecs_[i - 1].size() != 1) continue;
    const int id = top_id_vecs_[i - 1][0];
    if (bottom_id_vecs_[i].size() != 1 || bottom_id_vecs_[i][0] != id || top_id_vecs_[i].size() != 1 ||
        top_id_vecs_[i][0] != id)
      continue;
    if (!layers_[i - 1]->fuse_relu()) continue;
    fused_into_previous_[i] = true;
    log_info("Fusing " + layer_names_[i] + " (ReLU) into " + layer_names_[i - 1] + " (" + layers_[i - 1]->type() +
             ")");
  }
}

void Net::append_params(const proto::LayerParameter& lp, int layer_id) {
  auto& layer_blobs = layers_[static_cast<std::size_t>(layer_id)]->blobs();
  const auto ui = static_cast<std::size_t>(layer_id);
  if (lp.param_size() > static_cast<int>(layer_blobs.size())) {
    throw Error("layer " + lp.name() + " (" + lp.type() + "): " + std::to_string(lp.param_size()) +
                " param specs for " + std::to_string(layer_blobs.size()) + " parameter blobs");
  }
  for (std::size_t j = 0; j < layer_blobs.size(); ++j) {
    proto::ParamSpec spec;
    if (static_cast<int>(j) < lp.param_size()) spec = lp.param(static_cast<int>(j));
    const int pid = static_cast<int>(params_.size());
    params_.push_back(layer_blobs[j]);
    layer_param_ids_[ui].push_back(pid);
    // A named parameter seen before is shared with its owner (the first one).
    int owner = -1;
    if (!spec.name().empty()) {
      auto it = param_name_owner_.find(spec.name());
      if (it != param_name_owner_.end()) owner = it->second;
      else param_name_owner_[spec.name()] = pid;
    }
    param_owners_.push_back(owner);
    param_learnable_id_.push_back(-1);
    if (owner < 0) {
      param_learnable_id_.back() = static_cast<int>(learnable_params_.size());
      learnable_params_.push_back(layer_blobs[j].get());
      params_lr_.push_back(spec.lr_mult());
      params_decay_.push_back(spec.decay_mult());
      continue;
    }
    Blob& owner_blob = *params_[static_cast<std::size_t>(owner)];
    const bool strict = spec.share_mode() == proto::ParamSpec::STRICT;
    if (strict ? owner_blob.shape() != layer_blobs[j]->shape() : owner_blob.count() != layer_blobs[j]->count()) {
      throw Error("layer " + lp.name() + ": shared parameter \"" + spec.name() + "\" has shape " +
                  layer_blobs[j]->shape_string() + ", its owner " + owner_blob.shape_string());
    }
    layer_blobs[j]->share_data(owner_blob);
    layer_blobs[j]->share_diff(owner_blob);
    const auto lid = static_cast<std::size_t>(param_learnable_id_[static_cast<std::size_t>(owner)]);
    if (spec.has_lr_mult()) params_lr_[lid] = spec.lr_mult();
    if (spec.has_decay_mult()) params_decay_[lid] = spec.decay_mult();
  }
}

float Net::output_loss_weight(int output) const {
  return blob_loss_weights_[static_cast<std::size_t>(output_blob_indices_[static_cast<std::size_t>(output)])];
}

void Net::forward_layer(int i) {
  const auto ui = static_cast<std::size_t>(i);
  if (fused_into_previous_[ui]) return;
  layers_[ui]->forward(bottom_vecs_[ui], top_vecs_[ui]);
}

void Net::backward_layer(int i) {
  const auto ui = static_cast<std::size_t>(i);
  if (layer_need_backward_[ui]) layers_[ui]->backward(top_vecs_[ui], bottom_need_backward_[ui], bottom_vecs_[ui]);
}

float Net::forward() {
  double loss = 0;
  for (int i = 0; i < num_layers(); ++i) {
    forward_layer(i);
    const auto ui = static_cast<std::size_t>(i);
    for (std::size_t j = 0; j < top_vecs_[ui].size(); ++j) {
      if (layers_[ui]->loss_weight(static_cast<int>(j)) != 0.f) {
        const Blob* t = top_vecs_[ui][j];
        loss += dot(t->data(), t->diff(), t->count());
      }
    }
  }
  return static_cast<float>(loss);
}

void Net::backward() {
  for (int i = num_layers() - 1; i >= 0; --i) {
    backward_layer(i);
    if (listener_ && !ready_after_layer_[static_cast<std::size_t>(i)].empty()) {
      listener_->gradients_ready(i, ready_after_layer_[static_cast<std::size_t>(i)]);
    }
  }
  if (listener_) listener_->backward_done();
}

void Net::reshape() {
  for (int i = 0; i < num_layers(); ++i) {
    const auto ui = static_cast<std::size_t>(i);
    layers_[ui]->reshape(bottom_vecs_[ui], top_vecs_[ui]);
  }
}

void Net::clear_param_diffs() {
  for (Blob* p : learnable_params_) p->set_diff(0.f);
}

void Net::update() {
  for (Blob* p : learnable_params_) {
    float* d = p->mutable_data();
    const float* g = p->diff();
    for (std::int64_t i = 0; i < p->count(); ++i) d[i] -= g[i];
  }
}

Blob* Net::blob_by_name(const std::string& name) const {
  for (std::size_t i = blob_names_.size(); i-- > 0;) if (blob_names_[i] == name) return blobs_[i].get();
  return nullptr;
}

Layer* Net::layer_by_name(const std::string& name) const {
  for (std::size_t i = 0; i < layer_names_.size(); ++i) if (layer_names_[i] == name) return layers_[i].get();
  return nullptr;
}

int Net::copy_trained_layers_from(const proto::NetParameter& trained) {
  int copied = 0;
  for (const auto& src : trained.layer()) {
    Layer* dst = layer_by_name(src.name());
    if (!dst) {
      // Caffe logs this at INFO; a layer that carries weights nobody takes deserves a warning.
      if (src.blobs_size() > 0) log_warning("Ignoring source layer " + src.name() + " (no layer of that name in the net; its weights are unused)");
      else log_info("Ignoring source layer " + src.name());
      continue;
    }
    if (src.blobs_size() == 0) continue;
    if (static_cast<std::size_t>(src.blobs_size()) != dst->blobs().size()) {
      throw Error("layer " + src.name() + ": the weights have " + std::to_string(src.blobs_size()) +
                  " blobs, the net's layer has " + std::to_string(dst->blobs().size()));
    }
    for (int j = 0; j < src.blobs_size(); ++j) {
      dst->blobs()[static_cast<std::size_t>(j)]->from_proto(src.blobs(j), false, "layer " + src.name() + " blob " + std::to_string(j));
    }
    log_info("Copying source layer " + src.name());
    ++copied;
  }
  return copied;
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void Net::copy_trained_layers_from(const std::string& path) {
  const std::string bytes = read_file(path);
  proto::NetParameter p;
  const bool is_net = !bytes.empty() && p.ParseFromString(bytes) && p.layer_size() > 0;
  // A .solverstate holds the solver's history and names its weights (learned_net);
  // read as weights it would leave the net at its random initial values.
  proto::SolverState state;
  if (!is_net && (ends_with(path, ".solverstate") || (state.ParseFromString(bytes) && state.has_iter()))) {
    state.Clear();
    const bool has_net = state.ParseFromString(bytes) && state.has_learned_net();
    throw Error(path + ": a solver state, not weights: resume training with --snapshot=" + path +
                (has_net ? ", or give its weights " + state.learned_net() + " as --weights" : ""));
  }
  if (!is_net && (bytes.empty() || !p.ParseFromString(bytes))) {
    throw Error(path + ": not a valid caffemodel (NetParameter) (corrupt or truncated file, " +
                std::to_string(bytes.size()) + " bytes)");
  }
  int copied = 0;
  try {
    copied = copy_trained_layers_from(p);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  const bool net_has_weights = std::any_of(layers_.begin(), layers_.end(), [](const auto& l) { return !l->blobs().empty(); });
  if (copied == 0 && net_has_weights) {
    std::string names;
    for (const auto& l : p.layer()) {
      if (l.blobs_size() > 0) names += (names.empty() ? "" : ", ") + l.name();
    }
    throw Error(path + ": no layer of these weights matches a layer of net " + name_ + " (weights for: " +
                (names.empty() ? "none" : names) + ")");
  }
}

void Net::share_trained_layers_with(const Net& other) {
  for (int i = 0; i < other.num_layers(); ++i) {
    Layer* dst = layer_by_name(other.layer_names()[static_cast<std::size_t>(i)]);
    if (!dst) continue;
    const auto& src = other.layers()[static_cast<std::size_t>(i)]->blobs();
    if (src.size() != dst->blobs().size()) {
      throw Error("layer " + dst->name() + ": train and test nets disagree on its number of parameter blobs");
    }
    for (std::size_t j = 0; j < src.size(); ++j) {
      if (src[j]->shape() != dst->blobs()[j]->shape()) {
        throw Error("layer " + dst->name() + ": parameter " + std::to_string(j) + " has shape " +
                    dst->blobs()[j]->shape_string() + " in one net and " + src[j]->shape_string() + " in the other");
      }
      dst->blobs()[j]->share_data(*src[j]);
    }
  }
}

void Net::to_proto(proto::NetParameter* out, bool write_diff) const {
  out->Clear();
  out->set_name(name_);
  for (const auto& l : layers_) {
    if (std::string(l->type()) == "Split") continue;
    l->to_proto(out->add_layer(), write_diff);
  }
}

}  // namespace taihu::caffe
