// Topology from hwloc (caches, cores, NUMA), with a sysconf() fallback.
#include "taihu/arch/topology.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>

#include "taihu/arch/log.hpp"

namespace taihu::arch {

const CacheLevel* Topology::cache(int level) const {
  for (const auto& c : caches)
    if (c.level == level) return &c;
  return nullptr;
}

namespace {

int count_type(hwloc_topology_t t, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(t, type);
  return n > 0 ? n : 0;
}

void add_caches(hwloc_topology_t t, Topology& topo) {
  const hwloc_obj_type_t types[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                    HWLOC_OBJ_L4CACHE};
  for (int i = 0; i < 4; ++i) {
    const int n = hwloc_get_nbobjs_by_type(t, types[i]);
    if (n <= 0) continue;
    const hwloc_obj_t obj = hwloc_get_obj_by_type(t, types[i], 0);
    if (obj == nullptr || obj->attr == nullptr) continue;
    const auto& a = obj->attr->cache;
    if (a.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
    CacheLevel c;
    c.level = i + 1;
    c.size_bytes = static_cast<std::size_t>(a.size);
    c.line_bytes = a.linesize > 0 ? static_cast<int>(a.linesize) : 64;
    c.associativity = a.associativity;
    c.instances = n;
    topo.caches.push_back(c);
  }
}

Topology fallback_topology() {
  Topology topo;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  topo.hardware_threads = cpus > 0 ? static_cast<int>(cpus) : 1;
  topo.cores = topo.hardware_threads;
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE),
             l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
  int level = 1;
  for (long size : {l1, l2, l3}) {
    if (size > 0)
      topo.caches.push_back({level, static_cast<std::size_t>(size),
                             line > 0 ? static_cast<int>(line) : 64, 0, 0});
    ++level;
  }
  return topo;
}

}  // namespace

Topology detect_topology() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) return fallback_topology();
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    log_verbose("topology: hwloc could not load the topology; using sysconf()");
    return fallback_topology();
  }
  Topology topo;
  topo.packages = std::max(1, count_type(t, HWLOC_OBJ_PACKAGE));
  topo.numa_nodes = std::max(1, count_type(t, HWLOC_OBJ_NUMANODE));
  topo.cores = std::max(1, count_type(t, HWLOC_OBJ_CORE));
  topo.hardware_threads = std::max(1, count_type(t, HWLOC_OBJ_PU));
  add_caches(t, topo);
  hwloc_topology_destroy(t);
  if (topo.caches.empty()) topo.caches = fallback_topology().caches;
  return topo;
}

const Topology& topology() {
  static const Topology topo = detect_topology();
  return topo;
}

}  // namespace taihu::arch
