// dnn's threading helpers (dnn/src/core/parallel.hpp): every index runs exactly once
// on 1 and 2 threads, and one thread runs the body in place, outside any OpenMP region
// (the reason the helpers exist: libgomp's per-call team and work-share allocations).
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <vector>

#include "core/parallel.hpp"

namespace {

using taihu::dnn::index_t;
namespace ops = taihu::dnn::ops;

// Visits of each index, counted atomically.
struct Visits {
  explicit Visits(index_t n) : count(static_cast<std::size_t>(n)) {}
  void hit(index_t i) { count[static_cast<std::size_t>(i)].fetch_add(1); }
  bool each_once() const {
    for (const auto& c : count)
      if (c.load() != 1) return false;
    return true;
  }
  std::vector<std::atomic<int>> count;
};

TEST(DnnParallel, OneThreadRunsInPlaceWithoutARegion) {
  int calls = 0, level = -1;
  ops::run_team(1, [&] {
    ++calls;
    level = omp_get_level();
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(level, 0);
  std::vector<index_t> order;
  ops::parallel_for_dynamic(1, 37, [&](index_t i) {
    EXPECT_EQ(omp_get_level(), 0);
    order.push_back(i);
  });
  ASSERT_EQ(order.size(), 37u);
  for (index_t i = 0; i < 37; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(DnnParallel, EveryIndexOnceOnOneAndTwoThreads) {
  for (int nt : {1, 2}) {
    for (index_t n : {0, 1, 7, 100}) {
      Visits a(n), b(n), c(n), d(n);
      std::atomic<int> team_size{0};
      ops::run_team(nt, [&] {
        if (omp_get_thread_num() == 0) team_size = omp_get_num_threads();
        ops::for_dynamic(n, [&](index_t i) { a.hit(i); });
        ops::for_dynamic_nowait(n, [&](index_t i) { b.hit(i); }, 3);
      });
      ops::parallel_for_dynamic(nt, n, [&](index_t i) { c.hit(i); });
      ops::parallel_for_static(nt, n, [&](index_t i) { d.hit(i); });
      EXPECT_EQ(team_size.load(), nt) << "threads " << nt;
      EXPECT_TRUE(a.each_once() && b.each_once() && c.each_once() && d.each_once()) << "threads " << nt << " n " << n;
    }
  }
}

TEST(DnnParallel, OneThreadInsideACallersTeamSeesATeamOfOne) {
  // A one-thread call from inside a caller's 2-thread region (an image loop split among
  // threads) must not see the caller's thread numbers: its scratch is sized for one.
  std::atomic<int> wrong{0}, calls{0}, team{0};
  Visits v(2 * 9);
#pragma omp parallel num_threads(2)
  {
    const int caller = omp_get_thread_num();
    if (caller == 0) team = omp_get_num_threads();
    ops::run_team(1, [&] {
      calls.fetch_add(1);
      if (omp_get_thread_num() != 0 || omp_get_num_threads() != 1) wrong.fetch_add(1);
      ops::for_dynamic(9, [&](index_t i) { v.hit(caller * 9 + i); });
    });
    ops::parallel_for_dynamic(1, 3, [&](index_t) {
      if (omp_get_thread_num() != 0) wrong.fetch_add(1);
    });
    ops::parallel_for_static(1, 3, [&](index_t) {
      if (omp_get_thread_num() != 0) wrong.fetch_add(1);
    });
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(calls.load(), team.load());
  for (index_t i = 0; i < 9 * team.load(); ++i) EXPECT_EQ(v.count[static_cast<std::size_t>(i)].load(), 1) << i;
}

TEST(DnnParallel, ForDynamicEndsWithABarrier) {
  // Thread 0 sleeps in its items; after for_dynamic every item of every thread is done.
  std::atomic<int> done{0};
  std::atomic<bool> all_seen{true};
  ops::run_team(2, [&] {
    ops::for_dynamic(8, [&](index_t) {
      volatile double s = 0;
      for (int k = 0; k < 20000; ++k) s = s + k;
      done.fetch_add(1);
    });
    if (done.load() != 8) all_seen = false;
  });
  EXPECT_TRUE(all_seen.load());
}

}  // namespace
