// Monotonic wall-clock time, and the calling thread's CPU time, for measurements.
#pragma once
#include <time.h>

#include <chrono>

namespace taihu::arch {

// Seconds since an arbitrary fixed point; monotonic, sub-microsecond resolution.
inline double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// Seconds of CPU time the calling thread has used: on a shared host, time the
// scheduler (or the hypervisor, where steal time is accounted) gives to others does
// not count. Meaningful only for work that runs entirely on the calling thread.
inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

class Stopwatch {
 public:
  Stopwatch() : start_(now_seconds()) {}
  void restart() { start_ = now_seconds(); }
  double seconds() const { return now_seconds() - start_; }

 private:
  double start_;
};

}  // namespace taihu::arch
