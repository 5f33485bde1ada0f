// Reference interpreter of the DSL (see interpreter.hpp).
#include "taihu/autotune/interpreter.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "taihu/arch/error.hpp"

namespace taihu::autotune {
namespace {

// Evaluates `e` with loop variables `vars`; load(tensor, flat index) reads an element
// in bounds (out-of-bounds accesses follow the tensor's boundary rule here). Both
// interpreters below share it and differ only in where elements come from.
template <class Load>
double eval_expr(const Problem& p, const Expr& e, const std::map<std::string, std::int64_t>& vars, Load&& load) {
  auto rec = [&](const Expr& x) { return eval_expr(p, x, vars, load); };
  switch (e.kind) {
    case Expr::Kind::number: return e.number;
    case Expr::Kind::name: {
      if (auto it = vars.find(e.name); it != vars.end()) return static_cast<double>(it->second);
      if (p.dims().count(e.name)) return static_cast<double>(p.dim(e.name));
      return p.param(e.name);
    }
    case Expr::Kind::neg: return -rec(*e.args[0]);
    case Expr::Kind::binary: {
      double a = rec(*e.args[0]), b = rec(*e.args[1]);
      switch (e.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        default: return a / b;
      }
    }
    case Expr::Kind::call: {
      double a = rec(*e.args[0]);
      if (e.name == "exp" || e.name == "fast_exp") return std::exp(a);  // the reference is exact
      if (e.name == "log") return std::log(a);
      if (e.name == "sqrt") return std::sqrt(a);
      if (e.name == "abs") return std::fabs(a);
      double b = rec(*e.args[1]);
      return e.name == "max" ? std::max(a, b) : std::min(a, b);
    }
    case Expr::Kind::access: {
      const BoundTensor& t = p.tensor(e.name);
      std::int64_t flat = 0;
      for (std::size_t i = 0; i < e.args.size(); ++i) {
        std::int64_t ix = p.eval_int(*e.args[i], vars);
        const std::int64_t n = t.shape[i];
        if (ix < 0 || ix >= n) {
          if (t.decl->boundary == Boundary::zero) return 0.0;
          if (t.decl->boundary == Boundary::clamp) ix = ix < 0 ? 0 : n - 1;
          else throw Error(e.loc.str() + ": access to '" + e.name + "' dimension " + std::to_string(i) + " at index " + std::to_string(ix) + " is outside [0, " + std::to_string(n) + ") and the tensor declares no boundary");
        }
        flat = flat * n + ix;
      }
      return load(e.name, flat);
    }
  }
  return 0;
}

struct Env {
  const Problem& p;
  std::map<std::string, std::vector<double>>& data;
  std::map<std::string, std::string> alias;  // tensor name -> storage name (steps)
  std::map<std::string, std::int64_t> vars;

  const std::vector<double>& storage(const std::string& t) {
    auto a = alias.find(t);
    return data.at(a == alias.end() ? t : a->second);
  }

