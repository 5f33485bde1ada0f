// Structured starting points of the search (Space::templates, see space.hpp).
//
// A few schedules a performance engineer would try first, derived from the operator
// and snapped to the values the spec's space offers:
//   contraction (the output is reduced over large loops, e.g. gemm, conv2d): a register
//     tile -- the unit-stride output loop vectorized in whole vectors of the dispatch
//     ISA, one more output loop unrolled (3..8 rows), 8..12 AVX2 or 16..24 AVX-512
//     accumulators, the reductions outside both so the accumulator tile stays in registers -- inside cache blocks, the parallel loop over blocks, inputs read
//     directly or staged per block;
//   window (the output is reduced over small loops, e.g. depthwise conv): the unit-stride
//     loop vectorized, the window unrolled inside it, inputs staged (no boundary tests);
//     first with 4 rows unrolled (an input row loaded once serves several output rows)
//     over blocks of one whole plane;
//   stencil (time steps): slabs of 1/2 and 1/4 of the planes, then 3-D tiles (~8
//     planes x 32 rows x the whole unit-stride loop, 16 lanes), then Mullapudi2016's
//     16-plane slabs in 8 lanes, parallel over planes, steps fused per tile first;
//   elementwise: the unit-stride loop vectorized (1 or 2 vectors), the outer loop parallel;
//     with temps (softmax), first with every temp computed per tile of rows and its
//     reduction split into 16 vector lanes (rfactor);
//   winograd (first: it does the fewest flops; a 5x5 window: F(2x2,5x5) in the same
//     structures): F(4x4) and F(2x2) with GEMM register
//     tiles of 12 AVX2 accumulators (16 x 6, 32 x 3, 24 x 4, 8 x 12 ~ 8 x 8), per stage,
//     on AVX-512 preceded by dnn's 32 x 14 (two zmm x 14 tiles, 28 accumulators),
//     and F(4x4) 16 x 6 as dnn runs it: blocks of half the tile rows (one per thread on
//     two cores) or of the whole image, each block transformed, multiplied and
//     transformed back by one task.
//   ocvec (output channels in vector lanes, packed weights): 1, 2 and 4 vectors of
//     channels x the widest row of pixels that fits the registers (ocvec_registers_needed:
//     2 x 14, 1 x 28, 4 x 6 on AVX-512; after 2 x the widest, 2 x the widest that divides
//     the output row: 2 x 8 on a 32-wide row), the whole channel reduction per tile, channel
//     tiles outside rows; then 2 x the widest with rows outside and with blocks of 64
//     input channels. On an unpadded window dnn's pointwise tiles come first
//     (ocvec l 1, pixels in the lanes: 8 channels x 2 vectors as dnn, the same in
//     chunks of 8 strips, 14 x 2, 6 x 4, 7 x 3, channel tiles outside the strips, then
//     8 x 2 with strips outside; on a first layer, C <= 4, ocvec l 2: a whole output
//     row of vectors x the widest channel tile that fits, then x the widest dividing K). On a 1x1 window they are
//     leading_templates(), measured before transfer seeds.
// Each candidate is kept only if valid; duplicates are dropped; at most kMaxTemplates
// (the ocvec ones first for a 1x1 window, after Winograd's for 3x3), then the loop
// templates up to kMaxTemplates in all.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <set>

