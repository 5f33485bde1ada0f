// The one helper every taihu benchmark uses, so every row carries the same counters:
//   gflops | gbps | gpts  taihu's rate
//   pct_peak              that rate as % of the ceiling measured in this same process
//   vs_anchor             anchor time / taihu time (> 1: taihu is faster)
//   anchor_<unit>         the anchor's rate
// taihu and the anchor run interleaved inside the benchmark loop, so host noise hits
// both alike; the reported iteration time is taihu's (register with ->UseManualTime()).
// Each library's time is the median of its calls; TAIHU_BENCH_STAT=best takes each
// one's fastest call instead, timed by the thread's CPU clock on 1-thread rows (time
// the host gives to other tenants does not count): the same statistic as the measured
// ceilings, which are best-of runs, so pct_peak compares like with like.
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <vector>

namespace taihu::bench {

enum class Ceiling { peak_sp, peak_dp, stream };

struct Work {
  double flops = 0;   // floating-point operations per call
  double bytes = 0;   // compulsory memory traffic per call
  double points = 0;  // grid points updated per call (stencils)
};

// The ceiling for `threads` threads, measured once per process (pinned, best of runs).
double ceiling(Ceiling kind, int threads);

// Runs taihu() and anchor() alternately each iteration and sets the counters.
void compare(benchmark::State& state, const Work& work, Ceiling kind, int threads,
             const std::function<void()>& taihu, const std::function<void()>& anchor);

// Several anchors (e.g. OpenBLAS and BLIS): each gets a counter vs_<name>; vs_anchor
// and anchor_<unit> refer to the fastest of them.
// A peer that runs in another process (oneDNN 3 in its server) times its own call and
// returns the seconds through `timed` instead: this process's clock would count the
// round trip to it. Exactly one of run and timed is set.
struct Anchor {
  std::string name;
  std::function<void()> run;
  std::function<double()> timed = nullptr;
};
void compare(benchmark::State& state, const Work& work, Ceiling kind, int threads,
             const std::function<void()>& taihu, const std::vector<Anchor>& anchors);

// The machine every figure belongs to, in one line: CPU brand string, vendor, family and
// model, and the ISA level dispatch picked, e.g. "Intel(R) Xeon(R) Processor
// (GenuineIntel family 6 model 167), dispatch avx512". Every Google Benchmark binary
// linking this library prints it as the context line `machine` (added at start-up);
// the table-printing benchmarks print it themselves.
std::string machine_description();

// For benchmarks that time themselves (e.g. across MPI ranks): seconds per call.
void report(benchmark::State& state, const Work& work, Ceiling kind, int threads,
            double taihu_seconds, double anchor_seconds);

}  // namespace taihu::bench
