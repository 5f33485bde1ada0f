// The cache flush that conv_cputime and its oneDNN 3 server run before each timed call,
// so both sides of a ratio start equally cold.
#pragma once
#include <cstddef>
#include <vector>

namespace taihu::bench {

// 96 MiB, three times the 32 MiB L3 of the machines measured: a 32 MiB sweep left a
// batch-1 LeNet call's lines in Zen 4's L3, so back-to-back calls of one implementation
// read up to 2x faster than the same calls between others'. One write per 64-byte line,
// a different value each time, so no sweep is optimised away.
inline void flush_cache() {
  static std::vector<char> junk(96u << 20);
  static char seed = 1;
  for (std::size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + seed);
  ++seed;
}

}  // namespace taihu::bench
