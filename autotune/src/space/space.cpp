// The schedule space (see space.hpp).
#include "taihu/autotune/space.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"

namespace taihu::autotune {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {
[[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw Error(loc.str() + ": " + msg); }

const BoundStmt& main_stmt(const Problem& p, int algorithm) { return p.stmts(algorithm).back(); }

bool is_loop_var_anywhere(const Problem& p, const std::string& v) {
  for (int a = 0; a < p.algorithm_count(); ++a)
    if (main_stmt(p, a).extent(v) > 0) return true;
  return false;
}
}  // namespace

int vector_lanes() {
  switch (arch::active_isa()) {
    case arch::Isa::avx512: return 16;
    case arch::Isa::avx2: return 8;
    default: return 4;
  }
}

int vector_registers() { return arch::active_isa() == arch::Isa::avx512 ? 32 : 16; }
int ocvec_registers_needed(int k_vectors, int x_tile) { return k_vectors * x_tile + k_vectors + 1; }
int winograd_gemm_lanes(int k_tile) { return vector_lanes() > 8 && k_tile % vector_lanes() == 0 ? vector_lanes() : 8; }
int winograd_registers_needed(int k_tile, int t_tile) {
  const int vectors = std::max(1, k_tile / winograd_gemm_lanes(k_tile));
  return vectors * t_tile + vectors + 1;
}
int ocvec_row_lanes(std::int64_t ow) {
  int lanes = vector_lanes();
  while (lanes > 4 && ow % lanes != 0) lanes /= 2;
  return lanes;
}

Space::Space(const Problem& p) : p_(p) {
  const Spec& s = p.spec();
  if (p.algorithm_count() > 1) {
    Knob k;
    k.kind = "algorithm";
    for (const auto& a : s.algorithms) k.labels.push_back(a.name);
    k.ints.assign(k.labels.size(), 0);
    knobs_.push_back(k);
  }
  std::set<std::string> seen;
  for (const auto& d : s.knobs) {
    Knob k;
    k.kind = d.kind;
    k.target = d.target;
    if (!seen.insert(k.name()).second) fail(d.loc, "space entry '" + k.name() + "' appears twice");
    const bool numeric = d.kind == "tile" || d.kind == "block" || d.kind == "vectorize" || d.kind == "unroll" || d.kind == "timeblock" ||
                         d.kind == "winograd" || d.kind == "ocvec" || d.kind == "rfactor";
    k.numeric = numeric;
    if (d.kind == "tile" || d.kind == "block" || d.kind == "vectorize" || d.kind == "unroll") {
      if (!is_loop_var_anywhere(p, d.target))
        fail(d.loc, "'" + d.target + "' is not a loop variable of the statement writing the output");
    } else if (d.kind == "layout") {
      const auto* t = s.find_tensor(d.target);
      if (!t || t->role != TensorRole::input) fail(d.loc, "layout: '" + d.target + "' is not an input tensor");
    } else if (d.kind == "compute_at") {
      const auto* t = s.find_tensor(d.target);
      if (!t || t->role != TensorRole::temp) fail(d.loc, "compute_at: '" + d.target + "' is not a temp tensor");
    } else if (d.kind == "rfactor") {
      // A temp written by a reduction: its innermost reduction loop is split into
      // vector lanes of partial results (Halide rfactor), combined at the end.
      const auto* t = s.find_tensor(d.target);
      if (!t || t->role != TensorRole::temp) fail(d.loc, "rfactor: '" + d.target + "' is not a temp tensor");
      bool reduced = false;
      for (int a = 0; a < p.algorithm_count(); ++a)
        for (const auto& st : p.stmts(a))
          if (st.stmt->tensor == d.target && st.stmt->op != ReduceOp::assign && !st.reduce.empty()) reduced = true;
      if (!reduced) fail(d.loc, "rfactor: '" + d.target + "' is not written by a reduction (+=, max=, min=)");
    } else if (d.kind == "timeblock") {
      if (!s.steps) fail(d.loc, "timeblock needs a 'steps' declaration");
    } else if (d.kind == "winograd") {
      if (d.target != "m" && d.target != "k" && d.target != "t" && d.target != "c" && d.target != "r" && d.target != "kb")
        fail(d.loc,
             "winograd knobs are m (output tile), k and t (GEMM register tile), c (channel block), r (tile rows per parallel task) and "
             "kb (output channels per parallel task), not '" +
                 d.target + "'");
      bool any = false;
      for (int a = 0; a < p.algorithm_count(); ++a) any = any || p.is_winograd(a);
      if (!any) fail(d.loc, "winograd knobs need a 'compute NAME = winograd(BASE)' algorithm");
    } else if (d.kind == "ocvec") {
      if (d.target != "x" && d.target != "k" && d.target != "c" && d.target != "o" && d.target != "l" && d.target != "s")
        fail(d.loc,
             "ocvec knobs are x (output pixels per register tile), k (output-channel vectors per tile), c (input-channel block, "
             "0: all), o (1: rows outside channel tiles), l (1: pixels of the flattened plane in the lanes, unpadded only; 2: output-row "
             "strips in the lanes) and s (l 1: strips per chunk, 0: all), not '" +
                 d.target + "'");
      bool any = false;
      for (int a = 0; a < p.algorithm_count(); ++a) any = any || p.is_ocvec(a);
      if (!any) fail(d.loc, "ocvec knobs need a 'compute NAME = ocvec(BASE)' algorithm");
    }
    for (const auto& v : d.values) {
      std::int64_t n = 0;
      if (numeric) {
        if (p.dims().count(v)) {
          n = p.dim(v);
        } else {
          try {
            std::size_t used = 0;
            n = std::stoll(v, &used);
            if (used != v.size()) throw std::invalid_argument("");
          } catch (const std::exception&) {
            fail(d.loc, k.name() + ": '" + v + "' is neither an integer nor a dim");
          }
        }
        // winograd r 0: per stage; winograd kb 0: per-stage GEMMs (no output-channel tasks)
        // ocvec c 0: the whole reduction; ocvec o 0: channel tiles outside rows
        const bool zero_ok = ((d.kind == "winograd" && (d.target == "r" || d.target == "kb")) ||
                              (d.kind == "ocvec" && (d.target == "c" || d.target == "o" || d.target == "l" || d.target == "s"))) &&
                             n == 0;
        if (n < 1 && !zero_ok) fail(d.loc, k.name() + ": values must be >= 1");
        if (d.kind == "winograd" && d.target == "m" && n != 2 && n != 4)
          fail(d.loc, "winograd m: F(m x m, 3 x 3) is generated for m = 2 and m = 4, not " + std::to_string(n));
        if (d.kind == "ocvec" && ((d.target == "k" && n > 4) || (d.target == "o" && n > 1) || (d.target == "l" && n > 2)))
          fail(d.loc, k.name() + ": " + std::to_string(n) + " is out of range (k: 1-4 vectors, o: 0 or 1, l: 0-2)");
        if (d.kind == "winograd" && d.target == "k" && n % 8 != 0)
          fail(d.loc, "winograd k: the output-channel tile is vectorized by 8; " + std::to_string(n) + " is not a multiple of 8");
        // A dim whose bound value is also listed would be the same choice twice.
        if (std::find(k.ints.begin(), k.ints.end(), n) != k.ints.end()) continue;
        k.labels.push_back(std::to_string(n));
      } else if (d.kind == "parallel") {
        if (v != "none" && !is_loop_var_anywhere(p, v)) fail(d.loc, "parallel: '" + v + "' is not a loop variable (or 'none')");
        k.labels.push_back(v);
      } else if (d.kind == "order") {
        const BoundStmt& b = main_stmt(p, 0);
        std::istringstream in(v);
        std::vector<std::string> vars;
        for (std::string w; in >> w;) vars.push_back(w);
        std::set<std::string> want, got(vars.begin(), vars.end());
        for (const auto& x : b.pure) want.insert(x.name);
        for (const auto& x : b.reduce) want.insert(x.name);
        if (want != got || vars.size() != got.size())
          fail(d.loc, "order '" + v + "' must name each loop variable of the output statement exactly once");
        k.labels.push_back(v);
      } else if (d.kind == "layout") {
        if (v != "direct" && v != "staged" && v != "packed") fail(d.loc, "layout values are direct, staged and packed, not '" + v + "'");
        k.labels.push_back(v);
      } else if (d.kind == "compute_at") {
        if (v != "root" && v != "inline" && v != "tile") fail(d.loc, "compute_at values are root, inline and tile, not '" + v + "'");
        k.labels.push_back(v);
      }
      k.ints.push_back(n);
    }
    knobs_.push_back(k);
  }
  // 1-4 whole vectors of the dispatch ISA for each vectorized loop (its vectorize knob
  // and its tile knob), where the loop has that many elements: a spec written with
  // AVX2's 8 lanes in mind still offers AVX-512's 16, 32, 48 and 64.
  const int lanes = vector_lanes();
  for (const auto& vk : std::vector<Knob>(knobs_)) {
    if (vk.kind != "vectorize") continue;
    std::int64_t extent = 0;
    for (int a = 0; a < p.algorithm_count(); ++a) extent = std::max(extent, main_stmt(p, a).extent(vk.target));
    for (auto& k : knobs_) {
      if ((k.kind != "vectorize" && k.kind != "tile") || k.target != vk.target) continue;
      for (std::int64_t n = lanes; n <= 4 * lanes && n <= extent; n += lanes)
        if (std::find(k.ints.begin(), k.ints.end(), n) == k.ints.end()) {
          k.ints.push_back(n);
          k.labels.push_back(std::to_string(n));
        }
    }
  }
}

double Space::cardinality() const {
  double n = 1;
  for (const auto& k : knobs_) n *= static_cast<double>(k.labels.size());
  return n;
}

Point Space::decode(double index) const {
  Point pt(knobs_.size());
  for (std::size_t i = 0; i < knobs_.size(); ++i) {
    const double r = static_cast<double>(knobs_[i].labels.size());
    pt[i] = static_cast<int>(std::fmod(index, r));
    index = std::floor(index / r);
  }
  return pt;
}

Point Space::random(SplitMix64& rng) const {
  Point pt(knobs_.size());
  for (std::size_t i = 0; i < knobs_.size(); ++i) pt[i] = rng.below(static_cast<int>(knobs_[i].labels.size()));
  return pt;
}

Point Space::default_point() const { return Point(knobs_.size(), 0); }

Schedule Space::schedule(const Point& pt) const {
  if (pt.size() != knobs_.size()) throw Error("schedule point has " + std::to_string(pt.size()) + " values, the space has " + std::to_string(knobs_.size()) + " knobs");
  Schedule s;
  for (std::size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    if (pt[i] < 0 || pt[i] >= static_cast<int>(k.labels.size())) throw Error("schedule point: value index out of range for '" + k.name() + "'");
    const std::string& label = k.labels[static_cast<std::size_t>(pt[i])];
    const std::int64_t n = k.ints[static_cast<std::size_t>(pt[i])];
    if (k.kind == "algorithm") s.algorithm = pt[i];
    else if (k.kind == "tile") s.tile[k.target] = n;
    else if (k.kind == "block") s.block[k.target] = n;
    else if (k.kind == "vectorize" && n > 1) s.vectorize[k.target] = static_cast<int>(n);
    else if (k.kind == "unroll" && n > 1) s.unroll[k.target] = static_cast<int>(n);
    else if (k.kind == "parallel") s.parallel = label == "none" ? "" : label;
    else if (k.kind == "order") {
      std::istringstream in(label);
      for (std::string w; in >> w;) s.order.push_back(w);
    } else if (k.kind == "layout") s.layout[k.target] = label;
    else if (k.kind == "compute_at") s.compute_at[k.target] = label;
    else if (k.kind == "timeblock") s.timeblock = static_cast<int>(n);
    else if (k.kind == "rfactor" && n > 1) s.rfactor[k.target] = static_cast<int>(n);
    else if (k.kind == "winograd") {
      if (k.target == "m") s.winograd.m = static_cast<int>(n);
      else if (k.target == "k") s.winograd.k_tile = static_cast<int>(n);
      else if (k.target == "t") s.winograd.t_tile = static_cast<int>(n);
      else if (k.target == "r") s.winograd.rows = static_cast<int>(n);
      else if (k.target == "kb") s.winograd.k_block = static_cast<int>(n);
      else s.winograd.c_block = n;
    } else if (k.kind == "ocvec") {
      if (k.target == "x") s.ocvec.x_tile = static_cast<int>(n);
      else if (k.target == "k") s.ocvec.k_vectors = static_cast<int>(n);
      else if (k.target == "c") s.ocvec.c_block = n;
      else if (k.target == "l") s.ocvec.pixel_lanes = static_cast<int>(n);
      else if (k.target == "s") s.ocvec.chunk = static_cast<int>(n);
      else s.ocvec.rows_outer = static_cast<int>(n);
    }
  }
  if (p_.is_ocvec(s.algorithm)) {
    // Only the ocvec knobs apply (as for winograd); values beyond the shape are clamped
    // so that equal code has an equal Schedule (one measurement).
    Schedule o;
    o.algorithm = s.algorithm;
    o.ocvec = s.ocvec;
    if (o.ocvec.x_tile <= 0) o.ocvec.x_tile = 8;
    if (p_.conv_unsupported(s.algorithm).empty()) {
      const ConvPattern& cv = p_.conv_pattern(s.algorithm);
      if (o.ocvec.pixel_lanes == 2) {
        // Output-row strips: x_tile output channels x k_vectors vectors of a row.
        o.ocvec.x_tile = static_cast<int>(std::min<std::int64_t>(o.ocvec.x_tile, cv.k));
        const int lanes = ocvec_row_lanes(cv.ow);
        const std::int64_t row_vecs = (cv.ow + lanes - 1) / lanes;
        o.ocvec.k_vectors = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.ocvec.k_vectors, row_vecs)));
        o.ocvec.c_block = 0;
        o.ocvec.chunk = 0;
      } else if (o.ocvec.pixel_lanes != 0) {
        // Pixels in the lanes: x_tile output channels x k_vectors vectors of the plane.
        o.ocvec.x_tile = static_cast<int>(std::min<std::int64_t>(o.ocvec.x_tile, cv.k));
        const std::int64_t p_vecs = std::max<std::int64_t>(1, ((cv.oh - 1) * cv.w + cv.ow) / vector_lanes());
        o.ocvec.k_vectors = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.ocvec.k_vectors, p_vecs)));
        if (o.ocvec.c_block >= cv.c) o.ocvec.c_block = 0;
        if (o.ocvec.c_block > 0) o.ocvec.rows_outer = 1;  // (k-blocking runs per strip)
        const std::int64_t strips = ((cv.oh - 1) * cv.w + cv.ow + o.ocvec.k_vectors * vector_lanes() - 1) / (o.ocvec.k_vectors * vector_lanes());
        if (o.ocvec.rows_outer != 0 || o.ocvec.chunk >= strips) o.ocvec.chunk = 0;
      } else {
        o.ocvec.chunk = 0;
        o.ocvec.x_tile = static_cast<int>(std::min<std::int64_t>(o.ocvec.x_tile, cv.ow));
        const std::int64_t k_vecs = (cv.k + vector_lanes() - 1) / vector_lanes();
        o.ocvec.k_vectors = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.ocvec.k_vectors, k_vecs)));
        if (o.ocvec.c_block >= cv.c) o.ocvec.c_block = 0;
      }
    }
    return o;
  }
  s.ocvec = OcvecSchedule{};
  if (p_.is_winograd(s.algorithm)) {
    // Only the winograd knobs apply: the loop knobs name the direct loops, which a
    // Winograd pipeline does not have (equal Schedules: one measurement).
    Schedule w;
    w.algorithm = s.algorithm;
    w.winograd = s.winograd;
    const bool five = p_.winograd_unsupported(s.algorithm).empty() && p_.winograd_conv(s.algorithm).r == 5;
    if (w.winograd.m == 0) w.winograd.m = five ? 2 : 4;
    const std::int64_t channels = p_.winograd_unsupported(s.algorithm).empty() ? p_.winograd_conv(s.algorithm).c : 0;
    if (w.winograd.c_block >= channels) w.winograd.c_block = 0;
    if (channels > 0) {
      // More rows per task than the image has tile rows: the same schedule.
      const ConvPattern& cv = p_.winograd_conv(s.algorithm);
      const int tile_rows = static_cast<int>((cv.oh + w.winograd.m - 1) / w.winograd.m);
      w.winograd.rows = std::max(0, std::min(w.winograd.rows, tile_rows));
      // Output channels per task: whole k tiles, at most the (padded) output channels.
      const int k_tile = std::max(8, w.winograd.k_tile);
      const int k_padded = static_cast<int>((cv.k + k_tile - 1) / k_tile * k_tile);
      if (w.winograd.k_block <= 0) w.winograd.k_block = 0;
      else w.winograd.k_block = std::min(k_padded, (w.winograd.k_block + k_tile - 1) / k_tile * k_tile);
      // With row blocks, a block of all the channels is the same schedule as none.
      if (w.winograd.rows > 0 && w.winograd.k_block >= k_padded) w.winograd.k_block = 0;
    }
    return w;
  }
  s.winograd = WinogradSchedule{};
  // Drop knobs that name loops the chosen algorithm's output statement does not have.
  const BoundStmt& b = main_stmt(p_, s.algorithm);
  std::erase_if(s.tile, [&](const auto& kv) { return b.extent(kv.first) == 0; });
  std::erase_if(s.unroll, [&](const auto& kv) { return b.extent(kv.first) == 0; });
  // A block only exists on a pure loop and when smaller than the loop.
  std::erase_if(s.block, [&](const auto& kv) { return !b.is_pure(kv.first) || kv.second >= b.extent(kv.first); });
  for (auto& [v, t] : s.tile) t = std::min(t, s.block.count(v) ? s.block.at(v) : b.extent(v));
  if (!s.parallel.empty() && !b.is_pure(s.parallel)) s.parallel.clear();
  return s;
}

