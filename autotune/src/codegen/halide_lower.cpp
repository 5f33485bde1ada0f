// DSL -> Halide (see halide_lower.hpp). Tensors T[i0, .., in-1] (row-major, last index
// fastest) become Halide Funcs T(in-1, .., i0): Halide's first dimension is innermost.
//
// Schedule template for the output statement (the statement writing the output):
//   every pure loop with a tile smaller than its extent splits into v_o (tile loop) and
//   v_i; the tile loops run outermost (the parallel loop first), the in-tile loops
//   inside them in the `order` knob's order with the vectorized loop innermost.
//   A reduction output computes into an accumulator Func at the innermost tile loop
//   (the classic Halide matmul structure): its update loops are the in-tile pure loops
//   and the reduction loops (split by their tiles, outer parts outermost).
//   Temps: root (whole, vectorized, parallel) | inline | tile (at the tile loop).
//   block: a second, outer level of tiles (cache blocks) around the tiles; the
//   parallel loop is the block loop of its variable when that is blocked.
//   layout staged: the input's needed region is copied per block (per tile when
//   nothing is blocked); packed: copied once per outermost loop iteration (e.g. a
//   K x block panel of B per parallel block of columns), stored densely.
//   Steps: every step before the last is computed whole (timeblock 1) or, with
//   timeblock b, only each b-th step is whole and the others are computed per tile of
//   their consumer (overlapping tiles, redundant halo work, cache-resident).
#include "codegen/halide_lower.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <set>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"

namespace taihu::autotune::halide {

using namespace Halide;

Target target_for_this_cpu() {
  Target t = get_host_target();
  if (arch::active_isa() == arch::Isa::generic) {
    for (auto f : {Target::AVX, Target::AVX2, Target::FMA, Target::F16C, Target::AVX512, Target::AVX512_Skylake})
      t = t.without_feature(f);
  } else if (arch::active_isa() == arch::Isa::avx2) {
    for (auto f : {Target::AVX512, Target::AVX512_Skylake, Target::AVX512_Cannonlake, Target::AVX512_SapphireRapids})
      t = t.without_feature(f);
  }
  // TAIHU_HALIDE_PROFILE=1: Halide's sampling profiler (time per Func, printed when a
  // pipeline is released) -- for looking into a schedule, not for measuring.
  if (const char* prof = std::getenv("TAIHU_HALIDE_PROFILE"); prof && std::string(prof) == "1") t = t.with_feature(Target::Profile);
  return t;
}

namespace {

using AstExpr = taihu::autotune::Expr;

Halide::Expr index_expr(const Problem& p, const AstExpr& e, const std::map<std::string, Halide::Expr>& loop) {
  switch (e.kind) {
    case AstExpr::Kind::number: return Halide::Expr(static_cast<int>(e.number));
    case AstExpr::Kind::name: {
      if (auto it = loop.find(e.name); it != loop.end()) return it->second;
      return Halide::Expr(static_cast<int>(p.dim(e.name)));
    }
    case AstExpr::Kind::neg: return -index_expr(p, *e.args[0], loop);
    case AstExpr::Kind::binary: {
      Halide::Expr a = index_expr(p, *e.args[0], loop), b = index_expr(p, *e.args[1], loop);
      switch (e.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        default: return a / b;  // Halide integer division rounds down, as the DSL does
      }
    }
    default: throw Error(e.loc.str() + ": not an index expression");
  }
}

struct StepFuncs {
  std::map<std::string, Func> funcs;  // tensor -> Func (temps and the output) of this step
  // The previous step's output as this step reads it: zero outside the tensor's bounds
  // (a zero boundary), inline unless the schedule materializes it (fused steps).
  Func zero_padded_input;
};

class Lowering {
 public:
  Lowering(const Problem& p, int algorithm) : p_(p), algorithm_(algorithm) {
    // Every lowering in a process gets its own Func names: JIT-compiling a second
    // pipeline whose Funcs reuse an earlier pipeline's names gave code ~3x slower
    // (measured with Halide 14: register-tiled gemm 21 vs 68 GFLOP/s on one core).
    static std::atomic<int> count{0};
    const int n = count.fetch_add(1);
    if (n > 0) suffix_ = std::to_string(n).insert(0, 1, '_');
  }

