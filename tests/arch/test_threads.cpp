// Thread-count ownership and pinning.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <cstdlib>
#include <thread>

#include "taihu/arch/environment.hpp"
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

TEST(Threads, LocalOverrideIsPerThread) {
  taihu::arch::set_num_threads(3);
  EXPECT_EQ(taihu::arch::set_num_threads_local(2), 0);
  EXPECT_EQ(taihu::arch::num_threads(), 2);
  int other = 0;
  std::thread([&] { other = taihu::arch::num_threads(); }).join();
  EXPECT_EQ(other, 3);
  EXPECT_EQ(taihu::arch::set_num_threads_local(0), 2);
  EXPECT_EQ(taihu::arch::num_threads(), 3);
  EXPECT_THROW(taihu::arch::set_num_threads_local(-1), taihu::Error);
  taihu::arch::set_num_threads(0);
}

// threadpoolctl's threadpool_limits(1) and OMP_NUM_THREADS reach taihu's default.
TEST(Threads, DefaultIsCappedByTheOpenMpThreadCount) {
  if (std::getenv("TAIHU_NUM_THREADS") != nullptr) GTEST_SKIP() << "TAIHU_NUM_THREADS is set";
  const int icv = omp_get_max_threads();
  omp_set_num_threads(1);
  EXPECT_EQ(taihu::arch::num_threads(), 1);
  taihu::arch::set_num_threads(2);  // an explicit count is not capped
  EXPECT_EQ(taihu::arch::num_threads(), 2);
  taihu::arch::set_num_threads(0);
  omp_set_num_threads(icv);
  EXPECT_GE(taihu::arch::num_threads(), 1);
}

// Tools validate strictly (exit status 2 on a bad value); the library only warns.
TEST(Environment, StrictCheckNamesTheBadValue) {
  const char* saved = std::getenv("TAIHU_NUM_THREADS");
  const std::string keep = saved ? saved : "";
  setenv("TAIHU_NUM_THREADS", "-3", 1);
  try {
    taihu::arch::check_environment();
    ADD_FAILURE() << "no error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("TAIHU_NUM_THREADS='-3' must be a positive integer"),
              std::string::npos)
        << e.what();
  }
  setenv("TAIHU_NUM_THREADS", "2", 1);
  EXPECT_NO_THROW(taihu::arch::check_environment());
  if (saved) setenv("TAIHU_NUM_THREADS", keep.c_str(), 1);
  else unsetenv("TAIHU_NUM_THREADS");
}

// A word-valued variable: the library read takes the value once and warns once about a
// bad one; the strict check names the variable, the value and the words.
TEST(Environment, ChoiceReadsAWordOnceAndChecksStrictly) {
  using taihu::arch::EnvironmentChoice;
  // Static: the registry keeps their checks for the rest of the process.
  static const EnvironmentChoice good("TAIHU_TEST_CHOICE_GOOD", {"rows", "columns", "depth"}, "the model");
  static const EnvironmentChoice bad("TAIHU_TEST_CHOICE_BAD", {"a", "b"}, "the model");
  setenv("TAIHU_TEST_CHOICE_GOOD", "columns", 1);
  EXPECT_EQ(good.index(), 1);
  setenv("TAIHU_TEST_CHOICE_GOOD", "depth", 1);
  EXPECT_EQ(good.index(), 1) << "read once";
  EXPECT_EQ(good.problem(), "");

  setenv("TAIHU_TEST_CHOICE_BAD", "c", 1);
  EXPECT_EQ(bad.problem(), "TAIHU_TEST_CHOICE_BAD='c': use a or b");
  testing::internal::CaptureStderr();
  EXPECT_EQ(bad.index(), -1);
  EXPECT_EQ(bad.index(), -1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "taihu: warning: TAIHU_TEST_CHOICE_BAD='c': use a or b; using the model\n");
  try {
    taihu::arch::check_environment();
    ADD_FAILURE() << "no error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("TAIHU_TEST_CHOICE_BAD='c'"), std::string::npos) << e.what();
  }
  setenv("TAIHU_TEST_CHOICE_BAD", "", 1);
  EXPECT_EQ(bad.problem(), "");
  EXPECT_NO_THROW(taihu::arch::check_environment());
  unsetenv("TAIHU_TEST_CHOICE_GOOD");
  unsetenv("TAIHU_TEST_CHOICE_BAD");
}

}  // namespace
