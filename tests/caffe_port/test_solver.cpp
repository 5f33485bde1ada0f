// Solver update rules against hand-computed updates (linear regression whose gradient
// is written out in double), weight decay L1/L2, clipping, iter_size, lr policies.
#include <cmath>

#include "caffe_test_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe::test {
namespace {

constexpr int N = 4, I = 3, O = 2;

proto::SolverParameter regression_solver(const std::string& extra) {
  proto::SolverParameter sp;
  parse_text(R"(
    net_param {
      name: 'regression'
      layer { name: 'in' type: 'Input' top: 'x' top: 't' input_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 } } }
      layer { name: 'ip' type: 'InnerProduct' bottom: 'x' top: 'y' param { lr_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
              inner_product_param { num_output: 2 weight_filler { type: 'constant' value: 0.1 }
                                    bias_filler { type: 'constant' value: -0.2 } } }
      layer { name: 'loss' type: 'EuclideanLoss' bottom: 'y' bottom: 't' top: 'loss' }
    }
    base_lr: 0.1 lr_policy: 'fixed' display: 0 random_seed: 1 solver_mode: CPU
  )" + extra, "<solver>", &sp);
  return sp;
}

struct Reference {
  std::vector<double> w = std::vector<double>(O * I, 0.1), b = std::vector<double>(O, -0.2);
  std::vector<double> hw = std::vector<double>(O * I, 0), hb = std::vector<double>(O, 0);
  std::vector<double> vw = std::vector<double>(O * I, 0), vb = std::vector<double>(O, 0);
};

double x_at(int n, int i) { return std::sin(1.0 + n * 0.9 + i * 0.4); }
double t_at(int n, int o) { return std::cos(n * 0.5 + o); }

// dL/dW, dL/db of L = sum (Wx + b - t)^2 / (2N).
void gradient(const Reference& r, std::vector<double>* gw, std::vector<double>* gb) {
  gw->assign(O * I, 0);
  gb->assign(O, 0);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < O; ++o) {
      double y = r.b[o];
      for (int i = 0; i < I; ++i) y += r.w[o * I + i] * x_at(n, i);
      const double e = (y - t_at(n, o)) / N;
      (*gb)[o] += e;
      for (int i = 0; i < I; ++i) (*gw)[o * I + i] += e * x_at(n, i);
    }
  }
}

void set_inputs(Solver& s) {
  for (int n = 0; n < N; ++n) {
    for (int i = 0; i < I; ++i) s.net().blob_by_name("x")->mutable_data()[n * I + i] = static_cast<float>(x_at(n, i));
    for (int o = 0; o < O; ++o) s.net().blob_by_name("t")->mutable_data()[n * O + o] = static_cast<float>(t_at(n, o));
  }
}

void expect_matches(Solver& s, const Reference& r, int step) {
  const Blob* w = s.net().learnable_params()[0];
  const Blob* b = s.net().learnable_params()[1];
  for (int k = 0; k < O * I; ++k) ASSERT_NEAR(w->data()[k], r.w[k], 2e-5) << "w[" << k << "] after step " << step;
  for (int k = 0; k < O; ++k) ASSERT_NEAR(b->data()[k], r.b[k], 2e-5) << "b[" << k << "] after step " << step;
}

// One rule: how the reference turns a gradient into an update, given lr and the slot.
using Rule = std::function<double(double g, double lr, double* h, double* v, int t)>;

void run_rule(const std::string& solver_text, const Rule& rule, double decay, bool l1, int steps = 4) {
  LogCapture quiet;
  auto solver = create_solver(regression_solver(solver_text));
  set_inputs(*solver);
  Reference r;
  for (int t = 0; t < steps; ++t) {
    std::vector<double> gw, gb;
    gradient(r, &gw, &gb);
    for (int k = 0; k < O * I; ++k) {
      const double g = gw[k] + decay * (l1 ? (r.w[k] > 0) - (r.w[k] < 0) : r.w[k]);
      r.w[k] -= rule(g, 0.1, &r.hw[k], &r.vw[k], t);
    }
    for (int k = 0; k < O; ++k) r.b[k] -= rule(gb[k], 0.2, &r.hb[k], &r.vb[k], t);  // lr_mult 2, decay_mult 0
    solver->step(1);
    expect_matches(*solver, r, t);
  }
}

TEST(CaffeSolver, SGDMomentumWithL2) {
  run_rule("momentum: 0.9 weight_decay: 0.01", [](double g, double lr, double* h, double*, int) {
    *h = 0.9 * *h + lr * g;
    return *h;
  }, 0.01, false);
}

TEST(CaffeSolver, SGDWithL1) {
  run_rule("momentum: 0 weight_decay: 0.05 regularization_type: 'L1'", [](double g, double lr, double*, double*, int) {
    return lr * g;
  }, 0.05, true);
}

