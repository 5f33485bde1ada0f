// measure(): warm-up by count and by time, repeats bounded by the time target, median
// and spread of the timed runs (a fake kernel whose durations are known).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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
  // warmup_s: untimed calls continue until 20 ms have passed (>= 20 calls of 1 ms at most,
  // more than the 2 asked for by count)
  calls = 0;
  o.warmup_s = 0.02;
  m = ta::measure([&] { ++calls, sleep_ms(1); }, o);
  EXPECT_EQ(m.repeats, 3);
  EXPECT_GE(calls - 3, 5);
  EXPECT_LE(calls - 3, 21);
}

TEST(AutotuneMeasure, MedianOfTimedRunsAndRepeatsFromTarget) {
  // Every 4th timed call is slow: the median ignores it, the spread stays small.
  int calls = 0;
  ta::MeasureOptions o;
  o.warmup = 1;
  o.min_repeats = 8;
  o.max_repeats = 8;
  ta::Measurement m = ta::measure([&] { sleep_ms(++calls % 4 == 0 ? 8 : 2); }, o);
  EXPECT_EQ(m.repeats, 8);
  EXPECT_GE(m.median_s, 0.002);
  EXPECT_LT(m.median_s, 0.006);
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
