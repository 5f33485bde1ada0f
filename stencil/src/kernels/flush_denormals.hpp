// Flush-to-zero / denormals-are-zero for the lifetime of the object, on the calling
// thread (private). Decaying wavefields and CPML memory variables reach denormal floats,
// which cost ~100x per operation on x86; every parallel region of the time step opens
// one of these per thread, and the previous MXCSR is restored on exit so code sharing
// the threads (gemm, the caller) is unaffected.
#pragma once
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace taihu::stencil {

class FlushDenormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ | DAZ
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#else
  FlushDenormals() = default;
#endif
 public:
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;
};

}  // namespace taihu::stencil
