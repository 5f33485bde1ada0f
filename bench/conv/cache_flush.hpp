// The cache flush that conv_cputime and its oneDNN 3 server run before each timed call,
// so both sides of a ratio start equally cold.
#pragma once
#include <omp.h>

#include <cstddef>
#include <vector>

namespace taihu::bench {

// 96 MiB, three times the 32 MiB L3 of the machines measured: a 32 MiB sweep left a
// batch-1 LeNet call's lines in Zen 4's L3, so back-to-back calls of one implementation
// read up to 2x faster than the same calls between others'. One write per 64-byte line,
// a different value each time, so no sweep is optimised away.
// Swept by every thread of the OpenMP team the timed calls run on (omp_set_num_threads):
// each core's private L2 has to be swept by that core. A sweep by the calling thread
// alone left the other cores' L2 (1 MiB each on Zen 4) holding what they touched in the
// last call, so at 2 threads a library that gives a core the same part of a small
// problem every call found that part warm.
inline void flush_cache() {
  static std::vector<char> junk(96u << 20);
  static char seed = 1;
  const char s = seed++;
  char* const lines = junk.data();
  const std::size_t count = junk.size() / 64;
#pragma omp parallel
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    for (std::size_t i = count * t / nt; i < count * (t + 1) / nt; ++i)
      lines[i * 64] = static_cast<char>(lines[i * 64] + s);
  }
}

}  // namespace taihu::bench
