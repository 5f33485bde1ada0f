// CPUID + XGETBV decoding (x86-64). On other architectures every feature is false and
// dispatch falls back to the generic kernels.
#include "taihu/arch/cpu_features.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TAIHU_X86 1
#else
#define TAIHU_X86 0
#endif

namespace taihu::arch {
namespace {

#if TAIHU_X86
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf = 0) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.a, r.b, r.c, r.d);
  return r;
}

std::uint64_t xgetbv0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(' ');
  const auto last = s.find_last_not_of(' ');
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}
#endif

}  // namespace

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
#if TAIHU_X86
  const Regs r0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor + 0, &r0.b, 4);
  std::memcpy(vendor + 4, &r0.d, 4);
  std::memcpy(vendor + 8, &r0.c, 4);
  f.vendor = vendor;
  const unsigned max_leaf = r0.a;

  const Regs r1 = cpuid(1);
  const unsigned base_family = (r1.a >> 8) & 0xf;
  const unsigned base_model = (r1.a >> 4) & 0xf;
  f.family = static_cast<int>(base_family == 0xf ? base_family + ((r1.a >> 20) & 0xff) : base_family);
  f.model = static_cast<int>((base_family == 0x6 || base_family == 0xf)
                                 ? base_model + (((r1.a >> 16) & 0xf) << 4)
                                 : base_model);
  f.sse42 = bit(r1.c, 20);
  f.fma = bit(r1.c, 12);
  const bool osxsave = bit(r1.c, 27);
  f.avx = bit(r1.c, 28);
  if (osxsave) {
    const std::uint64_t xcr0 = xgetbv0();
    f.os_saves_ymm = (xcr0 & 0x6) == 0x6;     // SSE and AVX state
    f.os_saves_zmm = (xcr0 & 0xe6) == 0xe6;   // + opmask, ZMM_Hi256, Hi16_ZMM
  }
  if (max_leaf >= 7) {
    const Regs r7 = cpuid(7, 0);
    f.avx2 = bit(r7.b, 5);
    f.avx512f = bit(r7.b, 16);
    f.avx512dq = bit(r7.b, 17);
    f.avx512bw = bit(r7.b, 30);
    f.avx512vl = bit(r7.b, 31);
    f.avx512vnni = bit(r7.c, 11);
    if (r7.a >= 1) f.avx512bf16 = bit(cpuid(7, 1).a, 5);
  }
  if (cpuid(0x80000000).a >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      const Regs r = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i + 0, &r.a, 4);
      std::memcpy(brand + 16 * i + 4, &r.b, 4);
      std::memcpy(brand + 16 * i + 8, &r.c, 4);
      std::memcpy(brand + 16 * i + 12, &r.d, 4);
    }
    f.model_name = trim(brand);
  }
#else
  f.vendor = "non-x86";
#endif
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect_cpu_features();
  return features;
}

}  // namespace taihu::arch
