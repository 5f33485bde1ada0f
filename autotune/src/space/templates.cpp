// Structured starting points of the search (Space::templates, see space.hpp).
//
// A few schedules a performance engineer would try first, derived from the operator
// and snapped to the values the spec's space offers:
//   contraction (the output is reduced over large loops, e.g. gemm, conv2d): a register
//     tile -- the unit-stride output loop vectorized (8..32 lanes), one more output loop
//     unrolled (3..8 rows), the reductions outside both so the accumulator tile stays
//     in registers -- inside cache blocks, the parallel loop over blocks, inputs read
//     directly or staged per block;
//   window (the output is reduced over small loops, e.g. depthwise conv): the unit-stride
//     loop vectorized, the window unrolled inside it, inputs staged (no boundary tests);
//   elementwise / stencil: the unit-stride loop vectorized, the outer loop parallel.
// Each candidate is kept only if valid; duplicates are dropped; at most kMaxTemplates.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "taihu/autotune/space.hpp"

namespace taihu::autotune {
namespace {

constexpr std::size_t kMaxTemplates = 12;

class Builder {
 public:
  Builder(const std::vector<Knob>& knobs, Point base) : knobs_(knobs), pt_(std::move(base)) {}

  int find(const std::string& kind, const std::string& target) const {
    for (std::size_t i = 0; i < knobs_.size(); ++i)
      if (knobs_[i].kind == kind && knobs_[i].target == target) return static_cast<int>(i);
    return -1;
  }
  // The numeric value nearest `want` (log scale) among those accepted by `ok`.
  bool set_near(const std::string& kind, const std::string& target, double want,
                const std::function<bool(std::int64_t)>& ok = {}) {
    const int i = find(kind, target);
    if (i < 0) return false;
    const Knob& k = knobs_[static_cast<std::size_t>(i)];
    int best = -1;
    double dist = 0;
    for (std::size_t j = 0; j < k.ints.size(); ++j) {
      if (ok && !ok(k.ints[j])) continue;
      const double d = std::abs(std::log2(static_cast<double>(k.ints[j])) - std::log2(want));
      if (best < 0 || d < dist) best = static_cast<int>(j), dist = d;
    }
    if (best < 0) return false;
    pt_[static_cast<std::size_t>(i)] = best;
    return true;
  }
  bool set_label(const std::string& kind, const std::string& target, const std::string& label) {
    const int i = find(kind, target);
    if (i < 0) return false;
    const auto& l = knobs_[static_cast<std::size_t>(i)].labels;
    auto it = std::find(l.begin(), l.end(), label);
    if (it == l.end()) return false;
    pt_[static_cast<std::size_t>(i)] = static_cast<int>(it - l.begin());
    return true;
  }
  std::int64_t value(const std::string& kind, const std::string& target) const {
    const int i = find(kind, target);
    return i < 0 ? 0 : knobs_[static_cast<std::size_t>(i)].ints[static_cast<std::size_t>(pt_[static_cast<std::size_t>(i)])];
  }
  // The first order whose listed variables end with `tail` (in that relative order) and
  // put every variable of `before` ahead of the tail.
  bool set_order(const std::vector<std::string>& tail) {
    const int i = find("order", "");
    if (i < 0) return false;
    const auto& labels = knobs_[static_cast<std::size_t>(i)].labels;
    for (std::size_t j = 0; j < labels.size(); ++j) {
      std::vector<std::string> vars;
      std::string w;
      for (char c : labels[j] + " ") {
        if (c == ' ') {
          if (!w.empty()) vars.push_back(w);
          w.clear();
        } else {
          w += c;
        }
      }
      if (vars.size() < tail.size()) continue;
      if (std::equal(tail.begin(), tail.end(), vars.end() - static_cast<std::ptrdiff_t>(tail.size()))) {
        pt_[static_cast<std::size_t>(i)] = static_cast<int>(j);
        return true;
      }
    }
    return false;
  }
  const Point& point() const { return pt_; }

