// The update rules: SGD with momentum, Nesterov, AdaGrad, RMSProp, Adam, with Caffe's
// formulas (local_rate = rate * lr_mult; the parameter diff becomes the step that
// Net::update subtracts). Elementwise loops over each parameter.
#include <cmath>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe {
namespace {

// SGD's whole per-parameter update in one pass: g = g * scale (Scale), g += decay * w
// (Decay), h = momentum * h + local_rate * g, g = h, w -= h: the arithmetic of
// normalize, regularize, compute_update_value and Net::update in their order.
template <bool Scale, bool Decay>
void sgd_one_pass(float* g, float* h, float* w, std::int64_t n, float scale, float decay, float momentum,
                  float local_rate) {
  for (std::int64_t i = 0; i < n; ++i) {
    float gi = g[i];
    if constexpr (Scale) gi *= scale;
    if constexpr (Decay) gi += decay * w[i];
    const float hi = momentum * h[i] + local_rate * gi;
    h[i] = hi;
    g[i] = hi;
    w[i] -= hi;
  }
}

class SGDSolver : public Solver {
 public:
  using Solver::Solver;
  const char* type() const override { return "SGD"; }
  void compute_update_value(int id, float rate) override {
    const auto [g, n, local_rate, h] = update_target(id, rate);
    const float momentum = param_.momentum();
    for (std::int64_t i = 0; i < n; ++i) {
      h[i] = momentum * h[i] + local_rate * g[i];
      g[i] = h[i];
    }
  }
  bool update_in_one_pass(int id, float rate, float scale, float decay) override {
    const auto [g, n, local_rate, h] = update_target(id, rate);
    float* w = net_->learnable_params()[static_cast<std::size_t>(id)]->mutable_data();
    const float m = param_.momentum();
    const bool s = scale != 1.f, d = decay != 0.f;
    if (s && d) sgd_one_pass<true, true>(g, h, w, n, scale, decay, m, local_rate);
    else if (s) sgd_one_pass<true, false>(g, h, w, n, scale, decay, m, local_rate);
    else if (d) sgd_one_pass<false, true>(g, h, w, n, scale, decay, m, local_rate);
    else sgd_one_pass<false, false>(g, h, w, n, scale, decay, m, local_rate);
    return true;
  }
};

class NesterovSolver : public Solver {
 public:
  using Solver::Solver;
  const char* type() const override { return "Nesterov"; }
  void compute_update_value(int id, float rate) override {
    const auto [g, n, local_rate, h] = update_target(id, rate);
    const float momentum = param_.momentum();
    for (std::int64_t i = 0; i < n; ++i) {
      const float prev = h[i];
      h[i] = momentum * h[i] + local_rate * g[i];
      g[i] = (1 + momentum) * h[i] - momentum * prev;
    }
  }
};

class AdaGradSolver : public Solver {
 public:
  explicit AdaGradSolver(const proto::SolverParameter& p) : Solver(p) {
    if (p.momentum() != 0) throw Error("solver AdaGrad: momentum must be 0 (got " + std::to_string(p.momentum()) + ")");
  }
  const char* type() const override { return "AdaGrad"; }
  void compute_update_value(int id, float rate) override {
    const auto [g, n, local_rate, h] = update_target(id, rate);
    const float delta = param_.delta();
    for (std::int64_t i = 0; i < n; ++i) {
      h[i] += g[i] * g[i];
      g[i] = local_rate * g[i] / (std::sqrt(h[i]) + delta);
    }
  }
};

class RMSPropSolver : public Solver {
 public:
  explicit RMSPropSolver(const proto::SolverParameter& p) : Solver(p) {
    if (p.momentum() != 0) throw Error("solver RMSProp: momentum must be 0 (got " + std::to_string(p.momentum()) + ")");
    if (p.rms_decay() < 0 || p.rms_decay() >= 1) throw Error("solver RMSProp: rms_decay must be in [0, 1)");
  }
  const char* type() const override { return "RMSProp"; }
  void compute_update_value(int id, float rate) override {
    const auto [g, n, local_rate, h] = update_target(id, rate);
    const float delta = param_.delta(), decay = param_.rms_decay();
    for (std::int64_t i = 0; i < n; ++i) {
      h[i] = decay * h[i] + (1 - decay) * g[i] * g[i];
      g[i] = local_rate * g[i] / (std::sqrt(h[i]) + delta);
    }
  }
};

class AdamSolver : public Solver {
 public:
  using Solver::Solver;
  const char* type() const override { return "Adam"; }
  int history_per_param() const override { return 2; }
  void compute_update_value(int id, float rate) override {
    const auto [g, n, local_rate, m] = update_target(id, rate);
    const float beta1 = param_.momentum(), beta2 = param_.momentum2(), eps = param_.delta();
    const double t = iter_ + 1;
    const auto correction = static_cast<float>(std::sqrt(1 - std::pow(beta2, t)) / (1 - std::pow(beta1, t)));
    float* v = history_[static_cast<std::size_t>(id) + net_->learnable_params().size()]->mutable_data();
    for (std::int64_t i = 0; i < n; ++i) {
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      g[i] = local_rate * correction * m[i] / (std::sqrt(v[i]) + eps);
    }
  }
};

}  // namespace

std::unique_ptr<Solver> create_solver(const proto::SolverParameter& param) {
  std::string type = param.type();
  if (!param.has_type() && param.has_solver_type()) {
    static const char* names[] = {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"};
    type = names[param.solver_type()];
  }
  if (type == "SGD") return std::make_unique<SGDSolver>(param);
  if (type == "Nesterov") return std::make_unique<NesterovSolver>(param);
  if (type == "AdaGrad") return std::make_unique<AdaGradSolver>(param);
  if (type == "RMSProp") return std::make_unique<RMSPropSolver>(param);
  if (type == "Adam") return std::make_unique<AdamSolver>(param);
  throw Error("solver: unknown type \"" + type + "\" (known: SGD, Nesterov, AdaGrad, RMSProp, Adam)");
}

}  // namespace taihu::caffe