std::string Space::why_invalid(const Point& pt) const {
  Schedule s;
  try {
    s = schedule(pt);
  } catch (const Error& e) {
    return e.what();
  }
  if (p_.is_winograd(s.algorithm)) {
    const std::string why = p_.winograd_unsupported(s.algorithm);
    // A 5x5 window has F(2x2,5x5) only (alpha 6; F(4x4,5x5) would need alpha 8).
    if (why.empty() && p_.winograd_conv(s.algorithm).r == 5 && s.winograd.m != 2)
      return "winograd m=" + std::to_string(s.winograd.m) + ": a 5x5 window is generated as F(2x2,5x5) only (winograd m 2)";
    if (!why.empty()) return why;
    // The GEMM's accumulators, its U vectors and a broadcast must fit the registers.
    const int need = winograd_registers_needed(s.winograd.k_tile, s.winograd.t_tile);
    if (arch::active_isa() != arch::Isa::generic && need > vector_registers())
      return "winograd k=" + std::to_string(s.winograd.k_tile) + " t=" + std::to_string(s.winograd.t_tile) + ": " + std::to_string(need) +
             " registers (" + std::to_string(winograd_gemm_lanes(s.winograd.k_tile)) + "-lane accumulators, U vectors, 1 broadcast) exceed the " +
             std::to_string(vector_registers()) + " vector registers (the tile would spill)";
    return "";
  }
  if (p_.is_ocvec(s.algorithm)) {
    const std::string why = p_.conv_unsupported(s.algorithm);
    if (!why.empty()) return why;
    if (s.ocvec.pixel_lanes == 1) {
      const ConvPattern& cv = p_.conv_pattern(s.algorithm);
      if (cv.off_x != 0 || cv.off_y != 0 || cv.oh != cv.h - cv.r + 1 || cv.ow != cv.w - cv.s + 1)
        return "ocvec l=1 (pixels of the flattened plane in the lanes) needs an unpadded window; this shape's " + std::to_string(cv.r) + "x" +
               std::to_string(cv.s) + " window is padded";
    }
    // The accumulators, the tile's weight vectors and a broadcast must fit the registers
    // (l=1: k_vectors pixel vectors x x_tile channels, one broadcast weight: the same count).
    const int need = ocvec_registers_needed(s.ocvec.k_vectors, s.ocvec.x_tile);
    if (need > vector_registers())
      return "ocvec k=" + std::to_string(s.ocvec.k_vectors) + " x=" + std::to_string(s.ocvec.x_tile) + ": " +
             std::to_string(s.ocvec.k_vectors * s.ocvec.x_tile) + " accumulators + " + std::to_string(s.ocvec.k_vectors) +
             " weight vectors + 1 broadcast = " + std::to_string(need) + " registers exceed the " + std::to_string(vector_registers()) +
             " vector registers (the tile would spill)";
    return "";
  }
  const BoundStmt& b = main_stmt(p_, s.algorithm);
  for (const auto& [v, w] : s.vectorize) {
    if (!b.is_pure(v)) return "vectorize " + v + ": not a pure loop of the output statement";
    auto t = s.tile.find(v);
    const std::int64_t span = t != s.tile.end() ? t->second : b.extent(v);
    if (w > span) return "vectorize " + v + "=" + std::to_string(w) + " is wider than its loop (" + std::to_string(span) + ")";
    if (t != s.tile.end() && t->second < b.extent(v) && t->second % w != 0) return "tile " + v + "=" + std::to_string(t->second) + " is not a multiple of the vector width " + std::to_string(w);
  }
  if (s.vectorize.size() > 1) return "at most one loop may be vectorized";
  for (const auto& [v, bl] : s.block) {
    auto t = s.tile.find(v);
    if (t != s.tile.end() && bl % t->second != 0)
      return "block " + v + "=" + std::to_string(bl) + " is not a multiple of its tile " + std::to_string(t->second);
  }
  for (const auto& [v, w] : s.vectorize)
    if (v == s.parallel && !(s.tile.count(v) && s.tile.at(v) < b.extent(v)))
      return "vectorize " + v + ": the loop runs in parallel untiled (tile it to do both)";
  for (const auto& [v, u] : s.unroll) {
    auto t = s.tile.find(v);
    const std::int64_t span = t != s.tile.end() ? t->second : b.extent(v);
    if (u > span) return "unroll " + v + "=" + std::to_string(u) + " exceeds its loop (" + std::to_string(span) + ")";
    // A partial last step would be rounded up: reads past an input's end.
    if (span % u != 0) return "unroll " + v + "=" + std::to_string(u) + " does not divide its loop (" + std::to_string(span) + ")";
    if (s.vectorize.count(v)) return "unroll " + v + ": the loop is already vectorized";
  }
  for (const auto& [t, lanes] : s.rfactor) {
    for (const auto& st : p_.stmts(s.algorithm)) {
      if (st.stmt->tensor != t || st.reduce.empty()) continue;
      const std::int64_t ext = st.reduce.back().extent;  // the innermost reduction loop
      if (ext % lanes != 0)
        return "rfactor " + t + "=" + std::to_string(lanes) + " does not divide its innermost reduction loop " + st.reduce.back().name + " (" +
               std::to_string(ext) + ")";
    }
  }
  for (const auto& [t, where] : s.compute_at) {
    bool reduced = false, used = false;
    for (const auto& st : p_.stmts(s.algorithm)) {
      if (st.stmt->tensor == t) {
        used = true;
        reduced = st.stmt->op != ReduceOp::assign;
      }
    }
    if (used && reduced && where == "inline") return "compute_at " + t + "=inline: a reduction cannot be inlined";
    if (used && where == "tile") {
      // Every consumer must itself run inside the output's tiles (the output, or a
      // temp that is inline or at tile).
      std::function<bool(const Expr&)> reads = [&](const Expr& e) {
        if (e.kind == Expr::Kind::access && e.name == t) return true;
        for (const auto& a : e.args)
          if (reads(*a)) return true;
        return false;
      };
      // Follow inline consumers: they run wherever their own consumers run.
      std::function<std::string(const std::string&)> blocker = [&](const std::string& tensor) -> std::string {
        for (const auto& st : p_.stmts(s.algorithm)) {
          std::function<bool(const Expr&)> reads_t = [&](const Expr& e) {
            if (e.kind == Expr::Kind::access && e.name == tensor) return true;
            for (const auto& a : e.args)
              if (reads_t(*a)) return true;
            return false;
          };
          if (!reads_t(*st.stmt->rhs) || st.stmt->tensor == p_.output()) continue;
          auto c = s.compute_at.find(st.stmt->tensor);
          const std::string cw = c != s.compute_at.end() ? c->second : (st.stmt->op == ReduceOp::assign ? "inline" : "root");
          if (cw == "root") return st.stmt->tensor;
          if (cw == "inline") {
            std::string deeper = blocker(st.stmt->tensor);
            if (!deeper.empty()) return deeper;
          }
        }
        return "";
      };
      (void)reads;
      const std::string bad = blocker(t);
      if (!bad.empty()) return "compute_at " + t + "=tile: its consumer " + bad + " is computed at root";
    }
  }
  // A copied input lives inside the output's loops: every reader must run there too.
  for (const auto& [in, how] : s.layout) {
    if (how == "direct") continue;
    for (const auto& st : p_.stmts(s.algorithm)) {
      if (st.stmt->tensor == p_.output()) continue;
      std::function<bool(const Expr&)> reads = [&](const Expr& e) {
        if (e.kind == Expr::Kind::access && e.name == in) return true;
        for (const auto& a : e.args)
          if (reads(*a)) return true;
        return false;
      };
      if (!reads(*st.stmt->rhs)) continue;
      auto c = s.compute_at.find(st.stmt->tensor);
      const std::string where = c != s.compute_at.end() ? c->second : (st.stmt->op == ReduceOp::assign ? "inline" : "root");
      if (where == "root") return "layout " + in + "=" + how + ": its reader " + st.stmt->tensor + " is computed at root";
    }
  }
  if (s.timeblock > p_.steps()) return "timeblock " + std::to_string(s.timeblock) + " exceeds the " + std::to_string(p_.steps()) + " steps";
  return "";
}

