// The training loop, testing, logging and ApplyUpdate shared by every rule.
// Log lines follow Caffe's solver.cpp / sgd_solver.cpp wording (parse_log.py reads them).
#include "taihu/caffe/solver.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "taihu/arch/error.hpp"
#include "taihu/arch/gpu.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/rng.hpp"

namespace taihu::caffe {
namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

proto::NetState with_phase(proto::Phase phase, const proto::NetState* extra) {
  proto::NetState s;
  if (extra) s.CopyFrom(*extra);
  s.set_phase(phase);
  return s;
}

}  // namespace

bool use_gpu(const proto::SolverParameter& param) {
  if (param.solver_mode() != proto::SolverParameter::GPU) return false;
  const arch::GpuQuery q = arch::query_gpus();
  if (q.devices.empty()) {
    log_warning("solver_mode: GPU requested but no GPU is usable (" + q.status + "); training on the CPU");
  } else {
    log_warning("solver_mode: GPU: taihu-caffe has no CUDA training path yet; training on the CPU (" + q.status + ")");
  }
  return false;
}

Solver::Solver(const proto::SolverParameter& param) : param_(param) {
  if (param_.random_seed() >= 0) seed_rng(static_cast<std::uint64_t>(param_.random_seed()));
  if (param_.iter_size() < 1) throw Error("solver: iter_size must be >= 1 (got " + std::to_string(param_.iter_size()) + ")");
  if (param_.average_loss() < 1) throw Error("solver: average_loss must be >= 1");
  if (param_.regularization_type() != "L1" && param_.regularization_type() != "L2") {
    throw Error("solver: unknown regularization_type \"" + param_.regularization_type() + "\" (L1 or L2)");
  }
  use_gpu(param_);
  init_nets();
}

Solver::~Solver() = default;

void Solver::init_nets() {
  const int sources = param_.has_net() + param_.has_net_param() + param_.has_train_net() + param_.has_train_net_param();
  if (sources != 1) {
    throw Error("solver: give exactly one of net, net_param, train_net, train_net_param (got " + std::to_string(sources) + ")");
  }
  proto::NetParameter train;
  if (param_.has_train_net_param()) train = param_.train_net_param();
  else if (param_.has_train_net()) train = read_net_param(param_.train_net());
  else if (param_.has_net_param()) train = param_.net_param();
  else train = read_net_param(param_.net());
  log_info("Creating training net" + std::string(param_.has_net() ? " from net file: " + param_.net() : ""));
  net_ = std::make_unique<Net>(train, with_phase(proto::TRAIN, param_.has_train_state() ? &param_.train_state() : nullptr));

  std::vector<proto::NetParameter> tests;
  for (const auto& p : param_.test_net_param()) tests.push_back(p);
  for (const auto& f : param_.test_net()) tests.push_back(read_net_param(f));
  const bool generic = param_.has_net() || param_.has_net_param();
  const int remaining = param_.test_iter_size() - static_cast<int>(tests.size());
  if (generic && remaining > 0) {
    for (int i = 0; i < remaining; ++i) tests.push_back(train);
  }
  if (param_.test_iter_size() != static_cast<int>(tests.size())) {
    throw Error("solver: test_iter must be given once per test net (" + std::to_string(tests.size()) + " test nets, " +
                std::to_string(param_.test_iter_size()) + " test_iter values)");
  }
  if (param_.test_state_size() > 0 && param_.test_state_size() != static_cast<int>(tests.size())) {
    throw Error("solver: test_state must be given once per test net or not at all");
  }
  for (std::size_t i = 0; i < tests.size(); ++i) {
    log_info("Creating test net (#" + std::to_string(i) + ") specified by " + (generic ? "net file" : "test_net"));
    const proto::NetState* st = param_.test_state_size() > 0 ? &param_.test_state(static_cast<int>(i)) : nullptr;
    test_nets_.push_back(std::make_unique<Net>(tests[i], with_phase(proto::TEST, st)));
    test_nets_.back()->share_trained_layers_with(*net_);
  }
  log_info("Solver scaffolding done.");
}

void Solver::ensure_history() {
  if (!history_.empty() || net_->learnable_params().empty()) return;
  for (int k = 0; k < history_per_param(); ++k) {
    for (Blob* p : net_->learnable_params()) history_.push_back(std::make_shared<Blob>(p->shape()));
  }
}

void Solver::solve(const std::string& resume_file) {
  log_info("Solving " + net_->name());
  log_info("Learning Rate Policy: " + param_.lr_policy());
  if (!resume_file.empty()) {
    log_info("Restoring previous solver status from " + resume_file);
    restore(resume_file);
  }
  step(param_.max_iter() - iter_);
  if (param_.snapshot_after_train() && (param_.snapshot() == 0 || iter_ % param_.snapshot() != 0)) snapshot_if_root();
  if (requested_early_exit_) {
    log_info("Optimization stopped early.");
    return;
  }
  if (root_ && param_.display() && iter_ % param_.display() == 0) {
    const float loss = net_->forward();
    log_info("Iteration " + std::to_string(iter_) + ", loss = " + fmt(loss));
  }
  if (root_ && param_.test_interval() && iter_ % param_.test_interval() == 0) test_all();
  if (root_ && param_.has_snapshot_prefix()) write_curve();  // with the final test point
  log_info("Optimization Done.");
}

