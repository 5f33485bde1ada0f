// parallel_for: splits [0, n) into one contiguous chunk per thread (chunk starts
// aligned to 16 elements so vector loops keep their alignment), runs f(begin, end) on
// each under OpenMP with taihu::arch::threads_for_call() threads; serial when the work
// is smaller than min_chunk per thread. f must not throw.
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

}  // namespace taihu::dnn::ops