  Lowered build(const Schedule* s, int threads, bool for_default) {
    Lowered out;
    // Only a schedule that fuses steps materializes the zero-padded intermediate; the
    // pipeline the autoschedulers see is left as it was (one Func per step).
    pad_fused_steps_ = s && s->timeblock > 1;
    for (const auto& name : p_.inputs()) {
      const BoundTensor& t = p_.tensor(name);
      const int rank = static_cast<int>(t.shape.size());
      ImageParam ip(Float(32), rank, name);
      std::int64_t stride = 1;
      Region est;
      for (int d = 0; d < rank; ++d) {
        const int extent = static_cast<int>(t.shape[static_cast<std::size_t>(rank - 1 - d)]);
        ip.dim(d).set_min(0).set_extent(extent).set_stride(static_cast<int>(stride));
        est.push_back(Range(0, extent));
        stride *= extent;
      }
      ip.set_estimates(est);
      Func src(name + "_src" + suffix_);
      std::vector<Var> args = hvars(rank);
      if (t.decl->boundary == Boundary::zero) src(args) = BoundaryConditions::constant_exterior(ip, 0.0f)(args);
      else if (t.decl->boundary == Boundary::clamp) src(args) = BoundaryConditions::repeat_edge(ip)(args);
      else src(args) = ip(args);
      sources_[name] = src;
      out.inputs.push_back(ip);
    }
    const std::int64_t steps = p_.steps();
    std::vector<StepFuncs> step_funcs;
    for (std::int64_t st = 0; st < steps; ++st) step_funcs.push_back(build_step(st, step_funcs, st == steps - 1));
    Func result = step_funcs.back().funcs.at(p_.output());
    const BoundTensor& ot = p_.tensor(p_.output());
    const int orank = static_cast<int>(ot.shape.size());
    Region est;
    for (int d = 0; d < orank; ++d) est.push_back(Range(0, static_cast<int>(ot.shape[static_cast<std::size_t>(orank - 1 - d)])));
    result.set_estimates(est);
    {
      OutputImageParam o = result.output_buffer();
      std::int64_t stride = 1;
      for (int d = 0; d < orank; ++d) {
        const int extent = static_cast<int>(ot.shape[static_cast<std::size_t>(orank - 1 - d)]);
        o.dim(d).set_min(0).set_extent(extent).set_stride(static_cast<int>(stride));
        stride *= extent;
      }
    }
    if (s) {
      apply(*s, step_funcs, threads);
    } else if (for_default) {
      for (auto& sf : step_funcs)
        for (auto& [name, f] : sf.funcs)
          if (f.has_update_definition() && f.name() != result.name()) f.compute_root();
      for (auto& f : reduction_accumulators_) f.compute_root();
    }
    out.output = result;
    out.pipeline = Pipeline(result);
    return out;
  }

 private:
  const Problem& p_;
  int algorithm_;
  std::string suffix_;
  bool pad_fused_steps_ = false;
  std::map<std::string, Func> sources_;
  std::vector<Func> reduction_accumulators_;
  std::map<std::string, Func> accumulator_of_;  // output func name -> accumulator (last step)

  static std::vector<Var> hvars(int rank) {
    std::vector<Var> v;
    static const char* names[] = {"d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"};
    if (rank > 8) throw Error("tensors of rank > 8 are not supported");
    for (int d = 0; d < rank; ++d) v.push_back(Var(names[d]));
    return v;
  }

