// What the CPU can execute: vendor, model and the ISA extensions taihu's kernels use,
// read from CPUID, with the OS's XSAVE state (XCR0) checked so an extension is only
// reported usable when the kernel saves its registers.
#pragma once
#include <string>

namespace taihu::arch {

struct CpuFeatures {
  std::string vendor;      // "GenuineIntel", "AuthenticAMD", ...
  std::string model_name;  // brand string
  int family = 0;
  int model = 0;
  bool sse42 = false;
  bool avx = false;
  bool fma = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool os_saves_ymm = false;  // XCR0 has SSE + AVX state
  bool os_saves_zmm = false;  // XCR0 has opmask + ZMM state

  // An AMD core. The kernel and block-size rules measured only on Zen (Zen 4 executes
  // AVX-512 as 2 x 256 bits and has a 1 MiB L2) key on this one predicate, so Intel
  // keeps the rules measured there.
  bool amd() const { return vendor == "AuthenticAMD"; }
};

// Reads CPUID once per call; cheap enough to call at start-up only.
CpuFeatures detect_cpu_features();

// The features of this process's CPU, detected once.
const CpuFeatures& cpu_features();

}  // namespace taihu::arch
