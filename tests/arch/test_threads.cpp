// Thread-count ownership and pinning.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/topology.hpp"

namespace {

TEST(Threads, OverrideAndRestore) {
  const int original = taihu::arch::num_threads();
  EXPECT_GE(original, 1);
  taihu::arch::set_num_threads(3);
  EXPECT_EQ(taihu::arch::num_threads(), 3);
  EXPECT_EQ(taihu::arch::threads_for_call(), 3);
  taihu::arch::set_num_threads(0);
  EXPECT_EQ(taihu::arch::num_threads(), original);
  EXPECT_THROW(taihu::arch::set_num_threads(-1), taihu::Error);
}

TEST(Threads, NestedCallsRunSingleThreaded) {
  taihu::arch::set_num_threads(4);
  int inside = -1;
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    inside = taihu::arch::threads_for_call();
  }
  EXPECT_EQ(inside, 1);
  taihu::arch::set_num_threads(0);
}

TEST(Threads, PinRestoresTheMask) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  {
    taihu::arch::ThreadPin pin(0);
    cpu_set_t during;
    ASSERT_EQ(sched_getaffinity(0, sizeof during, &during), 0);
    if (pin.pinned()) {
      EXPECT_EQ(CPU_COUNT(&during), 1);
    }
  }
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
