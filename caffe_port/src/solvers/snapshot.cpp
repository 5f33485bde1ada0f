// Snapshots: <prefix>_iter_N.caffemodel (NetParameter with blobs) and .solverstate
// (SolverState: iter, learned_net, history in Caffe's order, plus taihu's extension
// fields for an exact resume), both written atomically, and the curve PNG.
#include <sys/stat.h>

#include <algorithm>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/curve_png.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/rng.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string dirname_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "train/<layer>" or "test<i>/<layer>": which net a saved layer state belongs to.
template <class F>
void for_each_stateful(Net& train, const std::vector<std::unique_ptr<Net>>& tests, F f) {
  for (int i = 0; i < train.num_layers(); ++i) f("train/" + train.layer_names()[static_cast<std::size_t>(i)], train.layer(i));
  for (std::size_t t = 0; t < tests.size(); ++t) {
    for (int i = 0; i < tests[t]->num_layers(); ++i) {
      f("test" + std::to_string(t) + "/" + tests[t]->layer_names()[static_cast<std::size_t>(i)], tests[t]->layer(i));
    }
  }
}

}  // namespace

void Solver::write_curve() const {
  if (curve_.iter.empty() && curve_.test_iter.empty()) return;
  const std::string path = param_.snapshot_prefix() + "_curve.png";
  try {
    write_curve_png(path, curve_.iter, curve_.loss, curve_.test_iter, curve_.test_value);
  } catch (const std::exception& e) {
    log_warning(std::string("curve PNG not written: ") + e.what());
  }
}

std::string Solver::snapshot() {
  if (!param_.has_snapshot_prefix()) throw Error("solver: snapshot needs snapshot_prefix");
  if (param_.snapshot_format() != proto::SolverParameter::BINARYPROTO) {
    throw Error("solver: snapshot_format HDF5 is not supported (use BINARYPROTO)");
  }
  ensure_history();
  const std::string base = param_.snapshot_prefix() + "_iter_" + std::to_string(iter_);
  const std::string model = base + ".caffemodel", state_path = base + ".solverstate";
  proto::NetParameter net_param;
  net_->to_proto(&net_param, param_.snapshot_diff());
  log_info("Snapshotting to binary proto file " + model);
  write_binary_atomic(model, net_param);

  proto::SolverState state;
  state.set_iter(iter_);
  state.set_learned_net(model);
  state.set_current_step(current_step_);
  for (const auto& h : history_) h->to_proto(state.add_history());
  state.set_rng_state(save_rng_state());
  for_each_stateful(*net_, test_nets_, [&](const std::string& key, Layer& l) {
    const std::string s = l.save_state();
    if (s.empty()) return;
    auto* ls = state.add_layer_state();
    ls->set_layer(key);
    ls->set_state(s);
  });
  for (float v : losses_window_) state.add_smoothed_losses(v);
  for (float v : curve_.iter) state.add_curve_iter(v);
  for (float v : curve_.loss) state.add_curve_loss(v);
  for (float v : curve_.test_iter) state.add_curve_test_iter(v);
  for (float v : curve_.test_value) state.add_curve_test_value(v);
  log_info("Snapshotting solver state to binary proto file " + state_path);
  write_binary_atomic(state_path, state);
  write_curve();
  return state_path;
}

void Solver::restore(const std::string& path) {
  ensure_history();
  proto::SolverState state;
  read_binary(path, "solverstate (SolverState)", &state);
  if (!state.has_iter()) throw Error(path + ": not a solver state (no iter field; corrupt file?)");
  if (state.has_learned_net()) {
    std::string model = state.learned_net();
    // Snapshots moved together: look next to the .solverstate as well.
    if (!exists(model) && exists(dirname_of(path) + basename_of(model))) model = dirname_of(path) + basename_of(model);
    proto::NetParameter weights;
    read_binary(model, "caffemodel (NetParameter)", &weights);
    // The snapshot was written from this net: every layer with parameters must be
    // there (a file cut at a message boundary still parses, but lacks layers).
    for (int i = 0; i < net_->num_layers(); ++i) {
      if (net_->layer(i).blobs().empty()) continue;
      const std::string& name = net_->layer_names()[static_cast<std::size_t>(i)];
      const bool present = std::any_of(weights.layer().begin(), weights.layer().end(),
                                       [&](const proto::LayerParameter& l) { return l.name() == name && l.blobs_size() > 0; });
      if (!present) throw Error(model + ": no weights for layer " + name + " (truncated or from another net?)");
    }
    try {
      net_->copy_trained_layers_from(weights);
    } catch (const Error& e) {
      throw Error(model + ": " + e.what());
    }
  }
  if (static_cast<std::size_t>(state.history_size()) != history_.size()) {
    throw Error(path + ": " + std::to_string(state.history_size()) + " history blobs, the " + type() + " solver needs " +
                std::to_string(history_.size()));
  }
  for (std::size_t i = 0; i < history_.size(); ++i) {
    history_[i]->from_proto(state.history(static_cast<int>(i)), false, path + ": history blob " + std::to_string(i));
  }
  iter_ = state.iter();
  current_step_ = state.current_step();
  if (state.has_rng_state()) load_rng_state(state.rng_state());
  for (const auto& ls : state.layer_state()) {
    bool found = false;
    for_each_stateful(*net_, test_nets_, [&](const std::string& key, Layer& l) {
      if (key == ls.layer()) {
        l.load_state(ls.state());
        found = true;
      }
    });
    if (!found) log_warning(path + ": no layer " + ls.layer() + " for its saved state; ignored");
  }
  curve_.iter.assign(state.curve_iter().begin(), state.curve_iter().end());
  curve_.loss.assign(state.curve_loss().begin(), state.curve_loss().end());
  curve_.test_iter.assign(state.curve_test_iter().begin(), state.curve_test_iter().end());
  curve_.test_value.assign(state.curve_test_value().begin(), state.curve_test_value().end());
}

}  // namespace taihu::caffe
