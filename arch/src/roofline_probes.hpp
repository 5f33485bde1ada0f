// Private: the per-ISA probe kernels behind roofline.cpp. Each FMA probe runs
// `iterations` steps of kFmaChains independent FMA chains acc = acc * m + a, and
// returns the sum of all lanes so the work cannot be optimised away.
#pragma once

namespace taihu::arch::probes {

struct FmaProbe {
  double (*f32)(long iterations, float m, float a);
  double (*f64)(long iterations, double m, double a);
  int chains;       // independent accumulator registers
  int lanes_f32;    // elements per register
  int lanes_f64;
};

extern const FmaProbe kFmaGeneric;
extern const FmaProbe kFmaAvx2;
extern const FmaProbe kFmaAvx512;

// Non-temporal triad a = b + s*c over [begin, end), or nullptr where the ISA has no
// streaming stores in this build. Arrays are 64-byte aligned.
using TriadFn = void (*)(float* a, const float* b, const float* c, float s, long begin, long end);
extern const TriadFn kTriadNtAvx2;

}  // namespace taihu::arch::probes
