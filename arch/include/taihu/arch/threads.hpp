// The one owner of taihu's thread count. In order of precedence:
//   set_num_threads_local(n)  this thread only (mkl_set_num_threads_local's rule)
//   set_num_threads(n)        the process (taihu_set_num_threads, openblas_set_num_threads...)
//   TAIHU_NUM_THREADS=n       the environment; a bad value is reported once on stderr
//                             and ignored (environment.hpp; tools reject it instead)
//   the default               the physical cores, capped by the calling thread's OpenMP
//                             nthreads-var when lowered (OMP_NUM_THREADS,
//                             omp_set_num_threads, threadpoolctl's threadpool_limits)
// Inside a caller's parallel region (OpenMP or, via set_caller_threads, any other
// threading) taihu runs single-threaded so the two never oversubscribe the cores.
// Before a fork() the forking thread's OpenMP pool is released, so the child can run
// taihu multi-threaded at once (see threads.cpp).
#pragma once
#include <sched.h>

namespace taihu::arch {

// Configured thread count for a call from this thread (the precedence above); never
// throws.
int num_threads();

// Override for this process (n >= 1); 0 restores the default. Throws taihu::Error
// for n < 0.
void set_num_threads(int n);

// Override for the calling thread only (n >= 1); 0 removes it. Returns the previous
// thread-local value (0: none was set). Throws taihu::Error for n < 0.
int set_num_threads_local(int n);

// Threads a taihu call should use right now: 1 inside an enclosing OpenMP parallel
// region or in a fork() child whose parent's OpenMP pool could not be released,
// otherwise num_threads().
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