std::string Space::describe(const Point& pt) const {
  std::string out;
  for (std::size_t i = 0; i < knobs_.size() && i < pt.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += knobs_[i].name() + "=" + knobs_[i].labels[static_cast<std::size_t>(pt[i])];
  }
  return out;
}

std::map<std::string, std::string> Space::to_map(const Point& pt) const {
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i < knobs_.size(); ++i) m[knobs_[i].name()] = knobs_[i].labels[static_cast<std::size_t>(pt[i])];
  return m;
}

Point Space::from_map(const std::map<std::string, std::string>& m) const {
  Point pt(knobs_.size(), 0);
  for (std::size_t i = 0; i < knobs_.size(); ++i) {
    auto it = m.find(knobs_[i].name());
    if (it == m.end()) throw Error("schedule lacks a value for '" + knobs_[i].name() + "'");
    auto pos = std::find(knobs_[i].labels.begin(), knobs_[i].labels.end(), it->second);
    if (pos == knobs_[i].labels.end()) throw Error("schedule value '" + it->second + "' is not in the space of '" + knobs_[i].name() + "'");
    pt[i] = static_cast<int>(pos - knobs_[i].labels.begin());
  }
  if (m.size() != knobs_.size()) throw Error("schedule has entries that are not knobs of this space");
  return pt;
}