 private:
  const std::vector<Knob>& knobs_;
  Point pt_;
};

}  // namespace

std::vector<Point> Space::templates() const {
  std::vector<Point> out;
  std::set<Point> seen;
  auto keep = [&](const Point& pt) {
    if (out.size() < kMaxTemplates && !seen.count(pt) && valid(pt)) {
      seen.insert(pt);
      out.push_back(pt);
    }
  };
  const int algo_knob = [&] {
    for (std::size_t i = 0; i < knobs_.size(); ++i)
      if (knobs_[i].kind == "algorithm") return static_cast<int>(i);
    return -1;
  }();
  for (int a = 0; a < p_.algorithm_count(); ++a) {
    Point base = default_point();
    if (algo_knob >= 0) base[static_cast<std::size_t>(algo_knob)] = a;
    const BoundStmt& b = p_.stmts(a).back();
    if (b.pure.empty()) continue;
    const LoopVar& vec = b.pure.back();  // unit stride in the output
    std::vector<LoopVar> big_red, window;
    for (const auto& r : b.reduce) (r.extent <= 7 ? window : big_red).push_back(r);
    // The parallel loop: the outermost pure loop offered with work to split.
    std::vector<std::string> par_choices;
    {
      Builder probe(knobs_, base);
      const int pi = probe.find("parallel", "");
      if (pi >= 0)
        for (const auto& l : knobs_[static_cast<std::size_t>(pi)].labels)
          if (b.is_pure(l) && b.extent(l) > 1) par_choices.push_back(l);
    }
    // Staged inputs first when they have a boundary (the copy removes the tests).
    auto stage_choices = [&](bool boundary_only) {
      std::vector<std::string> c;
      for (const auto& k : knobs_)
        if (k.kind == "layout" && (!boundary_only || p_.tensor(k.target).decl->boundary != Boundary::none)) c.push_back(k.target);
      return c;
    };

    if (!big_red.empty() && b.pure.size() >= 2) {
      // Register tile: rows x vector lanes, <= 12 vector accumulators.
      std::string row;
      for (auto it = b.pure.rbegin() + 1; it != b.pure.rend(); ++it) {
        Builder probe(knobs_, base);
        if (probe.find("unroll", it->name) >= 0 && probe.find("tile", it->name) >= 0 && it->extent > 1) {
          row = it->name;
          break;
        }
      }
      const std::pair<int, int> shapes[] = {{16, 6}, {24, 4}, {16, 4}, {32, 3}, {8, 8}, {16, 3}, {8, 4}};
      for (int pass = 0; pass < 2; ++pass) {
        for (const auto& [lanes, rows] : shapes) {
          for (const std::string& par : par_choices.empty() ? std::vector<std::string>{""} : par_choices) {
            Builder t(knobs_, base);
            if (!t.set_near("vectorize", vec.name, lanes, [&](std::int64_t w) { return w == lanes; })) continue;
            t.set_near("tile", vec.name, lanes, [&](std::int64_t v) { return v % lanes == 0; });
            if (!row.empty()) {
              if (!t.set_near("unroll", row, rows, [&](std::int64_t u) { return u == rows; })) continue;
              t.set_near("tile", row, rows, [&](std::int64_t v) { return v == rows; });
            }
            for (const auto& r : big_red) t.set_near("tile", r.name, static_cast<double>(r.extent));  // no split
            std::vector<std::string> tail;
            if (!row.empty()) tail.push_back(row);
            tail.push_back(vec.name);
            if (!t.set_order(tail)) continue;
            if (!par.empty()) t.set_label("parallel", "", par);
            // Cache blocks: ~64 rows (a multiple of the tile), the whole width (pass 0)
            // or ~256 lanes (pass 1).
            if (!row.empty()) {
              const std::int64_t rt = t.value("tile", row);
              t.set_near("block", row, 64, [&](std::int64_t v) { return rt > 0 && v % rt == 0; });
            }
            const std::int64_t vt = t.value("tile", vec.name);
            t.set_near("block", vec.name, pass == 0 ? static_cast<double>(vec.extent) : 256,
                       [&](std::int64_t v) { return vt > 0 && v % vt == 0; });
            for (const auto& in : stage_choices(true)) t.set_label("layout", in, "staged");
            keep(t.point());
            Builder staged = t;
            for (const auto& in : stage_choices(false)) staged.set_label("layout", in, "staged");
            keep(staged.point());
          }
        }
      }
    } else {
      // Window or elementwise: vectorized unit-stride loop, window unrolled inside it.
      for (int lanes : {8, 16}) {
        for (const std::string& par : par_choices.empty() ? std::vector<std::string>{""} : par_choices) {
          Builder t(knobs_, base);
          if (!t.set_near("vectorize", vec.name, lanes, [&](std::int64_t w) { return w == lanes; })) continue;
          t.set_near("tile", vec.name, static_cast<double>(vec.extent), [&](std::int64_t v) { return v % lanes == 0 || v >= vec.extent; });
          for (const auto& w : window) t.set_near("unroll", w.name, static_cast<double>(w.extent));
          if (!par.empty()) t.set_label("parallel", "", par);
          for (const auto& in : stage_choices(true)) t.set_label("layout", in, "staged");
          keep(t.point());
        }
      }
    }
  }
  return out;
}

}  // namespace taihu::autotune