  double eval(const Expr& e) {
    return eval_expr(p, e, vars, [&](const std::string& t, std::int64_t flat) {
      return storage(t)[static_cast<std::size_t>(flat)];
    });
  }
};

void run_stmt(Env& env, const BoundStmt& b, std::vector<double>& out) {
  const Stmt& st = *b.stmt;
  const std::size_t np = b.pure.size(), nr = b.reduce.size();
  std::vector<std::int64_t> pi(np, 0);
  const double init = st.op == ReduceOp::max ? -std::numeric_limits<double>::infinity()
                      : st.op == ReduceOp::min ? std::numeric_limits<double>::infinity()
                                               : 0.0;
  std::int64_t flat = 0;
  for (;;) {
    for (std::size_t i = 0; i < np; ++i) env.vars[b.pure[i].name] = pi[i];
    double acc = init;
    if (st.op == ReduceOp::assign) {
      acc = env.eval(*st.rhs);
    } else {
      std::vector<std::int64_t> ri(nr, 0);
      bool empty = false;
      for (const auto& r : b.reduce) empty = empty || r.extent <= 0;
      while (!empty) {
        for (std::size_t i = 0; i < nr; ++i) env.vars[b.reduce[i].name] = ri[i];
        double v = env.eval(*st.rhs);
        acc = st.op == ReduceOp::add ? acc + v : st.op == ReduceOp::max ? std::max(acc, v) : std::min(acc, v);
        std::size_t d = nr;
        while (d > 0 && ++ri[d - 1] == b.reduce[d - 1].extent) ri[--d] = 0;
        if (d == 0) break;
      }
    }
    out[static_cast<std::size_t>(flat++)] = acc;
    std::size_t d = np;
    while (d > 0 && ++pi[d - 1] == b.pure[d - 1].extent) pi[--d] = 0;
    if (d == 0) break;
  }
}

}  // namespace

std::vector<float> interpret(const Problem& p, int algorithm, const TensorMap& inputs) {
  std::map<std::string, std::vector<double>> data;
  for (const auto& name : p.inputs()) {
    auto it = inputs.find(name);
    if (it == inputs.end()) throw Error("interpret: input '" + name + "' missing");
    if (static_cast<std::int64_t>(it->second.size()) != p.tensor(name).size())
      throw Error("interpret: input '" + name + "' has " + std::to_string(it->second.size()) + " elements, expected " + std::to_string(p.tensor(name).size()));
    data[name].assign(it->second.begin(), it->second.end());
  }
  for (const auto& t : p.spec().tensors)
    if (t.role != TensorRole::input) data[t.name].assign(static_cast<std::size_t>(p.tensor(t.name).size()), 0.0);
  Env env{p, data, {}, {}};
  for (std::int64_t step = 0; step < p.steps(); ++step) {
    if (step > 0) {  // the previous output is this step's input
      const auto& st = *p.spec().steps;
      data[st.to] = data[st.from];
    }
    for (const auto& b : p.stmts(algorithm)) run_stmt(env, b, data[b.stmt->tensor]);
  }
  const auto& out = data[p.output()];
  return std::vector<float>(out.begin(), out.end());
}

namespace {

// Demand-driven evaluation: value(tensor, step, flat index), memoized.
class OnDemand {
 public:
  OnDemand(const Problem& p, int algorithm, const TensorMap& inputs) : p_(p), inputs_(inputs) {
    for (const auto& b : p.stmts(algorithm)) writer_[b.stmt->tensor] = &b;
  }

  double value(const std::string& tensor, std::int64_t step, std::int64_t flat) {
    const auto& steps = p_.spec().steps;
    if (steps && tensor == steps->to && step > 0) return value(steps->from, step - 1, flat);
    auto in = inputs_.find(tensor);
    if (in != inputs_.end()) return in->second[static_cast<std::size_t>(flat)];
    auto& memo = memo_[tensor + "@" + std::to_string(step)];
    if (auto it = memo.find(flat); it != memo.end()) return it->second;
    const BoundStmt& b = *writer_.at(tensor);
    std::map<std::string, std::int64_t> vars;
    std::int64_t rest = flat;
    for (std::size_t i = b.pure.size(); i-- > 0;) {
      vars[b.pure[i].name] = rest % b.pure[i].extent;
      rest /= b.pure[i].extent;
    }
    const Stmt& st = *b.stmt;
    double acc = st.op == ReduceOp::max ? -std::numeric_limits<double>::infinity()
                 : st.op == ReduceOp::min ? std::numeric_limits<double>::infinity() : 0.0;
    if (st.op == ReduceOp::assign) {
      acc = eval(*st.rhs, vars, step);
    } else {
      const std::size_t nr = b.reduce.size();
      std::vector<std::int64_t> ri(nr, 0);
      for (;;) {
        for (std::size_t i = 0; i < nr; ++i) vars[b.reduce[i].name] = ri[i];
        double v = eval(*st.rhs, vars, step);
        acc = st.op == ReduceOp::add ? acc + v : st.op == ReduceOp::max ? std::max(acc, v) : std::min(acc, v);
        std::size_t d = nr;
        while (d > 0 && ++ri[d - 1] == b.reduce[d - 1].extent) ri[--d] = 0;
        if (d == 0) break;
      }
    }
    memo[flat] = acc;
    return acc;
  }

