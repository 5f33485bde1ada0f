// hwloc topology checked against sysconf() and the kernel's sysfs cache description.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "taihu/arch/topology.hpp"

namespace {

long sysfs_cache_bytes(int level) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream lv(dir + "/level"), ty(dir + "/type"), sz(dir + "/size");
    int l = 0;
    std::string type, size;
    if (!(lv >> l) || !(ty >> type) || !(sz >> size)) continue;
    if (l != level || type == "Instruction") continue;
    long value = std::stol(size);
    if (size.back() == 'K') value <<= 10;
    if (size.back() == 'M') value <<= 20;
    return value;
  }
  return -1;
}

TEST(Topology, CountsAgreeWithTheOs) {
  const auto& t = taihu::arch::topology();
  EXPECT_EQ(t.hardware_threads, sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GE(t.cores, 1);
  EXPECT_LE(t.cores, t.hardware_threads);
  EXPECT_GE(t.numa_nodes, 1);
}

TEST(Topology, CacheSizesAgreeWithSysfs) {
  const auto& t = taihu::arch::topology();
  for (int level = 1; level <= 3; ++level) {
    const long expected = sysfs_cache_bytes(level);
    if (expected <= 0) continue;
    const auto* c = t.cache(level);
    ASSERT_NE(c, nullptr) << "L" << level;
    EXPECT_EQ(static_cast<long>(c->size_bytes), expected) << "L" << level;
    EXPECT_EQ(c->line_bytes, 64);
  }
  ASSERT_NE(t.cache(1), nullptr);
  EXPECT_EQ(t.cache(9), nullptr);
}

}  // namespace