Point Space::nearest_point(const std::map<std::string, std::string>& m) const {
  Point pt(knobs_.size(), 0);
  for (std::size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    auto it = m.find(k.name());
    if (it == m.end()) continue;
    auto pos = std::find(k.labels.begin(), k.labels.end(), it->second);
    if (pos != k.labels.end()) {
      pt[i] = static_cast<int>(pos - k.labels.begin());
      continue;
    }
    if (!k.numeric) continue;
    double want = 0;
    try {
      want = std::stod(it->second);
    } catch (const std::exception&) {
      continue;
    }
    if (!(want > 0)) continue;
    double dist = 0;
    for (std::size_t j = 0; j < k.ints.size(); ++j) {
      if (k.ints[j] < 1) continue;
      const double d = std::abs(std::log2(static_cast<double>(k.ints[j])) - std::log2(want));
      if (j == 0 || d < dist) pt[i] = static_cast<int>(j), dist = d;
    }
  }
  return pt;
}

std::size_t Space::feature_count() const {
  std::size_t n = 0;
  for (const auto& k : knobs_) n += k.numeric ? 1 : k.labels.size();
  return n;
}

std::vector<double> Space::features(const Point& pt) const {
  std::vector<double> f;
  f.reserve(feature_count());
  for (std::size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    if (k.numeric) {
      // 0 (winograd r and kb: another structure) maps to -1, below every real size.
      f.push_back(std::log2(std::max(0.5, static_cast<double>(k.ints[static_cast<std::size_t>(pt[i])]))));
    } else {
      for (std::size_t j = 0; j < k.labels.size(); ++j) f.push_back(static_cast<int>(j) == pt[i] ? 1.0 : 0.0);
    }
  }
  return f;
}

}  // namespace taihu::autotune
