// The machine's shape as hwloc sees it: packages, NUMA nodes, physical cores, hardware
// threads, and the data/unified caches per level. gemm/ derives its block sizes from
// the cache sizes; threads.hpp takes its default from the core count.
#pragma once
#include <cstddef>
#include <vector>

namespace taihu::arch {

struct CacheLevel {
  int level = 0;                 // 1, 2, 3
  std::size_t size_bytes = 0;    // one instance
  int line_bytes = 64;
  int associativity = 0;         // 0 = unknown, -1 = fully associative
  int instances = 0;             // how many of this cache the machine has
};

struct Topology {
  int packages = 1;
  int numa_nodes = 1;
  int cores = 1;                 // physical cores
  int hardware_threads = 1;      // logical CPUs
  std::vector<CacheLevel> caches;  // data or unified caches, L1 first

  // The cache at `level`, or nullptr.
  const CacheLevel* cache(int level) const;
};

// Queries hwloc; falls back to sysconf() if hwloc cannot load the topology.
Topology detect_topology();

// This process's topology, detected once.
const Topology& topology();

}  // namespace taihu::arch
