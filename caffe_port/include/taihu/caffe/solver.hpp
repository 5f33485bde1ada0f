// taihu::caffe::Solver: Caffe's training loop and update rules.
//   step(): per iteration, zero parameter diffs, test every test_interval, iter_size
//   forward/backward passes, log (display), ApplyUpdate (clip_gradients, scale by
//   1/iter_size, weight decay L2 or L1 times decay_mult, the rule's update value times
//   lr_mult, data -= update), snapshot every `snapshot` iterations.
// Rules (type): SGD (momentum), Nesterov, AdaGrad, RMSProp, Adam, as Caffe computes
// them; history blobs are saved in .solverstate in Caffe's order.
// lr_policy: fixed, step, exp, inv, multistep, poly, sigmoid (learning_rate()).
// random_seed >= 0 seeds the process generator, so runs repeat; restore() of a
// snapshot continues with the identical loss sequence of an uninterrupted run.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "taihu/caffe/net.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {

// What a signal asks of a running solver (Caffe's SolverAction). Ordered: across
// data-parallel ranks the strongest request wins.
enum class SolverAction { none = 0, snapshot = 1, stop = 2 };

struct CurvePoints {
  std::vector<float> iter, loss;            // smoothed train loss at display points
  std::vector<float> test_iter, test_value; // first test net's first non-loss output
};

class Solver {
 public:
  // Builds the train net and the test nets (paths relative to the working
  // directory, as Caffe). Throws taihu::Error for inconsistent settings (naming them).
  explicit Solver(const proto::SolverParameter& param);
  virtual ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  virtual const char* type() const = 0;

  // Restores from `resume_file` (a .solverstate) when non-empty, then trains up to
  // max_iter, snapshots at the end, and logs "Optimization Done." (or, after a stop
  // request, "Optimization stopped early." once the final snapshot is written).
  void solve(const std::string& resume_file = "");
  void step(int iters);
  // Runs every test net once (test_iter batches); returns their mean outputs.
  std::vector<std::vector<float>> test_all();

  // Writes <prefix>_iter_N.caffemodel and .solverstate (atomically) and the curve
  // PNG; returns the .solverstate path.
  std::string snapshot();
  void restore(const std::string& solverstate_path);

  // The rate at the current iteration by lr_policy (throws for an unknown policy).
  float learning_rate() const;
  static float learning_rate(const proto::SolverParameter& param, int iter, int* current_step);

  int iter() const { return iter_; }
  Net& net() { return *net_; }
  const std::vector<std::unique_ptr<Net>>& test_nets() const { return test_nets_; }
  const proto::SolverParameter& param() const { return param_; }
  const std::vector<float>& losses() const { return loss_history_; }  // per iteration
  const CurvePoints& curve() const { return curve_; }
  std::vector<std::shared_ptr<Blob>>& history() {
    ensure_history();
    return history_;
  }

  // Called after each iteration's update with (iter just finished, loss).
  void set_iteration_callback(std::function<void(int, float)> callback) {
    iteration_callback_ = std::move(callback);
  }
  // Data-parallel hook: the listener sees the train net's gradients of the last of the
  // iter_size passes of every iteration (when they are complete), layer by layer in
  // backward order, before clipping, decay and the update run.
  void set_gradient_listener(GradientListener* listener) { gradient_listener_ = listener; }
  // Data-parallel roles: only the root rank tests, writes snapshots and the curve, and
  // shows the progress bar; `before_snapshot(iter)` runs on EVERY rank wherever a
  // snapshot is due (a collective cross-rank weight check), before the root writes it.
  void set_root(bool root) { root_ = root; }
  bool root() const { return root_; }
  void set_before_snapshot(std::function<void(int)> hook) { before_snapshot_ = std::move(hook); }
  // Asked once per iteration, after the update and the periodic snapshot, on every
  // rank (so a data-parallel caller must agree the answer across ranks): snapshot
  // writes one now; stop ends step() there. Caffe's GetRequestedAction.
  void set_action_function(std::function<SolverAction()> f) { action_ = std::move(f); }
  bool requested_early_exit() const { return requested_early_exit_; }
  // Shows a progress bar on a terminal (the CLI turns it on).
  void set_progress(bool on) { progress_ = on; }

 protected:
  // Caffe's ApplyUpdate; the rule-specific part is compute_update_value.
  void apply_update();
  virtual void compute_update_value(int param_id, float rate) = 0;
  // A rule may do ApplyUpdate's per-parameter steps (gradient scaling by `scale` when
  // != 1, L2 decay `decay` * w when != 0, its update, the weight step w -= update) in
  // one pass with the same arithmetic in the same order; false: the separate steps run.
  virtual bool update_in_one_pass(int /*param_id*/, float /*rate*/, float /*scale*/, float /*decay*/) { return false; }
  // History blobs: one per learnable parameter (Adam: two).
  virtual int history_per_param() const { return 1; }
  // What an update rule works on for one parameter: its gradient g (replaced by the
  // step Net::update subtracts), element count n, rate * lr_mult, and its first history
  // blob h.
  struct UpdateTarget {
    float* g;
    std::int64_t n;
    float local_rate;
    float* h;
  };
  UpdateTarget update_target(int param_id, float rate);

  proto::SolverParameter param_;
  std::unique_ptr<Net> net_;
  std::vector<std::unique_ptr<Net>> test_nets_;
  std::vector<std::shared_ptr<Blob>> history_;
  int iter_ = 0;
  int current_step_ = 0;

 private:
  void init_nets();
  void ensure_history();  // history_per_param() blobs per learnable parameter
  void clip_gradients();
  void normalize(int param_id);
  void regularize(int param_id);
  void update_smoothed_loss(float loss, int start_iter, int average_loss);
  std::vector<float> test(int test_net_id);
  void write_curve() const;

  std::vector<float> losses_window_;
  float smoothed_loss_ = 0;
  std::vector<float> loss_history_;
  CurvePoints curve_;
  std::function<void(int, float)> iteration_callback_;
  bool progress_ = false;
  GradientListener* gradient_listener_ = nullptr;
  bool root_ = true;
  std::function<void(int)> before_snapshot_;
  std::function<SolverAction()> action_;
  bool requested_early_exit_ = false;
  void snapshot_if_root();
};

// SGD (momentum), Nesterov, AdaGrad, RMSProp, Adam, chosen by `type` (or the
// deprecated solver_type enum). Throws taihu::Error naming an unknown type.
std::unique_ptr<Solver> create_solver(const proto::SolverParameter& param);

// solver_mode: GPU without a usable GPU logs one warning and returns false (CPU).
bool use_gpu(const proto::SolverParameter& param);

}  // namespace taihu::caffe
