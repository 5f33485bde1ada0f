// The tuning loop: propose (search.hpp) -> generate (backend.hpp) -> check against the
// reference interpreter at sampled output points -> measure (median of repeats) ->
// append to the log -> learn. Stops at the time budget or the trial limit. With an
// existing log of the same key, the run resumes: logged points are not measured again
// and teach the search and the cost model first. Points that mean the same schedule
// (knobs that do not apply to the chosen algorithm or loop) are compiled and measured
// once; clearly slow candidates are rejected after one run (TuneOptions::reject_factor);
// the fastest few are re-measured at the end (TuneOptions::confirm_top).
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "taihu/autotune/measure.hpp"
#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/search.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune {

struct Progress {
  int trial = 0;          // trials done in this run
  int resumed = 0;        // points taken from the log
  double elapsed_s = 0;
  double best_s = 0;      // best median so far (0: none yet)
  const Record* last = nullptr;
  std::string best_schedule;
};

struct TuneOptions {
  std::string backend = "halide";  // halide | cpp
  double budget_s = 120;
  int max_trials = 0;              // 0: no limit
  std::uint64_t seed = 1;
  Strategy strategy = Strategy::evolutionary;
  bool cost_model = true;
  // With a --log holding other shapes of the operator: the cost model also learns from
  // their records (shape-normalised features, transfer.hpp) and ranks from the first
  // batch. false: those shapes only seed the search with their best schedules.
  bool transfer_model = true;
  int batch = 4;                   // proposals per round
  int threads = 1;
  std::string log_path;            // "" = no log
  std::string workdir = "/tmp/taihu-tune";  // C++ backend objects
  MeasureOptions measure;
  // A candidate whose first timed run is this many times slower than the best so far
  // is rejected after that run (recorded with repeats = 1) instead of being measured
  // fully; 0 measures every candidate fully.
  double reject_factor = 3;
  // With a time budget, its last 15% (at most 20 s) re-measures this many of the
  // fastest schedules in interleaved rounds; the best of those is the result.
  int confirm_top = 5;
  std::function<void(const Progress&)> on_progress;
};

// A custom evaluator replaces generate+check+measure (tests use a fake one): it
// returns seconds or throws taihu::Error when the candidate is invalid.
using Evaluator = std::function<double(const Point&)>;

struct TuneResult {
  Point best;
  double best_s = std::numeric_limits<double>::infinity();
  int trials = 0;
  int failures = 0;
  int resumed = 0;
  std::vector<Point> measured;  // in order, this run only
  std::vector<Record> records;  // this run's records
};

TuneResult tune(const Problem& p, const Space& space, const TuneOptions& opt, const Evaluator& custom = {});

// Schedules a layer measures first when it is carried over from another batch size of
// the same layer (bench_autotune --suite dnn's warm start), no duplicates, only valid
// points: the donor's best `from` (a record of `log`); for a Winograd best, the fastest
// of its near-ties there (search records of from's key within 5% of its fastest) whose
// GEMM register tile (winograd k) differs; and, when this shape has more images than
// the donor's (`more_images`), each of those that runs its stages at root (winograd r 0)
// again with one tile row per task (r 1), these right after the donor's best (order:
// best, best r 1, near-tie r 1, near-tie). Why: ResNet-50 res2 3x3 on Zen 4 had 11
// Winograd schedules within 2.2% at batch 1, all r 0; at batch 32 their stage buffers
// (V and M of all 32 images, ~58 MB each way) stream through memory, the batch-1 best
// ran 30.6-36 ms, a 32-channel tile with r 1 23-26 ms, and 15 s of search from the best
// alone reached neither.
std::vector<Point> batch_seeds(const Space& space, const std::vector<Record>& log, const Record& from, bool more_images);

// Builds, checks and times each of `points` in turn as tune() times a trial, with one
// set of inputs and reference values for all (a slow call by measure_slow_call), and
// appends each to opt.log_path as a search record (trial 0; a failure as ok = false).
// Before each point after the first, `go_on(elapsed_s, last_s)` (seconds since the
// start, the last point's seconds) says whether to go on. bench_autotune --suite dnn's
// warm start across batch sizes (which built a new set of inputs and references per
// point: two 103M-float inputs a seed for VGG16 conv1_2 at batch 32).
std::vector<Record> measure_points(const Problem& p, const Space& space, const TuneOptions& opt, const std::vector<Point>& points,
                                   const std::function<bool(double elapsed_s, double last_s)>& go_on = {});

// A record template (key fields, versions) for this problem and options.
Record record_for(const Problem& p, const TuneOptions& opt);

// Builds one kernel with the chosen backend, checks it against the reference at
// sampled points (taihu::Error naming the first mismatch) and returns it.
std::unique_ptr<class Kernel> build_checked(const Problem& p, const Schedule& s, const TuneOptions& opt);

}  // namespace taihu::autotune
