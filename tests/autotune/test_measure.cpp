// measure(): warm-up by count and by time (or none), repeats bounded by the time target, median
// of the timed runs; measure_slow_call: the first call counted, 1-2 more (a fake kernel that sleeps:
// bounds use only that sleeps never end early).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "taihu/arch/timer.hpp"
#include "taihu/autotune/measure.hpp"

namespace ta = taihu::autotune;

namespace {
void sleep_ms(double ms) { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms)); }
}  // namespace

TEST(AutotuneMeasure, WarmupByCountAndByTime) {
  int calls = 0;
  ta::MeasureOptions o;
  o.warmup = 2;
  o.min_repeats = 3;
  o.max_repeats = 3;
  ta::Measurement m = ta::measure([&] { ++calls, sleep_ms(1); }, o);
  EXPECT_EQ(m.repeats, 3);
  EXPECT_EQ(calls, 2 + 3);
  // warmup_s: untimed calls continue until 20 ms have passed since the first one began
  // (sleeps only ever overshoot, so this bound holds on a loaded machine too)
  std::vector<std::chrono::steady_clock::time_point> starts;
  o.warmup_s = 0.02;
  m = ta::measure([&] { starts.push_back(std::chrono::steady_clock::now()), sleep_ms(1); }, o);
  EXPECT_EQ(m.repeats, 3);
  const std::size_t warm = starts.size() - 3;
  EXPECT_GE(warm, 2u);
  EXPECT_GE(std::chrono::duration<double>(starts[warm] - starts[0]).count(), 0.0195);  // (less the clock reads before the first call)
}

TEST(AutotuneMeasure, NoWarmupWhenAsked) {
  // warmup 0 (a kernel that just ran): every call is timed, min_repeats of them.
  int calls = 0;
  ta::MeasureOptions o;
  o.warmup = 0;
  o.min_repeats = 3;
  o.max_repeats = 3;
  const ta::Measurement m = ta::measure([&] { ++calls, sleep_ms(1); }, o);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(m.repeats, 3);
}

TEST(AutotuneMeasure, SlowCallCountsTheFirstAndTimesOneOrTwoMore) {
  // A 0.2 s first call with a 0.3 s target: 1 more call (2 timed in all); a 0.1 s one
  // would need 3 for the target: 2 more, at most. The first call is one of the samples.
  int calls = 0;
  ta::MeasureOptions o;
  o.target_seconds = 0.3;
  ta::Measurement m = ta::measure_slow_call([&] { ++calls, sleep_ms(2); }, 0.2, o);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(m.repeats, 2);
  EXPECT_DOUBLE_EQ(m.max_s, 0.2);
  EXPECT_GE(m.min_s, 0.002);
  EXPECT_GT(m.median_s, m.min_s);  // the mean of the two
  EXPECT_LT(m.median_s, m.max_s);
  calls = 0;
  m = ta::measure_slow_call([&] { ++calls, sleep_ms(2); }, 0.1, o);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(m.repeats, 3);
  EXPECT_GE(m.median_s, 0.002);
  EXPECT_LT(m.median_s, 0.1);  // the middle of three: one of the two timed here
}

TEST(AutotuneMeasure, MedianOfTimedRunsAndRepeatsFromTarget) {
  // Every 4th timed call is very slow (40 ms): the median ignores it.
  int calls = 0;
  ta::MeasureOptions o;
  o.warmup = 1;
  o.min_repeats = 8;
  o.max_repeats = 8;
  ta::Measurement m = ta::measure([&] { sleep_ms(++calls % 4 == 0 ? 40 : 2); }, o);
  EXPECT_EQ(m.repeats, 8);
  EXPECT_GE(m.median_s, 0.002);
  EXPECT_LT(m.median_s, 0.030);
  EXPECT_GE(m.min_s, 0.002);
  EXPECT_LE(m.min_s, m.median_s);
  // repeats = target / (last warm-up run), clamped to [min, max]
  o.min_repeats = 2;
  o.max_repeats = 50;
  o.target_seconds = 0.01;
  m = ta::measure([&] { sleep_ms(2); }, o);
  EXPECT_GE(m.repeats, 2);
  EXPECT_LE(m.repeats, 5);
}

