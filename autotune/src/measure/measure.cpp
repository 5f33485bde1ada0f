// Warm-up + repeats + median (see measure.hpp).
#include "taihu/autotune/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "taihu/arch/timer.hpp"

namespace taihu::autotune {

Measurement measure(const std::function<void()>& run, const MeasureOptions& opt) {
  if (opt.pause_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(opt.pause_s));
  double first = 0;
  arch::Stopwatch warm;
  for (int i = 0; i < std::max(1, opt.warmup) || warm.seconds() < opt.warmup_s; ++i) {
    arch::Stopwatch w;
    run();
    first = w.seconds();
  }
  int repeats = opt.min_repeats;
  if (first > 0) repeats = static_cast<int>(std::clamp(opt.target_seconds / first, double(opt.min_repeats), double(opt.max_repeats)));
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    arch::Stopwatch w;
    run();
    t.push_back(w.seconds());
  }
  std::sort(t.begin(), t.end());
  auto pct = [&](double q) { return t[static_cast<std::size_t>(std::lround(q * static_cast<double>(t.size() - 1)))]; };
  Measurement m;
  m.median_s = pct(0.5);
  m.min_s = t.front();
  m.spread = m.median_s > 0 ? (pct(0.75) - pct(0.25)) / m.median_s : 0;
  m.repeats = repeats;
  return m;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::vector<std::vector<double>> interleaved_round_medians(const std::vector<std::function<void()>>& runs,
                                                           const MeasureOptions& opt, int min_rounds, int max_rounds,
                                                           const std::function<bool()>& more) {
  const std::size_t n = runs.size();
  std::vector<std::vector<double>> rounds(n);
  for (int round = 0; round < max_rounds && (round < min_rounds || (more && more())); ++round)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(round)) % n;
      rounds[i].push_back(measure(runs[i], opt).median_s);
    }
  return rounds;
}

}  // namespace taihu::autotune
