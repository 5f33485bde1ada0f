// Recognizing a stride-1 convolution in a statement, for the derived `winograd` (3x3 or
// 5x5 window) and `ocvec` (any window) algorithms (see problem.hpp: match_winograd_conv). The test is semantic, not textual:
// index expressions are evaluated (Problem::eval_int) at unit steps of each loop
// variable, so `oh + r - P`, `r + oh - 1` or `oh - P + r` all match, while a stride
// (`2 * oh + r`), a dilation (`oh + 2 * r`) or a transposed weight do not.
#include <map>

#include "taihu/autotune/problem.hpp"

namespace taihu::autotune {
namespace {

const Expr* bare_name(const Expr& e) { return e.kind == Expr::Kind::name ? &e : nullptr; }

// True when idx == base + out_var + win_var (both with coefficient 1, no other
// loop variable, no cross term); *offset = base.
bool unit_sum(const Problem& p, const Expr& idx, const std::vector<std::string>& all_vars, const std::string& out_var,
              const std::string& win_var, std::int64_t* offset) {
  std::map<std::string, std::int64_t> at;
  for (const auto& v : all_vars) at[v] = 0;
  const std::int64_t base = p.eval_int(idx, at);
  for (const auto& v : all_vars) {
    const std::int64_t want = v == out_var || v == win_var ? 1 : 0;
    for (std::int64_t step : {1, 2, 5}) {
      at[v] = step;
      if (p.eval_int(idx, at) - base != want * step) return false;
      at[v] = 0;
    }
  }
  at[out_var] = 3;
  at[win_var] = 2;
  if (p.eval_int(idx, at) - base != 5) return false;
  *offset = base;
  return true;
}

}  // namespace

std::string match_winograd_conv(const Problem& p, int algorithm, ConvPattern* out) {
  const Algorithm& alg = p.spec().algorithms.at(static_cast<std::size_t>(algorithm));
  const std::string who = "compute " + alg.name + " = " + alg.method + "(" + alg.base + "): ";
  const auto& stmts = p.stmts(algorithm);
  const char* form = "Y[n, k, y, x] += X[n, c, y + r + a, x + s + b] * W[k, c, r, s]";
  if (stmts.size() != 1) return who + "needs a single statement of the form " + form;
  const BoundStmt& b = stmts.front();
  const Stmt& st = *b.stmt;
  if (st.op != ReduceOp::add || b.pure.size() != 4 || b.reduce.size() != 3 || st.rhs->kind != Expr::Kind::binary ||
      st.rhs->op != '*')
    return who + "the statement is not of the form " + form;
  const Expr& f0 = *st.rhs->args[0];
  const Expr& f1 = *st.rhs->args[1];
  if (f0.kind != Expr::Kind::access || f1.kind != Expr::Kind::access || f0.args.size() != 4 || f1.args.size() != 4)
    return who + "the statement is not of the form " + form;
  std::vector<std::string> all;
  for (const auto& v : b.pure) all.push_back(v.name);
  for (const auto& v : b.reduce) all.push_back(v.name);
  const std::string &vn = b.pure[0].name, &vk = b.pure[1].name, &vy = b.pure[2].name, &vx = b.pure[3].name;
  // The weight factor: W[k, c, r, s] with c, r, s the three reduction variables.
  auto weight_vars = [&](const Expr& w, std::string* c, std::string* r, std::string* s) {
    const Expr* i0 = bare_name(*w.args[0]);
    if (!i0 || i0->name != vk) return false;
    std::vector<std::string> red;
    for (int i = 1; i < 4; ++i) {
      const Expr* e = bare_name(*w.args[static_cast<std::size_t>(i)]);
      if (!e || b.is_pure(e->name) || b.extent(e->name) == 0) return false;
      red.push_back(e->name);
    }
    if (red[0] == red[1] || red[0] == red[2] || red[1] == red[2]) return false;
    *c = red[0], *r = red[1], *s = red[2];
    return true;
  };
  std::string vc, vr, vs;
  const Expr* image = nullptr;
  const Expr* weight = nullptr;
  if (weight_vars(f1, &vc, &vr, &vs)) image = &f0, weight = &f1;
  else if (weight_vars(f0, &vc, &vr, &vs)) image = &f1, weight = &f0;
  else return who + "no factor is a weight W[k, c, r, s] indexed by the output channel and the three reduction variables";
  const Expr* i0 = bare_name(*image->args[0]);
  const Expr* i1 = bare_name(*image->args[1]);
  ConvPattern cp;
  if (!i0 || i0->name != vn || !i1 || i1->name != vc)
    return who + "the image factor must be indexed [n, c, ...] by the batch and the reduced channel";
  if (!unit_sum(p, *image->args[2], all, vy, vr, &cp.off_y) || !unit_sum(p, *image->args[3], all, vx, vs, &cp.off_x))
    return who + "the image rows/columns are not y + r + const / x + s + const (" + alg.method + " needs stride 1 and dilation 1)";
  for (const Expr* t : {image, weight}) {
    const TensorDecl* d = p.spec().find_tensor(t->name);
    if (!d || d->role != TensorRole::input) return who + "'" + t->name + "' must be an input tensor";
  }
  if (p.tensor(image->name).decl->boundary == Boundary::clamp)
    return who + "the image has 'boundary clamp'; " + alg.method + " here pads with zeros (boundary zero or none)";
  cp.image = image->name;
  cp.weight = weight->name;
  const auto& xs = p.tensor(cp.image).shape;
  cp.n = xs[0], cp.c = xs[1], cp.h = xs[2], cp.w = xs[3];
  cp.k = b.pure[1].extent;
  cp.oh = b.pure[2].extent;
  cp.ow = b.pure[3].extent;
  cp.r = b.extent(vr);
  cp.s = b.extent(vs);
  if (alg.method == "winograd" && (cp.r != cp.s || (cp.r != 3 && cp.r != 5)))
    return who + "Winograd F(m x m, 3 x 3) / F(2 x 2, 5 x 5) needs a 3x3 or 5x5 window; this shape has " + std::to_string(cp.r) + "x" +
           std::to_string(cp.s);
  const auto& ws = p.tensor(cp.weight).shape;
  if (ws[0] != cp.k || ws[1] != cp.c || ws[2] != cp.r || ws[3] != cp.s)
    return who + "the weight's shape is not [K, C, " + std::to_string(cp.r) + ", " + std::to_string(cp.s) + "]";
  *out = cp;
  return "";
}

}  // namespace taihu::autotune
