// Timing a kernel the way the tuner and the benchmark do: warm-up runs, then repeats
// until a time target (bounded below and above), reporting the median and the spread.
#pragma once
#include <functional>
#include <vector>

namespace taihu::autotune {

struct MeasureOptions {
  // Sleep before the warm-up, so another kernel's idle workers (OpenMP's or Halide's,
  // which spin for a while after their last task) have gone to sleep and do not share
  // the cores with this one; a few warm-up runs then wake this kernel's own workers.
  double pause_s = 0;
  int warmup = 1;
  double warmup_s = 0;  // and warm-up runs until this much time has passed
  int min_repeats = 3;
  int max_repeats = 50;
  double target_seconds = 0.3;  // total timed time aimed for
};

struct Measurement {
  double median_s = 0;
  double min_s = 0;
  double spread = 0;  // (75th - 25th percentile) / median
  int repeats = 0;
};

Measurement measure(const std::function<void()>& run, const MeasureOptions& opt = {});

// The median of `v` (the mean of the middle two for an even count; NaN when empty).
// How interleaved rounds are summarized, by the tuner's confirmation and by
// bench_autotune's final comparison alike.
double median_of(std::vector<double> v);

// Times every one of `runs` once per round with measure(), in at least `min_rounds` and
// at most `max_rounds` rounds (more while `more` says so); round r starts at run r
// (mod n), so none always follows the same one. Returns, per run, its round medians
// (summarize them with median_of): the tuner's confirmation and bench_autotune's final
// comparison both time their contenders this way.
std::vector<std::vector<double>> interleaved_round_medians(const std::vector<std::function<void()>>& runs,
                                                           const MeasureOptions& opt, int min_rounds, int max_rounds,
                                                           const std::function<bool()>& more = {});

}  // namespace taihu::autotune
