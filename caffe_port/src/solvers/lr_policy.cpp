// Caffe's learning-rate policies (Solver::learning_rate).
#include <cmath>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe {

float Solver::learning_rate(const proto::SolverParameter& p, int iter, int* current_step) {
  const std::string& policy = p.lr_policy();
  const double base = p.base_lr(), gamma = p.gamma(), power = p.power();
  double rate;
  if (policy == "fixed") {
    rate = base;
  } else if (policy == "step") {
    if (p.stepsize() <= 0) throw Error("solver: lr_policy \"step\" needs stepsize > 0");
    rate = base * std::pow(gamma, std::floor(static_cast<double>(iter) / p.stepsize()));
  } else if (policy == "exp") {
    rate = base * std::pow(gamma, iter);
  } else if (policy == "inv") {
    rate = base * std::pow(1.0 + gamma * iter, -power);
  } else if (policy == "multistep") {
    if (*current_step < p.stepvalue_size() && iter >= p.stepvalue(*current_step)) {
      ++*current_step;
      log_info("MultiStep Status: Iteration " + std::to_string(iter) + ", step = " + std::to_string(*current_step));
    }
    rate = base * std::pow(gamma, *current_step);
  } else if (policy == "poly") {
    if (p.max_iter() <= 0) throw Error("solver: lr_policy \"poly\" needs max_iter > 0");
    rate = base * std::pow(1.0 - static_cast<double>(iter) / p.max_iter(), power);
  } else if (policy == "sigmoid") {
    rate = base * (1.0 / (1.0 + std::exp(-gamma * (iter - static_cast<double>(p.stepsize())))));
  } else {
    throw Error("solver: unknown lr_policy \"" + policy + "\" (known: fixed, step, exp, inv, multistep, poly, sigmoid)");
  }
  return static_cast<float>(rate);
}

float Solver::learning_rate() const {
  int step = current_step_;
  return learning_rate(param_, iter_, &step);
}

}  // namespace taihu::caffe
