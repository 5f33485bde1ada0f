// Choosing what to measure next. Strategies:
//   random        uniform valid points
//   evolutionary  children of the fastest measured points (tournament selection,
//                 uniform crossover, per-knob mutation), Ansor-style; the first
//                 proposals are the space's structured templates (Space::templates)
// With the cost model on (the default), each batch is the best-predicted points of a
// large candidate pool (plus a few unpredicted ones for exploration) once enough
// measurements exist to train it. With transfer on (use_transfer: the records of other
// shapes of the operator, transfer.hpp), the model learns from shape-normalised features
// and those records as well, so it ranks candidates from the first batch on: after the
// seeds (the nearest shapes' best schedules), every batch is the best predicted of a
// pool that also holds the remaining templates and the other shapes' fastest schedules
// carried over, and the default point is not measured. Deterministic: the same seed and
// the same sequence of observations give the same proposals.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "taihu/autotune/cost_model.hpp"
#include "taihu/autotune/space.hpp"
#include "taihu/autotune/transfer.hpp"

namespace taihu::autotune {

enum class Strategy { random, evolutionary };
Strategy parse_strategy(const std::string& s);  // "random" | "evolutionary"

class Searcher {
 public:
  Searcher(const Space& space, Strategy strategy, std::uint64_t seed, bool use_cost_model);

  // Up to n valid points not proposed or observed before (fewer when the space runs out).
  std::vector<Point> propose(int n);
  // Points proposed first, before the templates (e.g. the best schedules of the nearest
  // tuned shapes) but after the space's leading templates (Space::leading_templates:
  // the ocvec tiles of a 1x1 layer); invalid and already seen ones are dropped.
  void seed_first(const std::vector<Point>& pts);
  // Learn across shapes: `p` is the space's problem; prior: the other shapes' samples
  // (transfer_samples, features from a TransferFeatures of this space); carried: their
  // fastest schedules in this space, candidates for the model to rank. Call before the
  // first propose(); the space's own observations then train with weight 1 each.
  void use_transfer(const Problem& p, int threads, std::vector<TransferSample> prior, std::vector<Point> carried);
  // The model's features of a point (the transfer features once use_transfer is on).
  std::vector<double> features(const Point& pt) const;
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
  std::size_t leading_ = 0;    // templates_[0, leading_): Space::leading_templates, always in order
  std::size_t seeds_end_ = 0;  // templates_[0, seeds_end_): those and seed_first's points
  // Transfer (use_transfer): the features, the other shapes' samples, carried points.
  const Problem* problem_ = nullptr;
  std::unique_ptr<TransferFeatures> transfer_;
  std::vector<TransferSample> prior_;
  std::vector<Point> carried_;
  void refit();
  Point mutate(Point p);
  Point crossover(const Point& a, const Point& b);
  std::vector<Point> pool(int size);
};

}  // namespace taihu::autotune
