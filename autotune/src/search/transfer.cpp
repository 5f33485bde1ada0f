// Shape-normalised features and the other shapes' training samples (see transfer.hpp).
#include "taihu/autotune/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::autotune {
namespace {

constexpr int kPerVar = 12;   // features per loop variable (see loop_features)
constexpr int kPerTile = 9;   // features of the tile as a whole

double log2p(double v) { return std::log2(std::max(0.5, v)); }

std::size_t cache_bytes(int level, std::size_t fallback) {
  const arch::CacheLevel* c = arch::topology().cache(level);
  return c && c->size_bytes > 0 ? c->size_bytes : fallback;
}

// Loop variable names appearing in an index expression.
void loop_names(const Expr& e, const BoundStmt& b, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::name && b.extent(e.name) > 0) out.push_back(e.name);
  for (const auto& a : e.args)
    if (a) loop_names(*a, b, out);
}

// Elements of every tensor access of the statement touched by one tile whose loops
// span `size` (per loop var): an index a + b spans size_a + size_b - 1.
double footprint_elems(const BoundStmt& b, const std::map<std::string, double>& size) {
  auto span = [&](const Expr& index) {
    std::vector<std::string> names;
    loop_names(index, b, names);
    double s = 1;
    for (const auto& n : names) s += size.at(n) - 1;
    return s;
  };
  double total = 0;
  double lhs = 1;
  for (const auto& v : b.stmt->vars) lhs *= size.count(v) ? size.at(v) : 1.0;
  total += lhs;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.kind == Expr::Kind::access) {
      double elems = 1;
      for (const auto& a : e.args)
        if (a) elems *= span(*a);
      total += elems;
      return;
    }
    for (const auto& a : e.args)
      if (a) walk(*a);
  };
  if (b.stmt->rhs) walk(*b.stmt->rhs);
  return total;
}

double shape_distance(const Problem& target, const std::map<std::string, std::int64_t>& dims) {
  double d = 0;
  for (const auto& [dim, value] : dims)
    if (target.dims().count(dim) && value > 0 && target.dim(dim) > 0)
      d += std::abs(std::log2(static_cast<double>(value) / static_cast<double>(target.dim(dim))));
  return d;
}

}  // namespace

TransferFeatures::TransferFeatures(const Problem& target, const Space& target_space, int threads)
    : knobs_(target_space.knobs()), threads_(std::max(1, threads)) {
  for (const auto& [dim, value] : parse_shape(target.shape_key())) dims_.push_back(dim);
  std::set<std::string> vars;
  for (int a = 0; a < target.algorithm_count(); ++a) {
    const BoundStmt& b = target.stmts(a).back();
    for (const auto& v : b.pure) vars.insert(v.name);
    for (const auto& v : b.reduce) vars.insert(v.name);
  }
  vars_.assign(vars.begin(), vars.end());
}

std::size_t TransferFeatures::size() const {
  std::size_t n = 1 + dims_.size() + vars_.size() * kPerVar + kPerTile;
  for (const auto& k : knobs_) n += k.numeric ? 1 : k.labels.size();
  return n;
}

std::vector<double> TransferFeatures::operator()(const Problem& p, const Space& space, const Point& pt) const {
  std::vector<double> f;
  f.reserve(size());
  const Schedule s = space.schedule(pt);
  // The problem.
  f.push_back(log2p(p.flops(0)));
  for (const auto& d : dims_) f.push_back(p.dims().count(d) ? log2p(static_cast<double>(p.dim(d))) : -1.0);
  // The knobs, by name and label (a shape's space may offer other numeric values).
  std::map<std::string, std::size_t> here;
  for (std::size_t i = 0; i < space.knobs().size(); ++i) here[space.knobs()[i].name()] = i;
  for (const Knob& k : knobs_) {
    const auto it = here.find(k.name());
    const Knob* o = it == here.end() ? nullptr : &space.knobs()[it->second];
    const auto j = it == here.end() ? std::size_t{0} : static_cast<std::size_t>(pt[it->second]);
    if (k.numeric) {
      f.push_back(o ? log2p(static_cast<double>(o->ints[j])) : -1.0);
    } else {
      for (const auto& label : k.labels) f.push_back(o && o->labels[j] == label ? 1.0 : 0.0);
    }
  }
  // The loops of the chosen algorithm, relative to their extents.
  const int lanes = vector_lanes();
  const bool loops = !p.is_winograd(s.algorithm) && !p.is_ocvec(s.algorithm);
  const BoundStmt& b = p.stmts(s.algorithm).back();
  std::map<std::string, double> tile, block;
  for (const auto& v : vars_) {
    const double e = loops ? static_cast<double>(b.extent(v)) : 0.0;
    if (e <= 0) {
      f.insert(f.end(), kPerVar, 0.0);
      continue;
    }
    const auto ti = s.tile.find(v);
    const double t = ti == s.tile.end() ? e : std::min(e, static_cast<double>(ti->second));
    const auto bi = s.block.find(v);
    const double blk = bi == s.block.end() ? (b.is_pure(v) ? e : t) : std::min(e, static_cast<double>(bi->second));
    const auto vi = s.vectorize.find(v);
    const double vec = vi == s.vectorize.end() ? 1.0 : vi->second;
    const auto ui = s.unroll.find(v);
    const double trips = std::ceil(e / t);
    tile[v] = t;
    block[v] = std::max(blk, t);
    f.push_back(1.0);
    f.push_back(log2p(e));
    f.push_back(t / e);
    f.push_back(log2p(trips));
    f.push_back(trips * t / e - 1);  // work wasted on the last, partial tile
    f.push_back(blk / e);
    f.push_back(log2p(std::ceil(e / blk)));
    f.push_back(vec / lanes);
    f.push_back(vec > 1 ? t / lanes : 0.0);
    f.push_back(vec > 1 && std::fmod(t, vec) == 0 ? 1.0 : 0.0);
    f.push_back(log2p(ui == s.unroll.end() ? 1.0 : ui->second));
    f.push_back(s.parallel == v ? 1.0 : 0.0);
  }
  // The tile and the block as a whole.
  if (loops) {
    const double l1 = static_cast<double>(cache_bytes(1, 32 << 10)), l2 = static_cast<double>(cache_bytes(2, 1 << 20));
    const double tile_bytes = 4 * footprint_elems(b, tile);
    double tile_flops = 2, acc = 1;
    for (const auto& [v, t] : tile) tile_flops *= t;
    for (const auto& v : b.pure)
      if (tile.count(v.name)) acc *= tile.at(v.name);
    acc /= lanes;
    const double block_bytes = 4 * footprint_elems(b, block);
    double tasks = 1;
    if (!s.parallel.empty() && block.count(s.parallel)) tasks = std::ceil(static_cast<double>(b.extent(s.parallel)) / block.at(s.parallel));
    const double rounds = std::ceil(tasks / threads_);
    f.push_back(log2p(tile_bytes));
    f.push_back(tile_bytes / l1);
    f.push_back(tile_bytes / l2);
    f.push_back(log2p(tile_flops / tile_bytes * 16));
    f.push_back(acc / vector_registers());
    f.push_back(block_bytes / l2);
    f.push_back(log2p(tasks));
    f.push_back(tasks / (rounds * threads_));
  } else {
    f.insert(f.end(), kPerTile - 1, 0.0);
  }
  f.push_back(std::log2(std::max(1e-9, p.flops(s.algorithm) / std::max(1.0, p.flops(0)))));
  if (f.size() != size()) throw Error("transfer features: internal layout mismatch");
  return f;
}