#include "taihu/arch/threads.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune {
namespace {

constexpr std::size_t kMaxTemplates = 12;  // plus the ocvec ones (at most 12)

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
  std::size_t limit = kMaxTemplates;
  auto keep = [&](Point pt) {
    if (!valid(pt)) {  // e.g. a staged input whose other reader runs at root: read it in place
      for (std::size_t i = 0; i < knobs_.size(); ++i)
        if (knobs_[i].kind == "layout") pt[i] = 0;
    }
    if (out.size() < limit && !seen.count(pt) && valid(pt)) {
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
    if (!p_.is_winograd(a) || !p_.winograd_unsupported(a).empty()) continue;
    struct Tile {
      std::int64_t m, k, t;
      int blocks;       // 0: per stage; else tile rows split into this many parallel blocks
      bool per_thread;  // output channels split into one block per thread (winograd kb)
    };
    // First the structures that split the work evenly over the threads with no
    // intermediate crossing cores: the whole image per task, its output channels split
    // per thread (each task repeats the input transform; a 16 x 4 and a 16 x 6 GEMM
    // tile: 0.174-0.177 vs 0.195-0.201 ms at 64->64, 28x28 on 2 threads); dnn's structure
    // (conv_winograd.cpp: each thread takes a block of ~half the tiles and runs the input
    // transform, the GEMMs with a 16 x 6 register tile and the output transform on it):
    // blocks of half the tile rows; the input transform at root, then one task per
    // thread's output channels. Then per stage, other tiles, the whole image in one block.
    // (The tuner's confirmation re-measures the first three templates whatever their
    // search times were.)
    // On AVX-512 first dnn's own tile, two zmm of output channels x the widest row of
    // image tiles that fits (32 x 14: 28 accumulators), in the same structures and in
    // F(2x2); on AVX2 that tile is the 16 x 6 of the list.
    const int threads = taihu::arch::num_threads();
    const std::int64_t wide_k = 2 * std::max(8, vector_lanes());
    const std::int64_t wide_t = (vector_registers() - 3) / 2;
    std::vector<Tile> tiles;
    if (vector_lanes() > 8)
      tiles = {Tile{4, wide_k, wide_t, 1, true}, Tile{4, wide_k, wide_t, 2, false}, Tile{4, wide_k, wide_t, 0, true},
               Tile{4, wide_k, wide_t, 0, false}, Tile{2, wide_k, wide_t, 0, false}, Tile{4, wide_k, wide_t, 1, false}};
    for (const Tile& w : {Tile{4, 16, 4, 1, true}, Tile{4, 16, 6, 1, true}, Tile{4, 16, 6, 2, false}, Tile{4, 16, 6, 0, true}, Tile{4, 16, 6, 0, false},
                          Tile{4, 32, 3, 0, false}, Tile{4, 24, 4, 0, false}, Tile{2, 16, 6, 0, false}, Tile{4, 8, 8, 0, false},
                          Tile{4, 16, 6, 1, false}})
      tiles.push_back(w);
    for (const Tile& w : tiles) {
      Point base = default_point();
      if (algo_knob >= 0) base[static_cast<std::size_t>(algo_knob)] = a;
      Builder t(knobs_, base);
      // A 5x5 window: the same structures as F(2x2,5x5) (alpha 6, as F(4x4,3x3)).
      const std::int64_t m = p_.winograd_conv(a).r == 5 ? 2 : w.m;
      if (!t.set_near("winograd", "m", static_cast<double>(m), [&](std::int64_t v) { return v == m; }) &&
          t.find("winograd", "m") >= 0)
        continue;
      t.set_near("winograd", "k", static_cast<double>(w.k));
      t.set_near("winograd", "t", static_cast<double>(w.t));
      t.set_near("winograd", "c", 1e9);  // the whole channel reduction per register tile
      const ConvPattern& cv = p_.winograd_conv(a);
      if (w.blocks == 0) {
        t.set_near("winograd", "r", 0);  // per stage: each GEMM's weights stay in L1
      } else {
        const std::int64_t tile_rows = (cv.oh + m - 1) / m;
        const std::int64_t rows = (tile_rows + w.blocks - 1) / w.blocks;
        if (!t.set_near("winograd", "r", static_cast<double>(rows), [&](std::int64_t v) { return v >= 1; })) continue;
      }
      if (w.per_thread) {
        if (threads < 2) continue;
        const double k_block = static_cast<double>((cv.k + threads - 1) / threads);
        if (!t.set_near("winograd", "kb", k_block, [&](std::int64_t v) { return v >= 1 && v < cv.k; })) continue;
      } else {
        t.set_near("winograd", "kb", 0);
      }
      keep(t.point());
    }
  }
  for (int a = 0; a < p_.algorithm_count(); ++a) {
    if (!p_.is_ocvec(a) || !p_.conv_unsupported(a).empty()) continue;
    struct Tile {
      int k;          // vectors of output channels (l 1: of pixels)
      double c_block; // 0: the whole reduction
      int rows_outer;
      int lanes = 0;  // ocvec l
      int x = 0;      // 0: the widest that fits; else (l 1) output channels per tile
      int chunk = 0;  // (l 1, o 0) ocvec s: strips per chunk, one parallel task each
      bool divides = false;  // (l 0) the widest row that fits and divides the output row; (l 2) K
    };
    // An unpadded layer (1x1, LeNet's 5x5) first tries dnn's pointwise tile (pixels in the lanes: 8
    // channels x 2 vectors), then wider ones, channel tiles outside the strips (a tile's
    // weights stay in L1; measured ahead of strips outside on ResNet-50 res2 1x1), then
    // strips outside; Space::why_invalid drops them on other windows.
    // 8 x 2 in chunks of 8 strips second: the chunks are the parallel tasks (res2 1x1 at
    // 2 threads, one process: 0.60 ms against 1.11 for 14 x 2 over channel-tile tasks).
    const Tile tiles[] = {Tile{2, 0, 0, 1, 8},    Tile{2, 0, 0, 1, 8, 8}, Tile{2, 0, 0, 1, 14}, Tile{4, 0, 0, 1, 6},
                          Tile{3, 0, 0, 1, 7},    Tile{2, 0, 1, 1, 8},
                          Tile{2, 0, 0},       Tile{2, 0, 0, 0, 0, 0, true},          Tile{1, 0, 0},
                          Tile{4, 0, 0},       Tile{2, 0, 1},       Tile{2, 64, 0},
                          Tile{0, 0, 0, 2},    Tile{0, 0, 0, 2, 0, 0, true}};
    limit = out.size() + std::size(tiles);
    for (const Tile& w : tiles) {
      Point base = default_point();
      if (algo_knob >= 0) base[static_cast<std::size_t>(algo_knob)] = a;
      Builder t(knobs_, base);
      const ConvPattern& cv = p_.conv_pattern(a);
      // l 2 (output-row strips) on first layers only (C <= 4: LeNet conv1, CIFAR-10 quick
      // conv1, where l 1 computes whole input rows or the window is padded): a whole row
      // of vectors per strip (at most 4), the widest channel tile that fits, then the
      // widest that divides K (LeNet conv1: 3 x 8 lanes x 8 and x 4 channels).
      if (w.lanes == 2 && cv.c > 4) continue;
      const int row_vecs = static_cast<int>(std::min<std::int64_t>(4, (cv.ow + ocvec_row_lanes(cv.ow) - 1) / ocvec_row_lanes(cv.ow)));
      int kv = w.lanes == 2 ? row_vecs : w.k;
      while (w.lanes == 2 && kv > 1 && ocvec_registers_needed(kv, 4) > vector_registers()) --kv;  // (16 registers: 3 x 4)
      if (w.lanes != 0 && !t.set_near("ocvec", "l", w.lanes, [&](std::int64_t v) { return v == w.lanes; })) continue;
      if (w.lanes == 0) t.set_near("ocvec", "l", 1, [](std::int64_t v) { return v == 0; });
      if (!t.set_near("ocvec", "k", kv, [&](std::int64_t v) { return v == kv; }) && t.find("ocvec", "k") >= 0) continue;
      // The widest row of pixels whose tile fits the registers (ocvec_registers_needed).
      // `divides`: the widest that also divides the output row, so no ragged pixel tile
      // (CIFAR-10 quick conv1, 32 wide, 32 channels: 2 x 8 0.049 ms, 2 x 14 -- tiles of
      // 14, 14, 4 -- not found in a 20 s search that ended on `direct` at 0.055, one process).
      const std::int64_t ow = w.lanes == 2 ? cv.k : cv.ow;  // (l 2: x is the channel tile)
      const int pixels = w.x > 0 ? w.x : std::max(1, (vector_registers() - kv - 1) / kv);
      if (!t.set_near("ocvec", "x", pixels, [&](std::int64_t v) {
            return (w.x == 0 || v == w.x) && (!w.divides || (v > 0 && ow % v == 0)) && (w.lanes != 2 || v <= cv.k) &&
                   ocvec_registers_needed(kv, static_cast<int>(v)) <= vector_registers();
          }))
        continue;
      if (w.c_block > 0) {
        if (!t.set_near("ocvec", "c", w.c_block, [&](std::int64_t v) { return v >= 1; })) continue;
      } else {
        t.set_near("ocvec", "c", 1, [](std::int64_t v) { return v == 0; });
      }
      t.set_near("ocvec", "o", 1, [&](std::int64_t v) { return v == w.rows_outer; });
      if (w.chunk > 0) {
        if (!t.set_near("ocvec", "s", w.chunk, [&](std::int64_t v) { return v == w.chunk; })) continue;
      } else {
        t.set_near("ocvec", "s", 1, [](std::int64_t v) { return v == 0; });
      }
      keep(t.point());
    }
    limit = std::max(out.size(), kMaxTemplates);
  }
  for (int a = 0; a < p_.algorithm_count(); ++a) {
    if (p_.is_winograd(a) || p_.is_ocvec(a)) continue;
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
      // Register tile: `rows` of one more output loop x `lanes` of the vectorized one,
      // 8..12 vector accumulators of 16 registers (AVX2), 12..24 of AVX-512's 32 (BLIS's
      // skx kernel holds 32 x 12 floats), the most first, then ~2 vectors wide.
      struct Shape {
        std::string row;
        std::int64_t lanes, rows;
      };
      std::vector<Shape> shapes;
      const std::int64_t L = vector_lanes();
      const std::int64_t max_regs = vector_registers() * 3 / 4, min_regs = max_regs * 2 / 3;  // 16..24 or 8..12
      {
        Builder probe(knobs_, base);
        const int vi = probe.find("vectorize", vec.name);
        for (auto it = b.pure.rbegin() + 1; vi >= 0 && it != b.pure.rend(); ++it) {
          const int ui = probe.find("unroll", it->name);
          if (ui < 0 || probe.find("tile", it->name) < 0 || it->extent < 2) continue;
          for (std::int64_t lanes : knobs_[static_cast<std::size_t>(vi)].ints)
            for (std::int64_t rows : knobs_[static_cast<std::size_t>(ui)].ints) {
              if (lanes % L != 0) continue;  // whole vectors only
              const std::int64_t regs = lanes / L * rows;
              if (regs >= min_regs && regs <= max_regs && rows <= it->extent) shapes.push_back({it->name, lanes, rows});
            }
        }
        if (vi >= 0 && shapes.empty())
          for (std::int64_t lanes : knobs_[static_cast<std::size_t>(vi)].ints) shapes.push_back({"", lanes, 1});
        std::stable_sort(shapes.begin(), shapes.end(), [&](const Shape& x, const Shape& y) {
          const std::int64_t rx = (x.lanes + L - 1) / L * x.rows, ry = (y.lanes + L - 1) / L * y.rows;
          if (rx != ry) return rx > ry;
          return std::abs(x.lanes - 2 * L) < std::abs(y.lanes - 2 * L);
        });
      }
      // Parallel over blocks of the vectorized loop first (each thread packs its own
      // panel of the input indexed by it), then the others.
      std::stable_partition(par_choices.begin(), par_choices.end(), [&](const std::string& v) { return v == vec.name; });
      for (const auto& [row, lanes, rows] : shapes) {
        for (const std::string& par : par_choices.empty() ? std::vector<std::string>{""} : par_choices) {
          for (int variants = 0; variants < 4; ++variants) {
            const int variant = variants & 1;
            Builder t(knobs_, base);
            t.set_near("vectorize", vec.name, static_cast<double>(lanes), [&](std::int64_t w) { return w == lanes; });
            if (!t.set_near("tile", vec.name, static_cast<double>(lanes), [&](std::int64_t v) { return v == lanes; })) continue;
            if (!row.empty()) {
              t.set_near("unroll", row, static_cast<double>(rows), [&](std::int64_t u) { return u == rows; });
              if (!t.set_near("tile", row, static_cast<double>(rows), [&](std::int64_t v) { return v == rows; })) continue;
            }
            for (const auto& r : big_red) t.set_near("tile", r.name, static_cast<double>(r.extent));  // no split
            std::vector<std::string> tail;
            if (!row.empty()) tail.push_back(row);
            tail.push_back(vec.name);
            if (!t.set_order(tail)) continue;
            if (!par.empty()) t.set_label("parallel", "", par);
            // variant 0: blocks of ~48 rows x ~64 lanes, inputs packed per block;
            // variant 1: row blocks only, inputs read in place (staged when bounded).
            if (!row.empty()) {
              const std::int64_t rt = t.value("tile", row);
              // whole tiles per block; blocks that split the loop evenly (or none) first
              const std::int64_t ext = b.extent(row);
              if (!t.set_near("block", row, variant == 0 ? 48 : 96,
                              [&](std::int64_t v) { return v >= ext || (rt > 0 && v % rt == 0 && ext % v == 0); }))
                t.set_near("block", row, variant == 0 ? 48 : 96, [&](std::int64_t v) { return rt > 0 && v % rt == 0; });
            }
            const std::int64_t vt = t.value("tile", vec.name);
            t.set_near("block", vec.name, variant == 0 ? 64 : static_cast<double>(vec.extent),
                       [&](std::int64_t v) { return vt > 0 && (v % vt == 0 || v >= vec.extent); });
            for (const auto& v : b.pure)  // other output loops: small blocks (4 or 2)
              if (v.name != row && v.name != vec.name) t.set_near("block", v.name, variants < 2 ? 4 : 2);
            for (const auto& r : big_red)  // the block's tiles, not the par loop, should hold the reduction
              if (variant == 1) t.set_near("block", r.name, static_cast<double>(r.extent));
            for (const auto& in : stage_choices(false)) {
              const bool bounded = p_.tensor(in).decl->boundary != Boundary::none;
              if (variant == 0 && !t.set_label("layout", in, "packed")) t.set_label("layout", in, "staged");
              if (variant == 1 && bounded) t.set_label("layout", in, "staged");
            }
            // Parallel over the tiles of an unblocked loop would put every block (and
            // its copies) inside each parallel tile: use a blocked loop instead.
            auto blocked = [&](const std::string& v) {
              const std::int64_t bl = t.value("block", v);
              return bl > 0 && bl < b.extent(v);
            };
            const std::int64_t par_tile = par.empty() ? 0 : t.value("tile", par);
            if (!par.empty() && !blocked(par) && par_tile > 0 && par_tile < b.extent(par))
              for (const auto& v : b.pure)
                if (blocked(v.name) && t.set_label("parallel", "", v.name)) break;
            keep(t.point());
          }
        }
      }
    } else {
      // Window or elementwise: the unit-stride loop vectorized over its whole extent,
      // the window unrolled inside it, a few rows per tile, bounded inputs staged.
      // Window with blocks first: one vector per tile (its accumulator a register across
      // the unrolled window), blocks of ~14 rows x ~4 planes, input staged per block.
      // First, rows x 1 vector of accumulators (the row loop unrolled: each input row
      // loaded once serves up to R output rows) over a whole plane per block.
      if (!window.empty())
        for (int rows : {4, 1})
        for (int lanes : {vector_lanes(), 2 * vector_lanes()})
          for (const std::string& par : par_choices.empty() ? std::vector<std::string>{""} : par_choices) {
            Builder t(knobs_, base);
            if (!t.set_near("vectorize", vec.name, lanes, [&](std::int64_t w) { return w == lanes; })) continue;
            if (!t.set_near("tile", vec.name, lanes, [&](std::int64_t v) { return v == lanes; })) continue;
            for (std::size_t i = 0; i + 1 < b.pure.size(); ++i) t.set_near("tile", b.pure[i].name, 1);
            if (rows > 1 && b.pure.size() >= 2) {
              const LoopVar& row = b.pure[b.pure.size() - 2];
              auto divides = [&](std::int64_t v) { return v <= row.extent && row.extent % v == 0; };
              if (!t.set_near("tile", row.name, rows, divides) || !t.set_near("unroll", row.name, rows, divides)) continue;
              if (t.value("tile", row.name) != t.value("unroll", row.name)) continue;
            }
            if (b.pure.size() >= 2) t.set_near("block", b.pure[b.pure.size() - 2].name, rows > 1 ? 1e9 : 14);
            if (b.pure.size() >= 3) t.set_near("block", b.pure[b.pure.size() - 3].name, rows > 1 ? 1 : 4);
            for (const auto& w : window) t.set_near("unroll", w.name, static_cast<double>(w.extent));
            if (!par.empty()) t.set_label("parallel", "", par);
            for (const auto& in : stage_choices(true)) t.set_label("layout", in, "staged");
            keep(t.point());
          }
      // Stencil (steps, no reduction): 3-D tiles of ~8 planes x 32 rows (16 x 16, 16 x
      // all: Mullapudi2016's slabs) x the whole unit-stride loop in 16 lanes, parallel over the outermost loop, first with the
      // steps fused per tile (timeblock: intermediate steps recomputed on the tile and
      // its halo, so a tile's planes stay in L2 between steps), then without. Probes on
      // stencil7 128^3 x 2 steps under load: 8 x 32 x 128 fused 1.46 ms (min of 7) vs
      // Mullapudi2016's 2.17 and 2.12 for the unfused 1 x 32 x 128.
      // First, slabs of half and a quarter of the planes x whole planes, fused (on two
      // cores one or two slabs per thread: the intermediate step recomputed on 8 / 16
      // halo planes per 48 / 24 instead of per 16; stencil25 96^3 under load: 1.16-1.19x
      // Mullapudi2016's 16-plane slabs), and Mullapudi2016's own choice (16 planes x the
      // whole plane, fused, 8 lanes) so the search starts at least from it.
      struct StencilTile {
        double planes, rows;
        int lanes;
      };
      const double all_planes = b.pure.size() >= 3 ? static_cast<double>(b.pure[b.pure.size() - 3].extent) : 0;
      const std::vector<StencilTile> stencil_tiles = {{all_planes / 2, 1e9, 16}, {all_planes / 4, 1e9, 16}, {8, 32, 16},
                                                      {16, 16, 16},           {16, 1e9, 16},            {16, 1e9, 8}};
      if (window.empty() && p_.steps() > 1 && b.pure.size() >= 3)
        for (bool fuse : {true, false})
          for (const auto& [planes, rows, lanes] : stencil_tiles) {
            if (!fuse && lanes == 8) continue;
            Builder t(knobs_, base);
            if (!t.set_near("vectorize", vec.name, lanes)) continue;
            t.set_near("tile", vec.name, static_cast<double>(vec.extent));
            t.set_near("tile", b.pure[b.pure.size() - 2].name, rows);
            t.set_near("tile", b.pure[b.pure.size() - 3].name, planes);
            t.set_label("parallel", "", b.pure[b.pure.size() - 3].name);
            if (fuse) t.set_near("timeblock", "", static_cast<double>(p_.steps()), [&](std::int64_t v) { return v <= p_.steps(); });
            for (const auto& in : stage_choices(true)) t.set_label("layout", in, "staged");
            keep(t.point());
          }
      for (int lanes : {vector_lanes(), 2 * vector_lanes()}) {
        for (double rows : {4.0, 1.0, 1e9}) {
          for (const std::string& par : par_choices.empty() ? std::vector<std::string>{""} : par_choices) {
            Builder t(knobs_, base);
            if (!t.set_near("vectorize", vec.name, lanes, [&](std::int64_t w) { return w == lanes; })) continue;
            t.set_near("tile", vec.name, static_cast<double>(vec.extent), [&](std::int64_t v) { return v % lanes == 0 || v >= vec.extent; });
            if (b.pure.size() >= 2) t.set_near("tile", b.pure[b.pure.size() - 2].name, rows);
            for (const auto& w : window) t.set_near("unroll", w.name, static_cast<double>(w.extent));
            if (!par.empty()) t.set_label("parallel", "", par);
            for (const auto& in : stage_choices(true)) t.set_label("layout", in, "staged");
            // Temps per tile of rows first (a row's max, exponentials and sum stay in
            // L1 between the passes), their reductions in vector lanes along the row.
            Builder fused = t;
            for (const auto& k : knobs_) {
              if (k.kind == "compute_at") fused.set_label("compute_at", k.target, "tile");
              if (k.kind == "rfactor") fused.set_near("rfactor", k.target, 16);
            }
            keep(fused.point());
            keep(t.point());
          }
        }
      }
    }
  }
  return out;
}

std::size_t Space::leading_templates() const {
  std::size_t n = 0;
  for (const Point& t : templates()) {
    if (!p_.is_ocvec(schedule(t).algorithm)) break;
    ++n;
  }
  return n;
}

}  // namespace taihu::autotune