void Solver::update_smoothed_loss(float loss, int start_iter, int average_loss) {
  if (static_cast<int>(losses_window_.size()) < average_loss) {
    losses_window_.push_back(loss);
    const auto n = static_cast<float>(losses_window_.size());
    smoothed_loss_ = (smoothed_loss_ * (n - 1) + loss) / n;
  } else {
    const auto idx = static_cast<std::size_t>((iter_ - start_iter) % average_loss);
    smoothed_loss_ += (loss - losses_window_[idx]) / static_cast<float>(average_loss);
    losses_window_[idx] = loss;
  }
}

void Solver::step(int iters) {
  ensure_history();
  requested_early_exit_ = false;
  const int start_iter = iter_, stop_iter = iter_ + iters;
  losses_window_.clear();
  smoothed_loss_ = 0;
  arch::Stopwatch lapse;
  int last_display_iter = iter_;
  ProgressBar bar("train", param_.max_iter());
  const bool show_bar = root_ && progress_ && ProgressBar::enabled();
  while (iter_ < stop_iter) {
    net_->clear_param_diffs();
    if (root_ && param_.test_interval() && iter_ % param_.test_interval() == 0 &&
        (iter_ > 0 || param_.test_initialization())) {
      test_all();
    }
    const bool display = param_.display() && iter_ % param_.display() == 0;
    float loss = 0;
    for (int i = 0; i < param_.iter_size(); ++i) {
      net_->set_gradient_listener(i + 1 == param_.iter_size() ? gradient_listener_ : nullptr);
      loss += net_->forward_backward();
    }
    net_->set_gradient_listener(nullptr);
    loss /= static_cast<float>(param_.iter_size());
    if (!std::isfinite(loss)) {
      throw Error("solver: the loss is " + fmt(loss) + " at iteration " + std::to_string(iter_) +
                  " (diverged: lower base_lr or check the data)");
    }
    update_smoothed_loss(loss, start_iter, param_.average_loss());
    loss_history_.push_back(loss);
    if (display) {
      const double secs = lapse.seconds();
      const int done = iter_ - last_display_iter;
      std::ostringstream msg;
      msg << "Iteration " << iter_ << " (" << done / (secs > 0 ? secs : 1.0) << " iter/s, " << secs << "s/"
          << param_.display() << " iters)";
      msg << ", loss = " << smoothed_loss_;
      log_info(msg.str());
      lapse.restart();
      last_display_iter = iter_;
      int score_index = 0;
      for (std::size_t j = 0; j < net_->output_blobs().size(); ++j) {
        const Blob* b = net_->output_blobs()[j];
        const std::string& name = net_->blob_names()[static_cast<std::size_t>(net_->output_blob_indices()[j])];
        const float w = net_->output_loss_weight(static_cast<int>(j));
        for (std::int64_t k = 0; k < b->count(); ++k) {
          std::string line = "    Train net output #" + std::to_string(score_index++) + ": " + name + " = " + fmt(b->data()[k]);
          if (w != 0.f) line += " (* " + fmt(w) + " = " + fmt(w * b->data()[k]) + " loss)";
          log_info(line);
        }
      }
    }
    // The curve samples the smoothed loss ten times per display interval.
    const int curve_stride = std::max(1, (param_.display() > 0 ? param_.display() : 100) / 10);
    if (iter_ % curve_stride == 0) {
      curve_.iter.push_back(static_cast<float>(iter_));
      curve_.loss.push_back(smoothed_loss_);
    }
    apply_update();
    ++iter_;
    if (iteration_callback_) iteration_callback_(iter_, loss);
    if (show_bar) bar.update(iter_, "loss " + fmt(smoothed_loss_));
    const bool snapshotted = param_.snapshot() && iter_ % param_.snapshot() == 0;
    if (snapshotted) snapshot_if_root();
    const SolverAction request = action_ ? action_() : SolverAction::none;
    if (request == SolverAction::snapshot && !snapshotted) {
      if (param_.has_snapshot_prefix()) snapshot_if_root();
      else log_warning("a snapshot was requested, but the solver has no snapshot_prefix: none written");
    }
    if (request == SolverAction::stop) {
      requested_early_exit_ = true;
      log_info("Stop requested at iteration " + std::to_string(iter_));
      break;
    }
  }
  bar.finish();
}

void Solver::snapshot_if_root() {
  if (before_snapshot_) before_snapshot_(iter_);
  if (root_) snapshot();
}

std::vector<std::vector<float>> Solver::test_all() {
  std::vector<std::vector<float>> all;
  for (std::size_t i = 0; i < test_nets_.size(); ++i) all.push_back(test(static_cast<int>(i)));
  return all;
}