TEST(CaffeSolver, Nesterov) {
  run_rule("type: 'Nesterov' momentum: 0.8", [](double g, double lr, double* h, double*, int) {
    const double prev = *h;
    *h = 0.8 * *h + lr * g;
    return 1.8 * *h - 0.8 * prev;
  }, 0, false);
}

TEST(CaffeSolver, AdaGrad) {
  run_rule("type: 'AdaGrad' delta: 1e-6", [](double g, double lr, double* h, double*, int) {
    *h += g * g;
    return lr * g / (std::sqrt(*h) + 1e-6);
  }, 0, false);
}

TEST(CaffeSolver, RMSProp) {
  run_rule("type: 'RMSProp' rms_decay: 0.9 delta: 1e-6", [](double g, double lr, double* h, double*, int) {
    *h = 0.9 * *h + 0.1 * g * g;
    return lr * g / (std::sqrt(*h) + 1e-6);
  }, 0, false);
}

TEST(CaffeSolver, Adam) {
  run_rule("type: 'Adam' momentum: 0.9 momentum2: 0.999 delta: 1e-8", [](double g, double lr, double* m, double* v, int t) {
    *m = 0.9 * *m + 0.1 * g;
    *v = 0.999 * *v + 0.001 * g * g;
    const double c = std::sqrt(1 - std::pow(0.999, t + 1)) / (1 - std::pow(0.9, t + 1));
    return lr * c * *m / (std::sqrt(*v) + 1e-8);
  }, 0, false);
}

