// Choosing what to measure next. Strategies:
//   random        uniform valid points
//   evolutionary  children of the fastest measured points (tournament selection,
//                 uniform crossover, per-knob mutation), Ansor-style; the first
//                 proposals are the space's structured templates (Space::templates)
// With the cost model on (the default), each batch is the best-predicted points of a
// large candidate pool (plus a few unpredicted ones for exploration) once enough
// measurements exist to train it. Deterministic: the same seed and the same sequence
// of observations give the same proposals.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "taihu/autotune/cost_model.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune {

enum class Strategy { random, evolutionary };
Strategy parse_strategy(const std::string& s);  // "random" | "evolutionary"

class Searcher {
 public:
  Searcher(const Space& space, Strategy strategy, std::uint64_t seed, bool use_cost_model);

  // Up to n valid points not proposed or observed before (fewer when the space runs out).
  std::vector<Point> propose(int n);
  // Points proposed first, before the templates (e.g. the best schedules of the nearest
  // tuned shapes); invalid and already seen ones are dropped.
  void seed_first(const std::vector<Point>& pts);
  // A measured point: seconds > 0, or infinity when it failed (never proposed again).
  void observe(const Point& pt, double seconds);
  // The model's predicted seconds for a point (NaN while untrained).
  double predict(const Point& pt) const;
  std::size_t observed() const { return history_.size(); }

 private:
  const Space& space_;
  Strategy strategy_;
  SplitMix64 rng_;
  bool use_model_;
  CostModel model_;
  int fitted_at_ = -1;
  std::vector<std::pair<Point, double>> history_;
  std::set<Point> seen_;
  std::vector<Point> templates_;  // evolutionary: proposed first, in order
  std::size_t next_template_ = 0;
  void refit();
  Point mutate(Point p);
  Point crossover(const Point& a, const Point& b);
  std::vector<Point> pool(int size);
};

}  // namespace taihu::autotune
