// Counters and interleaved timing shared by all bench_<module> binaries.
#include "bench_common.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/roofline.hpp"
#include "taihu/arch/timer.hpp"

namespace taihu::bench {

double ceiling(Ceiling kind, int threads) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, double> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(static_cast<int>(kind), threads);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  double value = 0;
  switch (kind) {
    case Ceiling::peak_sp: value = arch::measure_peak_gflops(arch::Precision::f32, threads); break;
    case Ceiling::peak_dp: value = arch::measure_peak_gflops(arch::Precision::f64, threads); break;
    case Ceiling::stream: value = arch::measure_stream(threads).triad_gbps; break;
  }
  cache.emplace(key, value);
  return value;
}

std::string machine_description() {
  const arch::CpuFeatures& cpu = arch::cpu_features();
  return cpu.model_name + " (" + cpu.vendor + " family " + std::to_string(cpu.family) + " model " +
         std::to_string(cpu.model) + "), dispatch " + arch::isa_name(arch::active_isa());
}

namespace {
// Google Benchmark keeps custom context in a map it allocates on first use, so adding
// the line from a static initializer is safe; it is printed with the run's header.
[[maybe_unused]] const bool machine_context_added = [] {
  benchmark::AddCustomContext("machine", machine_description());
  return true;
}();

// TAIHU_BENCH_STAT=best: fastest call (and thread CPU time at 1 thread); else median.
bool best_of_calls() {
  static const bool best = [] {
    const char* v = std::getenv("TAIHU_BENCH_STAT");
    return v != nullptr && std::string(v) == "best";
  }();
  return best;
}

double summary(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return best_of_calls() ? v.front() : v[v.size() / 2];
}
}  // namespace

void report(benchmark::State& state, const Work& work, Ceiling kind, int threads,
            double taihu_seconds, double anchor_seconds) {
  const double peak = ceiling(kind, threads);
  double rate = 0, anchor_rate = 0;
  const char* unit = "gflops";
  if (work.points > 0) {
    unit = "gpts";
    rate = work.points / taihu_seconds / 1e9;
    anchor_rate = work.points / anchor_seconds / 1e9;
  } else if (work.flops > 0) {
    rate = work.flops / taihu_seconds / 1e9;
    anchor_rate = work.flops / anchor_seconds / 1e9;
  } else {
    unit = "gbps";
    rate = work.bytes / taihu_seconds / 1e9;
    anchor_rate = work.bytes / anchor_seconds / 1e9;
  }
  state.counters[unit] = rate;
  state.counters[std::string("anchor_") + unit] = anchor_rate;
  // pct_peak: FLOP/s against peak, or effective bandwidth against STREAM.
  const double achieved = kind == Ceiling::stream ? work.bytes / taihu_seconds / 1e9
                                                  : work.flops / taihu_seconds / 1e9;
  state.counters["pct_peak"] = peak > 0 ? 100.0 * achieved / peak : 0.0;
  state.counters["vs_anchor"] = taihu_seconds > 0 ? anchor_seconds / taihu_seconds : 0.0;
}

void compare(benchmark::State& state, const Work& work, Ceiling kind, int threads,
             const std::function<void()>& taihu, const std::vector<Anchor>& anchors) {
  ceiling(kind, threads);  // measure before timing anything
  taihu();                 // warm-up: page faults, packing buffers, dispatch
  for (const auto& a : anchors) a.timed ? static_cast<void>(a.timed()) : a.run();
  const auto clock = best_of_calls() && threads == 1 ? &arch::thread_cpu_seconds : &arch::now_seconds;
  std::vector<double> taihu_times;
  std::vector<std::vector<double>> anchor_times(anchors.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < anchors.size(); ++i) {
      if (anchors[i].timed) {
        anchor_times[i].push_back(anchors[i].timed());
        continue;
      }
      const double t0 = clock();
      anchors[i].run();
      anchor_times[i].push_back(clock() - t0);
    }
    const double t0 = clock();
    taihu();
    const double taihu_s = clock() - t0;
    taihu_times.push_back(taihu_s);
    state.SetIterationTime(taihu_s);
  }
  const double taihu_time = summary(taihu_times);
  double best_anchor = 0;
  for (std::size_t i = 0; i < anchors.size(); ++i) {
    const double t = summary(anchor_times[i]);
    state.counters["vs_" + anchors[i].name] = t / taihu_time;
    if (best_anchor == 0 || t < best_anchor) best_anchor = t;
  }
  report(state, work, kind, threads, taihu_time, best_anchor);
}

void compare(benchmark::State& state, const Work& work, Ceiling kind, int threads,
             const std::function<void()>& taihu, const std::function<void()>& anchor) {
  compare(state, work, kind, threads, taihu, std::vector<Anchor>{{"anchor", anchor}});
}

}  // namespace taihu::bench
