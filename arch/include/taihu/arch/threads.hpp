// The one owner of taihu's thread count.
//   TAIHU_NUM_THREADS=n  use n threads (default: the physical cores of the machine)
// Inside a caller's parallel region (OpenMP or, via set_caller_threads, any other
// threading) taihu runs single-threaded so the two never oversubscribe the cores.
#pragma once
#include <sched.h>

namespace taihu::arch {

// Configured thread count: set_num_threads() if called, else TAIHU_NUM_THREADS, else
// physical cores. Throws taihu::Error if TAIHU_NUM_THREADS is not a positive integer.
int num_threads();

// Override for this process (n >= 1); 0 restores the default.
void set_num_threads(int n);

// Threads a taihu call should use right now: 1 inside an enclosing OpenMP parallel
// region, otherwise num_threads().
int threads_for_call();

// Pins the calling thread to the index-th CPU of the process's allowed set for the
// object's lifetime, then restores its previous affinity. Used by measurements.
class ThreadPin {
 public:
  explicit ThreadPin(int index);
  ~ThreadPin();
  ThreadPin(const ThreadPin&) = delete;
  ThreadPin& operator=(const ThreadPin&) = delete;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t previous_;
  bool pinned_ = false;
};

}  // namespace taihu::arch