  Halide::Expr value_expr(const AstExpr& e, const std::map<std::string, Halide::Expr>& loop,
                          const std::function<Halide::Expr(const std::string&, std::vector<Halide::Expr>)>& read) {
    switch (e.kind) {
      case AstExpr::Kind::number: return Halide::Expr(static_cast<float>(e.number));
      case AstExpr::Kind::name: {
        if (auto it = loop.find(e.name); it != loop.end()) return cast<float>(it->second);
        if (p_.dims().count(e.name)) return Halide::Expr(static_cast<float>(p_.dim(e.name)));
        return Halide::Expr(static_cast<float>(p_.param(e.name)));
      }
      case AstExpr::Kind::neg: return -value_expr(*e.args[0], loop, read);
      case AstExpr::Kind::binary: {
        Halide::Expr a = value_expr(*e.args[0], loop, read), b = value_expr(*e.args[1], loop, read);
        switch (e.op) {
          case '+': return a + b;
          case '-': return a - b;
          case '*': return a * b;
          default: return a / b;
        }
      }
      case AstExpr::Kind::call: {
        Halide::Expr a = value_expr(*e.args[0], loop, read);
        if (e.name == "exp") return Halide::exp(a);
        // fast_exp: Halide's polynomial (relative error < 2^-17 for arguments in
        // [-87, 88], 0 below; see the DSL's README), ~2x cheaper than exp.
        if (e.name == "fast_exp") return Halide::fast_exp(a);
        if (e.name == "log") return Halide::log(a);
        if (e.name == "sqrt") return Halide::sqrt(a);
        if (e.name == "abs") return Halide::abs(a);
        Halide::Expr b = value_expr(*e.args[1], loop, read);
        return e.name == "max" ? Halide::max(a, b) : Halide::min(a, b);
      }
      case AstExpr::Kind::access: {
        std::vector<Halide::Expr> idx;
        for (const auto& a : e.args) idx.push_back(index_expr(p_, *a, loop));
        return read(e.name, idx);
      }
    }
    return Halide::Expr();
  }

  StepFuncs build_step(std::int64_t step, const std::vector<StepFuncs>& previous, bool last) {
    StepFuncs sf;
    const auto& steps = p_.spec().steps;
    auto read = [&](const std::string& name, std::vector<Halide::Expr> idx) -> Halide::Expr {
      std::reverse(idx.begin(), idx.end());
      if (steps && name == steps->to && step > 0) {
        const BoundTensor& t = p_.tensor(name);
        Region bounds;
        for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) bounds.push_back(Range(0, static_cast<int>(*it)));
        Func prev = previous.back().funcs.at(steps->from);
        const Boundary b = t.decl->boundary;
        if (b == Boundary::zero && pad_fused_steps_) {
          if (!sf.zero_padded_input.defined()) {
            sf.zero_padded_input = Func(name + "_pad_t" + std::to_string(step) + suffix_);
            std::vector<Var> args = hvars(static_cast<int>(t.shape.size()));
            sf.zero_padded_input(args) = BoundaryConditions::constant_exterior(prev, 0.0f, bounds)(args);
          }
          return sf.zero_padded_input(idx);
        }
        if (b == Boundary::zero) return BoundaryConditions::constant_exterior(prev, 0.0f, bounds)(idx);
        if (b == Boundary::clamp) return BoundaryConditions::repeat_edge(prev, bounds)(idx);
        return prev(idx);
      }
      if (auto it = sources_.find(name); it != sources_.end()) return it->second(idx);
      return sf.funcs.at(name)(idx);
    };
    const auto& stmts = p_.stmts(algorithm_);
    for (std::size_t si = 0; si < stmts.size(); ++si) {
      const BoundStmt& b = stmts[si];
      const Stmt& st = *b.stmt;
      const std::string fname = st.tensor + "_t" + std::to_string(step) + suffix_;
      std::map<std::string, Halide::Expr> loop;
      std::vector<Var> args;
      for (auto it = b.pure.rbegin(); it != b.pure.rend(); ++it) {
        Var v(it->name);
        args.push_back(v);
        loop[it->name] = v;
      }
      if (st.op == ReduceOp::assign) {
        Func f(fname);
        f(args) = value_expr(*st.rhs, loop, read);
        sf.funcs[st.tensor] = f;
        continue;
      }
      Region dom;
      for (auto it = b.reduce.rbegin(); it != b.reduce.rend(); ++it) dom.push_back(Range(0, static_cast<int>(it->extent)));
      RDom r(dom, fname + "_r");
      for (std::size_t i = 0; i < b.reduce.size(); ++i) loop[b.reduce[b.reduce.size() - 1 - i].name] = r[static_cast<int>(i)];
      const bool is_output = st.tensor == p_.output();
      Func acc(is_output ? fname + "_acc" : fname);
      Halide::Expr v = value_expr(*st.rhs, loop, read);
      switch (st.op) {
        case ReduceOp::add: acc(args) = 0.0f; acc(args) += v; break;
        case ReduceOp::max: acc(args) = Float(32).min(); acc(args) = Halide::max(acc(args), v); break;
        default: acc(args) = Float(32).max(); acc(args) = Halide::min(acc(args), v); break;
      }
      if (is_output) {
        Func f(fname);
        f(args) = acc(args);
        sf.funcs[st.tensor] = f;
        reduction_accumulators_.push_back(acc);
        if (last) accumulator_of_[fname] = acc;
        rdoms_[fname] = r;
      } else {
        sf.funcs[st.tensor] = f_with_rdom(acc, r);
      }
    }
    return sf;
  }