 private:
  const Problem& p_;
  const TensorMap& inputs_;
  std::map<std::string, const BoundStmt*> writer_;
  std::map<std::string, std::map<std::int64_t, double>> memo_;

  double eval(const Expr& e, const std::map<std::string, std::int64_t>& vars, std::int64_t step) {
    return eval_expr(p_, e, vars, [&](const std::string& t, std::int64_t flat) { return value(t, step, flat); });
  }
};

}  // namespace

std::vector<double> interpret_points(const Problem& p, int algorithm, const TensorMap& inputs,
                                     const std::vector<std::int64_t>& points) {
  for (const auto& name : p.inputs())
    if (!inputs.count(name)) throw Error("interpret: input '" + name + "' missing");
  OnDemand od(p, algorithm, inputs);
  std::vector<double> out;
  out.reserve(points.size());
  for (auto i : points) out.push_back(od.value(p.output(), p.steps() - 1, i));
  return out;
}

std::vector<std::int64_t> sample_points(const Problem& p, std::size_t count, std::uint64_t seed) {
  const std::int64_t n = p.tensor(p.output()).size();
  std::vector<std::int64_t> pts;
  if (static_cast<std::int64_t>(count) >= n) {
    for (std::int64_t i = 0; i < n; ++i) pts.push_back(i);
    return pts;
  }
  std::mt19937_64 rng(seed);
  std::set<std::int64_t> chosen = {0, n - 1};
  while (chosen.size() < count) chosen.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)));
  return std::vector<std::int64_t>(chosen.begin(), chosen.end());
}

TensorMap random_inputs(const Problem& p, std::uint64_t seed) {
  TensorMap m;
  std::mt19937_64 rng(seed);
  for (const auto& name : p.inputs()) {
    auto& v = m[name];
    v.resize(static_cast<std::size_t>(p.tensor(name).size()));
    for (auto& x : v) x = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return m;
}

Agreement compare_outputs(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  Agreement a;
  if (got.size() != want.size()) {
    a.ok = false;
    a.message = "output has " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
    return a;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    double err = std::fabs(g - w) / (1.0 + std::fabs(w));
    if (std::isnan(g) != std::isnan(w)) err = std::numeric_limits<double>::infinity();
    if (err > a.max_error || (std::isnan(err) && a.worst < 0)) {
      a.max_error = err;
      a.worst = static_cast<std::int64_t>(i);
    }
  }
  if (!(a.max_error <= tolerance)) {
    a.ok = false;
    a.message = "element " + std::to_string(a.worst) + ": got " + std::to_string(got[static_cast<std::size_t>(a.worst)]) +
                ", reference " + std::to_string(want[static_cast<std::size_t>(a.worst)]) + " (error " + std::to_string(a.max_error) + ")";
  }
  return a;
}

double default_tolerance(const Problem& p, int algorithm) {
  double longest = 1;
  for (const auto& b : p.stmts(algorithm)) {
    double n = 1;
    for (const auto& r : b.reduce) n *= static_cast<double>(r.extent);
    longest = std::max(longest, n);
  }
  const double tol = 1e-5 * std::sqrt(longest) * static_cast<double>(p.steps()) + 1e-5;
  // Winograd's transforms scale values (F(4x4,3x3): the 4, 5 and 8 of its matrices)
  // before the sums, so fp32 rounding grows: 4x the direct bound. Measured (tests/
  // autotune/test_winograd.cpp, max |err| / (1 + |ref|)): F(2x2) 3e-6 at C=40, F(4x4)
  // 1.3e-5 at C=5 and 4.8e-5 at C=33, against bounds of 2e-3, 3e-4 and 7e-4.
  if (p.is_winograd(algorithm)) return 4 * tol;
  return tol;
}

}  // namespace taihu::autotune
