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
  int warmup = 1;      // 0 (with warmup_s 0): no warm-up (a kernel that just ran)
  double warmup_s = 0;  // and warm-up runs until this much time has passed
  int min_repeats = 3;
  int max_repeats = 50;
  double target_seconds = 0.3;  // total timed time aimed for
};

// The options of a final comparison (bench_autotune's, `taihu-tune time`'s): 60 ms of
// timed calls per block, each block after a 0.1 s pause (no other contender's workers
// awake) and 20 ms of its own untimed calls.
MeasureOptions comparison_measure_options();

struct Measurement {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double spread = 0;  // (75th - 25th percentile) / median
  int repeats = 0;
  // Involuntary context switches of this process's threads during the timed calls:
  // another process took a core from the kernel (on a 2-core machine a 2-thread kernel
  // then waits for its descheduled thread: its time doubles).
  long preemptions = 0;
  // This process's CPU time over the wall time of the timed calls: the cores its threads
  // really ran on (~2 for a 2-thread kernel alone on 2 cores; ~1 when another process
  // holds one of them).
  double cores_used = 0;
};

Measurement measure(const std::function<void()>& run, const MeasureOptions& opt = {});

// A call at least this long is measured by measure_slow_call in a search (trials, the
// suite's warm start); the confirmation re-measures the fastest few in rounds anyway.
constexpr double kSlowCallSeconds = 0.05;

// A kernel that already ran warm (its correctness check) and then `first_s` for one
// timed call: times more calls, target_seconds / first_s of them clamped to 1..2, and
// returns the statistics of all (2-3 timed calls, that first one counted; cores_used and
// preemptions from the calls timed here). Why: measure() adds a warm-up and 3 calls, 6
// calls a candidate with the check and the first; VGG16 conv3_2 at batch 32 (0.35-0.7 s
// a call) measured one seed in 8.6 s of a 15 s budget and searched 1 trial.
Measurement measure_slow_call(const std::function<void()>& run, double first_s, const MeasureOptions& opt = {});

// The median of `v` (the mean of the middle two for an even count; NaN when empty).
// How interleaved rounds are summarized, by the tuner's confirmation and by
// bench_autotune's final comparison alike.
double median_of(std::vector<double> v);
// (75th - 25th percentile) / median of `v` (nearest-rank percentiles; 0 when empty).
double relative_iqr(std::vector<double> v);

// Times every one of `runs` once per round with measure(), in at least `min_rounds` and
// at most `max_rounds` rounds (more while `more` says so); round r starts at run r
// (mod n), so none always follows the same one. Returns, per run, its round medians
// (summarize them with median_of): the tuner's confirmation and bench_autotune's final
// comparison both time their contenders this way.
std::vector<std::vector<double>> interleaved_round_medians(const std::vector<std::function<void()>>& runs,
                                                           const MeasureOptions& opt, int min_rounds, int max_rounds,
                                                           const std::function<bool()>& more = {});

// interleaved_round_medians' rounds, each round's whole Measurement.
std::vector<std::vector<Measurement>> interleaved_rounds(const std::vector<std::function<void()>>& runs, const MeasureOptions& opt,
                                                         int min_rounds, int max_rounds, const std::function<bool()>& more = {});

// One contender's rounds summarised the way the tuner's confirmation, `taihu-tune time`
// and bench_autotune's final comparison report them: the median of the round medians,
// its spread (IQR / median, lowest and highest round), leaving out the rounds during
// which another process held a core the kernel's threads wanted. Such a round is one
// whose cores_used is below 80% of the highest of the contender's rounds (a 2-thread
// kernel sharing a core with another process runs at ~half its speed: on this VM
// round medians of one gemm read 0.75 and 1.5 ms within seconds). When fewer than 3
// rounds (or fewer than a third) are left, every round counts.
struct RoundSummary {
  double median_s = 0, spread = 0, min_s = 0, max_s = 0;
  int rounds = 0;     // rounds counted
  int contended = 0;  // rounds left out
  std::vector<double> medians;  // the counted rounds' medians
  double cores_used = 0;        // the median of the counted rounds' cores_used
};
RoundSummary summarize_rounds(const std::vector<Measurement>& rounds);

// Whether a timing of a `threads`-thread kernel had its cores: the median cores_used of
// its counted rounds is at least 80% of `threads`. summarize_rounds only compares a
// contender's rounds with each other, so when another process held a core in every
// round none is left out: on the 2-core Zen 4 at load 4-5 ResNet-50 res2 1x1 (a 2-thread
// kernel of 5 tasks) timed 0.51 ms in the search and 1.10 ms in the fresh comparison
// process, ~1 core in every round (0.45 / 0.45 ms on a quiet host). A timing that fails
// this is not a reproduction of the search's; bench_autotune --suite re-times it.
bool had_its_cores(const RoundSummary& s, int threads);
// The same rule on a median cores_used already taken (a timing child's report).
bool had_its_cores(double cores_used, int threads);

}  // namespace taihu::autotune