  Func f_with_rdom(Func f, RDom r) {
    rdoms_[f.name()] = r;
    return f;
  }
  std::map<std::string, RDom> rdoms_;

  // Tiles a pure Func by the schedule. Loop nest, outermost first: [block loops, the
  // parallel one first] [tile loops] [in-tile loops in `order`, the vectorized one
  // innermost]. Returns the innermost tile loop (the accumulator's level); *block_level
  // gets the innermost block loop (or that same level when nothing is blocked).
  LoopLevel tile(Func f, const BoundStmt& b, const Schedule& s, std::vector<std::string>* inner_order,
                 LoopLevel* block_level = nullptr, LoopLevel* outer_level = nullptr) {
    std::vector<std::string> names;
    for (const auto& v : b.pure) names.push_back(v.name);
    std::vector<std::string> in_order;  // in-tile loops, outermost first
    if (!s.order.empty()) {
      for (const auto& n : s.order)
        if (b.is_pure(n)) in_order.push_back(n);
    } else {
      in_order = names;
    }
    const std::string par = s.parallel;
    const std::string vec = s.vectorize.empty() ? "" : s.vectorize.begin()->first;
    std::set<std::string> blocked, tiled;
    for (const auto& n : names) {
      auto bl = s.block.find(n);
      const std::int64_t span = bl != s.block.end() && bl->second < b.extent(n) ? bl->second : b.extent(n);
      if (span < b.extent(n)) {
        f.split(Var(n), Var(n + "_b"), Var(n + "_r"), static_cast<int>(span));
        blocked.insert(n);
      }
      auto t = s.tile.find(n);
      if (t != s.tile.end() && t->second < span) {
        f.split(blocked.count(n) ? Var(n + "_r") : Var(n), Var(n + "_o"), Var(n + "_i"), static_cast<int>(t->second));
        tiled.insert(n);
      }
    }
    auto inner_var = [&](const std::string& n) -> Var {
      return tiled.count(n) ? Var(n + "_i") : blocked.count(n) ? Var(n + "_r") : Var(n);
    };
    std::vector<Var> block_loops, tile_loops;  // outermost first
    bool par_placed = false;
    if (!par.empty()) {
      if (blocked.count(par)) block_loops.push_back(Var(par + "_b"));
      else if (tiled.count(par)) tile_loops.push_back(Var(par + "_o"));
      else tile_loops.push_back(Var(par)), in_order.erase(std::remove(in_order.begin(), in_order.end(), par), in_order.end());
      par_placed = true;
    }
    for (const auto& n : names)
      if (blocked.count(n) && !(par_placed && n == par)) block_loops.push_back(Var(n + "_b"));
    // Tile loops follow the order knob (the parallel one stays first when unblocked).
    for (const auto& n : in_order)
      if (tiled.count(n) && !(n == par && !blocked.count(n))) tile_loops.push_back(Var(n + "_o"));
    if (!vec.empty() && std::find(in_order.begin(), in_order.end(), vec) != in_order.end()) {
      in_order.erase(std::remove(in_order.begin(), in_order.end(), vec), in_order.end());
      in_order.push_back(vec);
    }
    std::vector<Var> outers = block_loops;
    if (!par.empty() && !blocked.count(par)) {
      // the parallel tile loop runs outermost, above the blocks
      outers.insert(outers.begin(), tile_loops.front());
      tile_loops.erase(tile_loops.begin());
    }
    const std::size_t n_block_level = outers.size();
    outers.insert(outers.end(), tile_loops.begin(), tile_loops.end());
    std::vector<VarOrRVar> reorder_list;  // innermost first
    for (auto it = in_order.rbegin(); it != in_order.rend(); ++it) reorder_list.push_back(inner_var(*it));
    for (auto it = outers.rbegin(); it != outers.rend(); ++it) reorder_list.push_back(*it);
    if (reorder_list.size() > 1) f.reorder(reorder_list);
    if (!par.empty()) f.parallel(outers.front());
    if (!vec.empty()) f.vectorize(inner_var(vec), s.vectorize.begin()->second);
    if (inner_order) *inner_order = in_order;
    const LoopLevel at = outers.empty() ? LoopLevel::root() : LoopLevel(f, outers.back());
    if (block_level) *block_level = n_block_level == 0 ? at : LoopLevel(f, outers[n_block_level - 1]);
    if (outer_level) *outer_level = outers.empty() ? at : LoopLevel(f, outers.front());
    return at;
  }

