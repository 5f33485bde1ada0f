// Tuning that transfers across shapes of one operator (Ansor / TenSet style): schedule
// features normalised by the problem, so that one cost model learns from the records
// of every tuned shape, and the training samples a log's other shapes give.
//
// Features (TransferFeatures), for a Point of any shape's Space of the same spec:
//   - the problem: log2 flops, log2 of each bound dim;
//   - every knob of the target space as Space::features has it (log2 of a numeric
//     value, one-hot of a named one, matched by label);
//   - per loop variable of the chosen algorithm's output statement: log2 extent, tile /
//     extent, log2 trip count, padding waste of the last tile, block / extent, vector
//     width / the ISA's lanes and tile / lanes, log2 unroll, whether it is the parallel
//     loop;
//   - the tile as a whole: bytes its accesses touch (log2, and / L1d, / L2 from
//     arch::topology), flops per byte, accumulators / vector registers; the block's
//     bytes / L2; the parallel loop's task count and its balance over the threads;
//   - log2 of the algorithm's flops over the operator's (Winograd does fewer).
// Target: log(time / the best time of the same shape) -- TenSet's normalised
// throughput -- so shapes of different size and speed share one scale.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune {

class TransferFeatures {
 public:
  // The layout follows the target problem's spec and space; threads: the tuning's.
  TransferFeatures(const Problem& target, const Space& target_space, int threads);
  // Features of `pt`, a point of `space` (whose problem is `p`, any shape of the spec).
  std::vector<double> operator()(const Problem& p, const Space& space, const Point& pt) const;
  std::size_t size() const;

 private:
  std::vector<std::string> dims_;   // bound dims, target order
  std::vector<Knob> knobs_;         // the target space's knobs
  std::vector<std::string> vars_;   // loop vars of every algorithm's output statement
  int threads_;
};

// One training sample for the cost model.
struct TransferSample {
  std::vector<double> x;
  double y = 0;       // log(time / the shape's best time)
  double weight = 1;
  std::string shape;
};

// Samples from the records of `log` that share the target's operator key except the
// shape (same op, spec hash, ISA, threads, backend; "search" records only), each
// shape's records together weighing like 32 * 2^(-d/2) of the target's own (d: summed
// |log2| dim ratios to the target), so that a shape tuned long does not drown the
// others and the shape's own records soon outweigh them. Failed records teach "twice
// the shape's slowest". A shape the spec cannot bind or a schedule the space cannot
// read is skipped (TAIHU_VERBOSE says which). *carried (optional): the 16 fastest
// schedules of each of the 3 nearest shapes, carried over to the target space
// (Space::nearest_point), valid and distinct -- candidates for the model to rank.
std::vector<TransferSample> transfer_samples(const Problem& target, const Space& target_space, const TransferFeatures& features,
                                             const Record& target_key, const std::vector<Record>& log,
                                             std::vector<Point>* carried = nullptr);

// Spearman's rank correlation of two equally long sequences (ties get their mean rank).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace taihu::autotune