TEST(CaffeSolver, ClipGradientsScalesToTheNorm) {
  LogCapture logs;
  auto solver = create_solver(regression_solver("momentum: 0 clip_gradients: 0.01"));
  set_inputs(*solver);
  Reference r;
  std::vector<double> gw, gb;
  gradient(r, &gw, &gb);
  double norm = 0;
  for (double g : gw) norm += g * g;
  for (double g : gb) norm += g * g;
  norm = std::sqrt(norm);
  ASSERT_GT(norm, 0.01);
  const double s = 0.01 / norm;
  for (int k = 0; k < O * I; ++k) r.w[k] -= 0.1 * s * gw[k];
  for (int k = 0; k < O; ++k) r.b[k] -= 0.2 * s * gb[k];
  solver->step(1);
  expect_matches(*solver, r, 0);
  bool logged = false;
  for (const auto& l : logs.lines) logged |= l.find("Gradient clipping") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST(CaffeSolver, IterSizeAveragesAccumulatedGradients) {
  LogCapture quiet;
  auto a = create_solver(regression_solver("momentum: 0.5"));
  auto b = create_solver(regression_solver("momentum: 0.5 iter_size: 3"));
  set_inputs(*a);
  set_inputs(*b);
  a->step(3);
  b->step(3);
  for (std::size_t p = 0; p < 2; ++p) {
    for (std::int64_t k = 0; k < a->net().learnable_params()[p]->count(); ++k) {
      EXPECT_NEAR(a->net().learnable_params()[p]->data()[k], b->net().learnable_params()[p]->data()[k], 1e-6);
    }
  }
}

struct CountingListener : GradientListener {
  int ready = 0, done = 0;
  std::vector<float> weight_grad;
  Solver* solver = nullptr;
  void gradients_ready(int, const std::vector<int>& ids) override {
    ready += static_cast<int>(ids.size());
    const Blob* w = solver->net().learnable_params()[0];
    if (weight_grad.empty()) weight_grad.assign(w->diff(), w->diff() + w->count());
  }
  void backward_done() override { ++done; }
};

TEST(CaffeSolver, GradientListenerSeesTheLastIterSizePass) {
  LogCapture quiet;
  auto solver = create_solver(regression_solver("momentum: 0 iter_size: 3"));
  set_inputs(*solver);
  CountingListener l;
  l.solver = solver.get();
  solver->set_gradient_listener(&l);
  solver->step(2);
  EXPECT_EQ(l.done, 2);       // once per iteration, not per pass
  EXPECT_EQ(l.ready, 2 * 2);  // weight and bias each iteration
  // In the first iteration the diff it sees holds all three passes: 3x the gradient.
  Reference r;
  std::vector<double> gw, gb;
  gradient(r, &gw, &gb);
  ASSERT_EQ(l.weight_grad.size(), static_cast<std::size_t>(O * I));
  for (int k = 0; k < O * I; ++k) EXPECT_NEAR(l.weight_grad[static_cast<std::size_t>(k)], 3 * gw[k], 1e-5) << k;
}

// SGD's one-pass update must give exactly (bit for bit) Caffe's separate float steps:
// g *= 1/iter_size, g += decay * w, h = momentum * h + lr * g, g = h, w -= g.
struct SnapshotListener : GradientListener {
  Solver* solver = nullptr;
  std::vector<std::vector<float>> w, g, h;
  void gradients_ready(int, const std::vector<int>&) override {}
  void backward_done() override {
    w.clear(); g.clear(); h.clear();
    for (std::size_t p = 0; p < solver->net().learnable_params().size(); ++p) {
      const Blob* b = solver->net().learnable_params()[p];
      w.emplace_back(b->data(), b->data() + b->count());
      g.emplace_back(b->diff(), b->diff() + b->count());
      const Blob* hist = solver->history()[p].get();
      h.emplace_back(hist->data(), hist->data() + hist->count());
    }
  }
};

TEST(CaffeSolver, SGDOnePassUpdateIsBitwiseCaffesSteps) {
  LogCapture quiet;
  for (const char* extra : {"momentum: 0.9 weight_decay: 0.01 iter_size: 2", "momentum: 0.9", "momentum: 0.8 weight_decay: 0.003"}) {
    auto solver = create_solver(regression_solver(extra));
    set_inputs(*solver);
    solver->step(2);  // non-zero history
    SnapshotListener l;
    l.solver = solver.get();
    solver->set_gradient_listener(&l);
    solver->step(1);
    const auto& sp = solver->param();
    const float scale = sp.iter_size() == 1 ? 1.f : 1.f / static_cast<float>(sp.iter_size());
    for (std::size_t p = 0; p < l.w.size(); ++p) {
      const float decay = sp.weight_decay() * solver->net().params_weight_decay()[p];
      const float lr = sp.base_lr() * solver->net().params_lr()[p];
      const Blob* b = solver->net().learnable_params()[p];
      for (std::size_t k = 0; k < l.w[p].size(); ++k) {
        float g = l.g[p][k];
        if (sp.iter_size() != 1) g *= scale;
        if (decay != 0.f) g += decay * l.w[p][k];
        const float h = sp.momentum() * l.h[p][k] + lr * g;
        const float w = l.w[p][k] - h;
        ASSERT_EQ(b->data()[k], w) << extra << " param " << p << " element " << k;
        ASSERT_EQ(b->diff()[k], h) << extra << " param " << p << " element " << k;
        ASSERT_EQ(solver->history()[p]->data()[k], h) << extra << " param " << p << " element " << k;
      }
    }
  }
}

TEST(CaffeSolver, UnknownTypeAndPolicyAreNamed) {
  LogCapture quiet;
  try {
    create_solver(regression_solver("type: 'Magic'"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"Magic\""), std::string::npos);
  }
  proto::SolverParameter sp = regression_solver("");
  sp.set_lr_policy("wavy");
  int step = 0;
  EXPECT_THROW(Solver::learning_rate(sp, 1, &step), Error);
}

TEST(CaffeSolver, LearningRatePolicies) {
  auto lr = [](const std::string& text, int iter, int* step) {
    proto::SolverParameter sp;
    parse_text("base_lr: 0.5 gamma: 0.9 power: 0.75 stepsize: 10 max_iter: 100 " + text, "<p>", &sp);
    return static_cast<double>(Solver::learning_rate(sp, iter, step));
  };
  int s = 0;
  for (int it : {0, 1, 9, 10, 25, 99}) {
    SCOPED_TRACE(it);
    EXPECT_NEAR(lr("lr_policy: 'fixed'", it, &s), 0.5, 1e-7);
    EXPECT_NEAR(lr("lr_policy: 'step'", it, &s), 0.5 * std::pow(0.9, it / 10), 1e-7);
    EXPECT_NEAR(lr("lr_policy: 'exp'", it, &s), 0.5 * std::pow(0.9, it), 1e-7);
    EXPECT_NEAR(lr("lr_policy: 'inv'", it, &s), 0.5 * std::pow(1 + 0.9 * it, -0.75), 1e-7);
    EXPECT_NEAR(lr("lr_policy: 'poly'", it, &s), 0.5 * std::pow(1 - it / 100.0, 0.75), 1e-7);
    EXPECT_NEAR(lr("lr_policy: 'sigmoid'", it, &s), 0.5 / (1 + std::exp(-0.9 * (it - 10))), 1e-7);
  }
  LogCapture quiet;
  int step = 0;
  std::vector<double> got;
  for (int it = 0; it < 40; ++it) got.push_back(lr("lr_policy: 'multistep' stepvalue: 5 stepvalue: 12 stepvalue: 30", it, &step));
  for (int it = 0; it < 40; ++it) {
    const int k = (it >= 5) + (it >= 12) + (it >= 30);
    EXPECT_NEAR(got[static_cast<std::size_t>(it)], 0.5 * std::pow(0.9, k), 1e-7) << it;
  }
}

}  // namespace
}  // namespace taihu::caffe::test