std::vector<TransferSample> transfer_samples(const Problem& target, const Space& target_space, const TransferFeatures& features,
                                             const Record& key, const std::vector<Record>& log, std::vector<Point>* carried) {
  std::map<std::string, std::vector<const Record*>> by_shape;
  for (const Record& r : log)
    if (r.op == key.op && r.spec_hash == key.spec_hash && r.isa == key.isa && r.threads == key.threads && r.backend == key.backend &&
        r.shape != key.shape && r.stat == "search")
      by_shape[r.shape].push_back(&r);
  std::vector<TransferSample> out;
  std::vector<std::pair<double, std::vector<const Record*>>> nearest;  // (distance, ok records fastest first)
  for (const auto& [shape, recs] : by_shape) {
    std::unique_ptr<Problem> q;
    std::unique_ptr<Space> sq;
    double dist = 0;
    try {
      const auto dims = parse_shape(shape);
      dist = shape_distance(target, dims);
      q = std::make_unique<Problem>(target.spec(), dims, target.params());
      sq = std::make_unique<Space>(*q);
    } catch (const Error& e) {
      arch::log_verbose("taihu-tune: transfer: skipping the records of %s: %s\n", shape.c_str(), e.what());
      continue;
    }
    std::vector<std::pair<const Record*, Point>> pts;
    double best = std::numeric_limits<double>::infinity(), worst = 0;
    for (const Record* r : recs) {
      try {
        Point pt = sq->from_map(r->schedule);
        if (!sq->valid(pt)) continue;
        pts.emplace_back(r, std::move(pt));
      } catch (const Error&) {
        continue;
      }
      if (r->ok && r->median_s > 0) best = std::min(best, r->median_s), worst = std::max(worst, r->median_s);
    }
    if (!std::isfinite(best) || pts.empty()) continue;
    const double weight = 32 * std::exp2(-dist / 2) / static_cast<double>(pts.size());
    std::vector<const Record*> ok;
    for (const auto& [r, pt] : pts) {
      TransferSample smp;
      smp.x = features(*q, *sq, pt);
      smp.y = std::log((r->ok && r->median_s > 0 ? r->median_s : 2 * worst) / best);
      smp.weight = weight;
      smp.shape = r->shape;
      out.push_back(std::move(smp));
      if (r->ok && r->median_s > 0) ok.push_back(r);
    }
    std::stable_sort(ok.begin(), ok.end(), [](const Record* a, const Record* b) { return a->median_s < b->median_s; });
    nearest.emplace_back(dist, std::move(ok));
  }
  if (carried) {
    std::stable_sort(nearest.begin(), nearest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<Point> have(carried->begin(), carried->end());
    for (std::size_t i = 0; i < nearest.size() && i < 3; ++i)
      for (std::size_t j = 0; j < nearest[i].second.size() && j < 16; ++j) {
        Point pt = target_space.nearest_point(nearest[i].second[j]->schedule);
        if (target_space.valid(pt) && have.insert(pt).second) carried->push_back(std::move(pt));
      }
  }
  return out;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) throw Error("spearman: need two equally long sequences of at least 2 values");
  auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> order(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i;
      while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
      for (std::size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * static_cast<double>(i + j);
      i = j + 1;
    }
    return r;
  };
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size()), mean = (n - 1) / 2;
  double num = 0, da = 0, db = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - mean) * (rb[i] - mean);
    da += (ra[i] - mean) * (ra[i] - mean);
    db += (rb[i] - mean) * (rb[i] - mean);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 0.0;
}

}  // namespace taihu::autotune
