// Warm-up + repeats + median (see measure.hpp).
#include "taihu/autotune/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include "taihu/arch/timer.hpp"

namespace taihu::autotune {
namespace {
double process_cpu_seconds() {
  timespec t{};
  return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 ? static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec) : 0;
}
long involuntary_switches() {
  rusage u{};
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_nivcsw : 0;
}

// `count` timed calls of run, appended to `t` and sorted, with what the block of calls
// cost: wall and process CPU seconds, involuntary context switches.
struct TimedCalls {
  std::vector<double> t;
  double block_s = 0, cpu_s = 0;
  long preemptions = 0;
};

TimedCalls time_calls(const std::function<void()>& run, int count, std::vector<double> t) {
  t.reserve(t.size() + static_cast<std::size_t>(count));
  const long switches = involuntary_switches();
  const double cpu0 = process_cpu_seconds();
  arch::Stopwatch block;
  for (int i = 0; i < count; ++i) {
    arch::Stopwatch w;
    run();
    t.push_back(w.seconds());
  }
  TimedCalls c;
  c.block_s = block.seconds();
  c.cpu_s = process_cpu_seconds() - cpu0;
  c.preemptions = involuntary_switches() - switches;
  std::sort(t.begin(), t.end());
  c.t = std::move(t);
  return c;
}
}  // namespace

Measurement measure(const std::function<void()>& run, const MeasureOptions& opt) {
  if (opt.pause_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(opt.pause_s));
  double first = 0;
  arch::Stopwatch warm;
  // (warmup 0 and warmup_s 0: none; the repeats then default to min_repeats)
  for (int i = 0; i < opt.warmup || warm.seconds() < opt.warmup_s; ++i) {
    arch::Stopwatch w;
    run();
    first = w.seconds();
  }
  int repeats = opt.min_repeats;
  if (first > 0) repeats = static_cast<int>(std::clamp(opt.target_seconds / first, double(opt.min_repeats), double(opt.max_repeats)));
  const TimedCalls c = time_calls(run, repeats, {});
  const std::vector<double>& t = c.t;
  auto pct = [&](double q) { return t[static_cast<std::size_t>(std::lround(q * static_cast<double>(t.size() - 1)))]; };
  Measurement m;
  m.median_s = pct(0.5);
  m.min_s = t.front();
  m.max_s = t.back();
  m.spread = m.median_s > 0 ? (pct(0.75) - pct(0.25)) / m.median_s : 0;
  m.repeats = repeats;
  m.preemptions = c.preemptions;
  m.cores_used = c.block_s > 0 ? c.cpu_s / c.block_s : 0;
  return m;
}

Measurement measure_slow_call(const std::function<void()>& run, double first_s, const MeasureOptions& opt) {
  const int more = first_s > 0 ? static_cast<int>(std::clamp(opt.target_seconds / first_s, 1.0, 2.0)) : 2;
  const TimedCalls c = time_calls(run, more, {first_s});
  const std::vector<double>& t = c.t;
  Measurement m;
  m.median_s = median_of(t);
  m.min_s = t.front();
  m.max_s = t.back();
  m.spread = m.median_s > 0 ? (m.max_s - m.min_s) / m.median_s : 0;  // (few calls: the range)
  m.repeats = static_cast<int>(t.size());
  m.preemptions = c.preemptions;
  m.cores_used = c.block_s > 0 ? c.cpu_s / c.block_s : 0;
  return m;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double relative_iqr(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) { return v[static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)))]; };
  const double med = median_of(v);
  return med > 0 ? (pct(0.75) - pct(0.25)) / med : 0;
}

std::vector<std::vector<double>> interleaved_round_medians(const std::vector<std::function<void()>>& runs,
                                                           const MeasureOptions& opt, int min_rounds, int max_rounds,
                                                           const std::function<bool()>& more) {
  std::vector<std::vector<double>> medians;
  for (const auto& r : interleaved_rounds(runs, opt, min_rounds, max_rounds, more)) {
    medians.emplace_back();
    for (const auto& m : r) medians.back().push_back(m.median_s);
  }
  return medians;
}

MeasureOptions comparison_measure_options() {
  MeasureOptions mo;
  mo.target_seconds = 0.06;
  mo.min_repeats = 5;
  mo.pause_s = 0.1;
  mo.warmup = 3;
  mo.warmup_s = 0.02;
  return mo;
}

std::vector<std::vector<Measurement>> interleaved_rounds(const std::vector<std::function<void()>>& runs, const MeasureOptions& opt,
                                                         int min_rounds, int max_rounds, const std::function<bool()>& more) {
  const std::size_t n = runs.size();
  std::vector<std::vector<Measurement>> rounds(n);
  for (int round = 0; round < max_rounds && (round < min_rounds || (more && more())); ++round)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(round)) % n;
      rounds[i].push_back(measure(runs[i], opt));
    }
  return rounds;
}

RoundSummary summarize_rounds(const std::vector<Measurement>& rounds) {
  RoundSummary s;
  if (rounds.empty()) {
    s.median_s = std::nan("");
    return s;
  }
  double top = 0;
  for (const auto& m : rounds) top = std::max(top, m.cores_used);
  std::vector<double> cores;
  for (const auto& m : rounds)
    if (m.cores_used >= 0.8 * top) s.medians.push_back(m.median_s), cores.push_back(m.cores_used);
  if (s.medians.size() < 3 || 3 * s.medians.size() < rounds.size()) {
    s.medians.clear();
    cores.clear();
    for (const auto& m : rounds) s.medians.push_back(m.median_s), cores.push_back(m.cores_used);
  }
  s.cores_used = median_of(cores);
  s.rounds = static_cast<int>(s.medians.size());
  s.contended = static_cast<int>(rounds.size()) - s.rounds;
  s.median_s = median_of(s.medians);
  s.spread = relative_iqr(s.medians);
  s.min_s = *std::min_element(s.medians.begin(), s.medians.end());
  s.max_s = *std::max_element(s.medians.begin(), s.medians.end());
  return s;
}

bool had_its_cores(double cores_used, int threads) { return cores_used >= 0.8 * std::max(1, threads); }

bool had_its_cores(const RoundSummary& s, int threads) { return had_its_cores(s.cores_used, threads); }

}  // namespace taihu::autotune
