// dnn's threading helpers, one place for how its loops meet OpenMP.
//
// One thread never enters the OpenMP runtime. libgomp allocates a team for a
// `parallel ... if (0)` region and a work share for a `schedule(dynamic)` loop even
// on one thread: 4-9 us a call with the caches cold (a 96 MiB sweep before each call,
// Zen 4), as much as a whole batch-1 LeNet layer. oneDNN's parallel() calls its body
// directly for one thread for the same reason.
//
// parallel_for: splits [0, n) into one contiguous chunk per thread (chunk starts
// aligned to 16 elements so vector loops keep their alignment), runs f(begin, end) on
// each under OpenMP with taihu::arch::threads_for_call() threads; serial when the work
// is smaller than min_chunk per thread. f must not throw.
// parallel_tasks: one task per index, statically split the same way.
// run_team(nt, body): body() on a team of nt threads (OpenMP worksharing and barriers
// inside it bind to that team, omp_get_thread_num() / omp_get_num_threads() name its
// threads); nt <= 1 calls body() with no region. Inside a caller's active region (an
// image loop already split among threads, or a user's own parallel code) one thread
// still gets a nested team of one: there omp_get_thread_num() would name the caller's
// thread, which the body must not see.
// for_dynamic(n, f[, chunk]): inside run_team's body, f(i) for i in [0, n) handed out
// dynamically in chunks, with the loop's closing barrier; for_dynamic_nowait without
// it. Alone in its team (or outside one), a plain loop.
// parallel_for_dynamic(nt, n, f) / parallel_for_static(nt, n, f): the two together,
// as `#pragma omp parallel for schedule(dynamic, 1)` / `schedule(static)`.
#pragma once
#include <omp.h>

#include <algorithm>

#include "taihu/arch/threads.hpp"
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn::ops {

inline int threads_for(index_t n, index_t min_chunk) {
  const index_t by_work = std::max<index_t>(1, n / std::max<index_t>(1, min_chunk));
  return static_cast<int>(std::min<index_t>(arch::threads_for_call(), by_work));
}

template <class F>
void parallel_for(index_t n, index_t min_chunk, F&& f) {
  const int threads = threads_for(n, min_chunk);
  if (threads <= 1) {
    if (n > 0) f(index_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const index_t t = omp_get_thread_num();
    const index_t nt = omp_get_num_threads();
    auto split = [&](index_t i) { return i == nt ? n : (n * i / nt) & ~index_t{15}; };
    const index_t begin = split(t), end = split(t + 1);
    if (end > begin) f(begin, end);
  }
}

// One task per index in [0, n) (outer loops: images, channels, rows), statically split.
template <class F>
void parallel_tasks(index_t n, index_t min_tasks_per_thread, F&& f) {
  const int threads = threads_for(n, min_tasks_per_thread);
  if (threads <= 1) {
    for (index_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t i = 0; i < n; ++i) f(i);
}

// Whether a call on nt threads may run its body in place (see run_team).
inline bool runs_in_place(int nt) { return nt <= 1 && !omp_in_parallel(); }

template <class F>
void run_team(int nt, F&& body) {
  if (runs_in_place(nt)) {
    body();
    return;
  }
#pragma omp parallel num_threads(std::max(nt, 1))
  body();
}

template <class F>
void for_dynamic_nowait(index_t n, F&& f, index_t chunk = 1) {
  if (omp_get_num_threads() <= 1) {
    for (index_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp for schedule(dynamic, chunk) nowait
  for (index_t i = 0; i < n; ++i) f(i);
}

template <class F>
void for_dynamic(index_t n, F&& f, index_t chunk = 1) {
  if (omp_get_num_threads() <= 1) {
    for (index_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp for schedule(dynamic, chunk)
  for (index_t i = 0; i < n; ++i) f(i);
}

template <class F>
void parallel_for_dynamic(int nt, index_t n, F&& f) {
  run_team(nt, [&] { for_dynamic_nowait(n, f); });
}

template <class F>
void parallel_for_static(int nt, index_t n, F&& f) {
  if (runs_in_place(nt)) {
    for (index_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for num_threads(std::max(nt, 1)) schedule(static)
  for (index_t i = 0; i < n; ++i) f(i);
}

}  // namespace taihu::dnn::ops