std::vector<float> Solver::test(int id) {
  log_info("Iteration " + std::to_string(iter_) + ", Testing net (#" + std::to_string(id) + ")");
  Net& net = *test_nets_[static_cast<std::size_t>(id)];
  std::vector<double> scores;
  double loss = 0;
  const int iters = param_.test_iter(id);
  for (int i = 0; i < iters; ++i) {
    loss += net.forward();
    std::size_t k = 0;
    for (const Blob* b : net.output_blobs()) {
      for (std::int64_t e = 0; e < b->count(); ++e, ++k) {
        if (scores.size() <= k) scores.push_back(0);
        scores[k] += b->data()[e];
      }
    }
  }
  if (param_.test_compute_loss()) log_info("Test loss: " + fmt(loss / iters));
  std::vector<float> means;
  std::size_t k = 0;
  bool curve_done = id != 0;
  for (std::size_t j = 0; j < net.output_blobs().size(); ++j) {
    const Blob* b = net.output_blobs()[j];
    const std::string& name = net.blob_names()[static_cast<std::size_t>(net.output_blob_indices()[j])];
    const float w = net.output_loss_weight(static_cast<int>(j));
    for (std::int64_t e = 0; e < b->count(); ++e, ++k) {
      const auto mean = static_cast<float>(iters > 0 ? scores[k] / iters : 0.0);
      means.push_back(mean);
      std::string line = "    Test net output #" + std::to_string(k) + ": " + name + " = " + fmt(mean);
      if (w != 0.f) line += " (* " + fmt(w) + " = " + fmt(w * mean) + " loss)";
      log_info(line);
      if (!curve_done && w == 0.f) {
        curve_.test_iter.push_back(static_cast<float>(iter_));
        curve_.test_value.push_back(mean);
        curve_done = true;
      }
    }
  }
  return means;
}

void Solver::clip_gradients() {
  const float clip = param_.clip_gradients();
  if (clip < 0) return;
  double sumsq = 0;
  for (const Blob* p : net_->learnable_params()) sumsq += p->sumsq_diff();
  const double l2 = std::sqrt(sumsq);
  if (l2 > clip) {
    const auto scale = static_cast<float>(clip / l2);
    log_info("Gradient clipping: scaling down gradients (L2 norm " + fmt(l2) + " > " + fmt(clip) + ") by scale factor " + fmt(scale));
    for (Blob* p : net_->learnable_params()) {
      float* g = p->mutable_diff();
      for (std::int64_t i = 0; i < p->count(); ++i) g[i] *= scale;
    }
  }
}

void Solver::normalize(int id) {
  if (param_.iter_size() == 1) return;
  Blob& p = *net_->learnable_params()[static_cast<std::size_t>(id)];
  const float s = 1.f / static_cast<float>(param_.iter_size());
  float* g = p.mutable_diff();
  for (std::int64_t i = 0; i < p.count(); ++i) g[i] *= s;
}

void Solver::regularize(int id) {
  const float decay = param_.weight_decay() * net_->params_weight_decay()[static_cast<std::size_t>(id)];
  if (decay == 0.f) return;
  Blob& p = *net_->learnable_params()[static_cast<std::size_t>(id)];
  const float* w = p.data();
  float* g = p.mutable_diff();
  if (param_.regularization_type() == "L2") {
    for (std::int64_t i = 0; i < p.count(); ++i) g[i] += decay * w[i];
  } else {
    for (std::int64_t i = 0; i < p.count(); ++i) g[i] += decay * static_cast<float>((w[i] > 0) - (w[i] < 0));
  }
}

Solver::UpdateTarget Solver::update_target(int param_id, float rate) {
  const auto id = static_cast<std::size_t>(param_id);
  Blob& p = *net_->learnable_params()[id];
  return {p.mutable_diff(), p.count(), rate * net_->params_lr()[id], history_[id]->mutable_data()};
}

void Solver::apply_update() {
  ensure_history();
  const float rate = learning_rate(param_, iter_, &current_step_);
  if (param_.display() && iter_ % param_.display() == 0) {
    log_info("Iteration " + std::to_string(iter_) + ", lr = " + fmt(rate));
  }
  clip_gradients();
  const bool l2 = param_.regularization_type() == "L2";
  const float scale = param_.iter_size() == 1 ? 1.f : 1.f / static_cast<float>(param_.iter_size());
  for (std::size_t id = 0; id < net_->learnable_params().size(); ++id) {
    const int i = static_cast<int>(id);
    const float decay = param_.weight_decay() * net_->params_weight_decay()[id];
    // One pass where the rule offers it (SGD); otherwise Caffe's separate steps, the
    // weight step per parameter as Net::update does it.
    if ((l2 || decay == 0.f) && update_in_one_pass(i, rate, scale, decay)) continue;
    normalize(i);
    regularize(i);
    compute_update_value(i, rate);
    Blob& p = *net_->learnable_params()[id];
    float* w = p.mutable_data();
    const float* g = p.diff();
    for (std::int64_t e = 0; e < p.count(); ++e) w[e] -= g[e];
  }
}

}  // namespace taihu::caffe