// median_of (how interleaved rounds are summarized) against a brute-force definition:
// a value with at most half the others below it and at most half above it (odd count),
// or the mean of the two middle order statistics (even count); order must not matter.
TEST(AutotuneMeasure, MedianOfRoundsMatchesOrderStatistics) {
  EXPECT_TRUE(std::isnan(ta::median_of({})));
  std::uint64_t state = 12345;
  auto next = [&] { return static_cast<double>((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 40) * 1e-6; };
  for (int n = 1; n <= 15; ++n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(next());
    const double m = ta::median_of(v);
    int below = 0, above = 0;
    for (double x : v) {
      below += x < m;
      above += x > m;
    }
    EXPECT_LE(below, n / 2) << n;
    EXPECT_LE(above, n / 2) << n;
    if (n % 2 == 0) {  // no element equals the mean of the two middle ones (distinct draws)
      double lo = -1, hi = 1e300;
      for (double x : v) {
        if (x < m) lo = std::max(lo, x);
        if (x > m) hi = std::min(hi, x);
      }
      EXPECT_DOUBLE_EQ(m, 0.5 * (lo + hi)) << n;
    }
    std::vector<double> r(v.rbegin(), v.rend());
    EXPECT_EQ(ta::median_of(r), m);
  }
}

// interleaved_round_medians: at least min_rounds, then more while `more` says so, at most
// max_rounds; round r starts at run r (mod n); one round median per run and round.
TEST(AutotuneMeasure, InterleavedRoundsRotateTheirStartAndStopAsAsked) {
  std::vector<int> order;  // which run each call was
  std::vector<std::function<void()>> runs;
  for (int i = 0; i < 3; ++i) runs.push_back([&order, i] { order.push_back(i); });
  ta::MeasureOptions o;
  o.warmup = 1;
  o.min_repeats = 1;
  o.max_repeats = 1;
  int asked = 0;
  const auto rounds = ta::interleaved_round_medians(runs, o, 2, 5, [&] { return ++asked <= 1; });
  ASSERT_EQ(rounds.size(), 3u);
  for (const auto& r : rounds) {
    ASSERT_EQ(r.size(), 3u);  // 2 required rounds + 1 that `more` allowed
    for (double t : r) EXPECT_GE(t, 0.0);
  }
  EXPECT_EQ(asked, 2);  // asked after the 2nd and 3rd rounds only
  // each measure() call runs its run twice (1 warm-up, 1 timed)
  const std::vector<int> expected = {0, 0, 1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 2, 2, 0, 0, 1, 1};
  EXPECT_EQ(order, expected);
  // max_rounds bounds it even when `more` always says yes
  order.clear();
  EXPECT_EQ(ta::interleaved_round_medians(runs, o, 1, 4, [] { return true; })[0].size(), 4u);
}

// summarize_rounds leaves out rounds whose cores_used is below 80% of the best round's
// (another process held a core), unless fewer than 3 or a third would be left.
TEST(AutotuneMeasure, ContendedRoundsAreLeftOut) {
  auto round = [](double median, double cores) {
    ta::Measurement m;
    m.median_s = median;
    m.cores_used = cores;
    return m;
  };
  // 5 clean rounds near 1.0 at ~2 cores, 4 contended near 2.0 at ~1 core: the median of
  // all 9 would be 1.1; of the clean ones it is 1.0
  std::vector<ta::Measurement> r = {round(1.0, 1.95), round(2.0, 1.0), round(0.98, 2.0), round(2.1, 1.1), round(1.02, 1.9),
                                    round(1.9, 0.9),  round(1.1, 1.85), round(2.0, 1.05), round(0.99, 1.97)};
  ta::RoundSummary s = ta::summarize_rounds(r);
  EXPECT_EQ(s.rounds, 5);
  EXPECT_EQ(s.contended, 4);
  EXPECT_DOUBLE_EQ(s.median_s, 1.0);
  EXPECT_DOUBLE_EQ(s.min_s, 0.98);
  EXPECT_DOUBLE_EQ(s.max_s, 1.1);
  EXPECT_DOUBLE_EQ(s.spread, ta::relative_iqr({1.0, 0.98, 1.02, 1.1, 0.99}));
  EXPECT_DOUBLE_EQ(s.cores_used, 1.95);  // the median of the counted rounds' cores
  EXPECT_TRUE(ta::had_its_cores(s, 2));
  // only 2 clean rounds: every round counts
  r = {round(1.0, 2.0), round(2.0, 1.0), round(2.1, 1.0), round(1.0, 2.0), round(1.9, 1.0)};
  s = ta::summarize_rounds(r);
  EXPECT_EQ(s.rounds, 5);
  EXPECT_EQ(s.contended, 0);
  EXPECT_DOUBLE_EQ(s.median_s, 1.9);
  EXPECT_DOUBLE_EQ(s.cores_used, 1.0);
  EXPECT_FALSE(ta::had_its_cores(s, 2));  // a 2-thread kernel on ~1 core: not a reproduction
  EXPECT_TRUE(ta::had_its_cores(s, 1));
}

// Every round on ~1 core (another process held the second one throughout): none is left
// out, as none is worse than the others, and had_its_cores says the timing did not have
// the 2 cores the kernel was tuned for (the res2 1x1 case: 0.51 ms searched, 1.10 ms here).
TEST(AutotuneMeasure, AKernelThatNeverHadItsCoresIsFlagged) {
  std::vector<ta::Measurement> r(6);
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i].median_s = 1.1e-3 + 1e-5 * static_cast<double>(i);
    r[i].cores_used = 1.0 + 0.02 * static_cast<double>(i % 3);
  }
  const ta::RoundSummary s = ta::summarize_rounds(r);
  EXPECT_EQ(s.contended, 0);
  EXPECT_NEAR(s.cores_used, 1.02, 1e-12);
  EXPECT_FALSE(ta::had_its_cores(s, 2));
  EXPECT_TRUE(ta::had_its_cores(s, 1));
  for (auto& m : r) m.cores_used = 1.9;
  EXPECT_TRUE(ta::had_its_cores(ta::summarize_rounds(r), 2));
}

// cores_used is CPU time over wall time: up to 1 for a busy loop on one thread, ~0 for a sleep.
TEST(AutotuneMeasure, CoresUsedIsCpuOverWallTime) {
  ta::MeasureOptions o;
  o.min_repeats = 5;
  o.max_repeats = 5;
  volatile double sink = 0;
  const ta::Measurement busy = ta::measure([&] {
    taihu::arch::Stopwatch w;
    while (w.seconds() < 0.004) sink = sink + 1;
  }, o);
  const ta::Measurement idle = ta::measure([] { std::this_thread::sleep_for(std::chrono::milliseconds(4)); }, o);
  EXPECT_GT(busy.cores_used, 2 * idle.cores_used);  // (a loaded host takes much of the busy loop's core away)
  EXPECT_GT(busy.cores_used, 0.0);
  EXPECT_LT(busy.cores_used, 1.2);
  EXPECT_LT(idle.cores_used, 0.2);
}
