// CPUID decoding checked against the kernel's own view in /proc/cpuinfo.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "taihu/arch/cpu_features.hpp"

namespace {

std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuFeatures, AgreesWithProcCpuinfo) {
  const auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
  const auto f = taihu::arch::detect_cpu_features();
  EXPECT_EQ(f.sse42, flags.count("sse4_2") == 1);
  EXPECT_EQ(f.avx, flags.count("avx") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512vl, flags.count("avx512vl") == 1);
  EXPECT_EQ(f.avx512vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(f.avx512bf16, flags.count("avx512_bf16") == 1);
}

TEST(CpuFeatures, VendorAndBrand) {
  const auto& f = taihu::arch::cpu_features();
  EXPECT_FALSE(f.vendor.empty());
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("vendor_id", 0) == 0) {
      EXPECT_NE(line.find(f.vendor), std::string::npos) << line;
      break;
    }
}

}  // namespace