  void apply(const Schedule& s, std::vector<StepFuncs>& step_funcs, int threads) {
    (void)threads;
    const auto& stmts = p_.stmts(algorithm_);
    const BoundStmt& main = stmts.back();
    const std::int64_t steps = p_.steps();
    Func out = step_funcs.back().funcs.at(p_.output());
    std::vector<std::string> in_order;
    LoopLevel block_at, outer_at;
    LoopLevel at = tile(out, main, s, &in_order, &block_at, &outer_at);
    LoopLevel temps_at = at;  // where the accumulator and temps "at tile" are computed
    const std::string vec = s.vectorize.empty() ? "" : s.vectorize.begin()->first;
    const int width = s.vectorize.empty() ? 1 : s.vectorize.begin()->second;
    if (auto acc_it = accumulator_of_.find(out.name()); acc_it != accumulator_of_.end()) {
      Func acc = acc_it->second;
      RDom r = rdoms_.at(out.name());
      // With cache blocks and a split reduction, the accumulator covers the whole block
      // and its update runs [reduction blocks] [tiles] [in-tile loops]: each tile's
      // accumulators are reloaded once per reduction block (K-blocking: the inputs'
      // panels of one reduction block stay in cache). Otherwise it covers one tile and
      // the whole reduction runs inside it (register tile).
      bool k_blocked = false;
      for (const auto& lv : main.reduce)
        if (s.tile.count(lv.name) && s.tile.at(lv.name) < lv.extent) k_blocked = true;
      const bool acc_at_block = k_blocked && !s.block.empty();
      if (acc_at_block) temps_at = block_at;
      acc.compute_at(temps_at);
      if (!vec.empty()) acc.vectorize(Var(vec), width);
      for (const auto& [n, f] : s.unroll)
        if (main.is_pure(n) && n != vec) acc.unroll(Var(n), f);
      Stage u = acc.update();
      std::vector<VarOrRVar> outer_r, order_inner;  // order_inner: outermost first
      std::map<std::string, VarOrRVar> rv;
      for (std::size_t i = 0; i < main.reduce.size(); ++i) {
        const std::string& n = main.reduce[main.reduce.size() - 1 - i].name;
        rv.emplace(n, VarOrRVar(r[static_cast<int>(i)]));
      }
      for (const auto& lv : main.reduce) {
        auto t = s.tile.find(lv.name);
        if (t != s.tile.end() && t->second < lv.extent) {
          RVar ro(lv.name + "_ro"), ri(lv.name + "_ri");
          u.split(rv.at(lv.name).rvar, ro, ri, static_cast<int>(t->second));
          outer_r.push_back(ro);
          rv.erase(lv.name);
          rv.emplace(lv.name, VarOrRVar(ri));
        }
      }
      std::vector<std::string> full = s.order;
      if (full.empty()) {
        for (const auto& lv : main.pure) full.push_back(lv.name);
        for (const auto& lv : main.reduce) full.push_back(lv.name);
      }
      if (!vec.empty()) {
        // The vectorized loop goes innermost, except for reduction loops unrolled whole
        // (a small window such as a 3x3 filter): they run inside it, so each vector
        // accumulator stays in a register across the window.
        full.erase(std::remove(full.begin(), full.end(), vec), full.end());
        std::vector<std::string> window;
        for (const auto& lv : main.reduce) {
          auto un = s.unroll.find(lv.name);
          const bool split = s.tile.count(lv.name) && s.tile.at(lv.name) < lv.extent;
          if (un != s.unroll.end() && !split && un->second >= lv.extent) window.push_back(lv.name);
        }
        auto pos = std::find_if(full.begin(), full.end(), [&](const std::string& n) {
          return std::find(window.begin(), window.end(), n) != window.end();
        });
        std::vector<std::string> tail;
        for (auto it = pos; it != full.end(); ++it)
          if (std::find(window.begin(), window.end(), *it) != window.end()) tail.push_back(*it);
        std::erase_if(full, [&](const std::string& n) { return std::find(tail.begin(), tail.end(), n) != tail.end(); });
        full.push_back(vec);
        full.insert(full.end(), tail.begin(), tail.end());
      }
      std::set<std::string> split_pure;  // acc_at_block: pure loops split by their tile
      std::vector<VarOrRVar> tile_outer;  // outermost first
      if (acc_at_block) {
        for (const auto& n : full) {
          if (!main.is_pure(n)) continue;
          const std::int64_t span = s.block.count(n) ? s.block.at(n) : main.extent(n);
          if (s.tile.count(n) && s.tile.at(n) < span) {
            // An uneven split of an update must not round up (it would read past the
            // inputs): guard the last partial tile.
            const TailStrategy tail = span % s.tile.at(n) == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf;
            u.split(Var(n), Var(n + "_uo"), Var(n + "_ui"), static_cast<int>(s.tile.at(n)), tail);
            split_pure.insert(n);
            tile_outer.push_back(Var(n + "_uo"));
          }
        }
      }
      auto pure_inner = [&](const std::string& n) { return split_pure.count(n) ? Var(n + "_ui") : Var(n); };
      for (const auto& n : full) {
        if (main.is_pure(n)) order_inner.push_back(pure_inner(n));
        else order_inner.push_back(rv.at(n));
      }
      std::vector<VarOrRVar> reorder_list;
      for (auto it = order_inner.rbegin(); it != order_inner.rend(); ++it) reorder_list.push_back(*it);
      for (auto it = tile_outer.rbegin(); it != tile_outer.rend(); ++it) reorder_list.push_back(*it);
      for (auto it = outer_r.rbegin(); it != outer_r.rend(); ++it) reorder_list.push_back(*it);
      if (reorder_list.size() > 1) u.reorder(reorder_list);
      if (!vec.empty()) u.vectorize(pure_inner(vec), width);
      for (const auto& [n, f] : s.unroll) {
        if (main.is_pure(n)) u.unroll(pure_inner(n), f);
        else u.unroll(rv.at(n), f);
      }
    } else {
      for (const auto& [n, f] : s.unroll) {
        if (!main.is_pure(n)) continue;
        const std::int64_t span = s.block.count(n) ? s.block.at(n) : main.extent(n);
        const bool tiled = s.tile.count(n) && s.tile.at(n) < span;
        out.unroll(tiled ? Var(n + "_i") : s.block.count(n) ? Var(n + "_r") : Var(n), f);
      }
    }
    // Temps of every step.
    for (auto& sf : step_funcs) {
      for (std::size_t si = 0; si + 1 < stmts.size(); ++si) {
        const BoundStmt& b = stmts[si];
        Func f = sf.funcs.at(b.stmt->tensor);
        auto c = s.compute_at.find(b.stmt->tensor);
        std::string where = c != s.compute_at.end() ? c->second : (b.stmt->op == ReduceOp::assign ? "inline" : "root");
        if (where == "inline") continue;
        const std::string inner = b.pure.back().name;
        const bool at_root = !(where == "tile" && &sf == &step_funcs.back());
        if (!at_root) {
          f.compute_at(temps_at);
        } else {
          f.compute_root();
          if (b.pure.size() > 1 && b.pure.front().extent > 1) f.parallel(Var(b.pure.front().name));
        }
        auto rf = s.rfactor.find(b.stmt->tensor);
        if (rf != s.rfactor.end() && f.has_update_definition() && !b.reduce.empty()) {
          // Partial reductions in `lanes` vector lanes over the innermost reduction
          // loop (unit stride in a row-major read such as X[r, c]), combined per
          // element of the temp at the end: a vectorized max/sum along a row.
          const int lanes = rf->second;
          RDom r = rdoms_.at(f.name());
          RVar ro(f.name() + "_ro"), ri(f.name() + "_ri");
          Var u(f.name() + "_u");
          Func part = f.update().split(r[0], ro, ri, lanes).rfactor(ri, u);
          part.compute_at(f, Var(inner));
          part.vectorize(u);
          part.update().vectorize(u);
          // At root a 1-D temp (a row max) had no parallel loop: its rows in parallel.
          if (at_root && b.pure.size() == 1 && b.pure.front().extent > 1) f.update().parallel(Var(inner));
          continue;
        }
        if (b.pure.back().extent >= 8) f.vectorize(Var(inner), 8, TailStrategy::GuardWithIf);
        if (f.has_update_definition() && b.pure.back().extent >= 8) f.update().vectorize(Var(inner), 8, TailStrategy::GuardWithIf);
      }
    }
    // Earlier steps: whole (every timeblock-th from the end) or per tile of their group.
    const int tb = std::max(1, s.timeblock);
    std::map<std::int64_t, LoopLevel> head_level;
    head_level.emplace(steps - 1, at);
    for (std::int64_t st = 0; st + 1 < steps; ++st) {
      if ((steps - 1 - st) % tb != 0) continue;
      Func f = step_funcs[static_cast<std::size_t>(st)].funcs.at(p_.output());
      head_level.emplace(st, tile(f, main, s, nullptr));
      f.compute_root();
    }
    for (std::int64_t st = 0; st + 1 < steps; ++st) {
      const std::int64_t dist = steps - 1 - st;
      if (dist % tb == 0) continue;
      Func f = step_funcs[static_cast<std::size_t>(st)].funcs.at(p_.output());
      f.compute_at(head_level.at(st + dist % tb));
      if (main.pure.back().extent >= 8) f.vectorize(Var(main.pure.back().name), 8, TailStrategy::GuardWithIf);
      // Its zero-padded copy (halo included) at the same level: the next step then reads
      // plain loads, where the boundary tests inline (a select per neighbour, shuffles
      // at each row's ends) ran in every one of its vectors. The copy's own tests
      // cost once per element.
      Func padded = step_funcs[static_cast<std::size_t>(st + 1)].zero_padded_input;
      if (padded.defined()) {
        padded.compute_at(head_level.at(st + dist % tb));
        if (main.pure.back().extent >= 8) padded.vectorize(padded.args()[0], 8, TailStrategy::GuardWithIf);
      }
    }
    // Inputs staged per tile. With steps, the stepped input is read by step 0 only: it is
    // staged per tile of the step whose tile computes step 0 (the last step's, or step 0's
    // own when it is computed whole); other inputs of a multi-step group whose head is not
    // the last step are read by several heads: copied once, at root.
    const std::int64_t head0 = steps > 1 ? (steps - 1) % tb : 0;
    for (const auto& [name, how] : s.layout) {
      if (how != "staged" && how != "packed") continue;
      Func src = sources_.at(name);
      if (head0 != steps - 1) {
        if (p_.spec().steps && name == p_.spec().steps->to) src.compute_at(head_level.at(head0));
        else src.compute_root();
      } else {
        src.compute_at(how == "staged" ? block_at : outer_at);
      }
      if (p_.tensor(name).shape.back() >= 8) src.vectorize(Var("d0"), 8, TailStrategy::GuardWithIf);
    }
  }
};

}  // namespace

Lowered lower(const Problem& p, int algorithm, const Schedule* schedule, int threads, bool for_default) {
  Lowering l(p, algorithm);
  return l.build(schedule, threads, for_default);
}

}  // namespace taihu::autotune::halide
