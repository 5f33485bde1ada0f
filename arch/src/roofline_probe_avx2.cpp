// AVX2 + FMA probe: 12 chains of 256-bit FMAs (covers 2 pipes x 4-5 cycles latency),
// and the non-temporal triad of the STREAM probe.
#include <immintrin.h>

#include "roofline_fma_chains.hpp"
#include "roofline_probes.hpp"

namespace taihu::arch::probes {
namespace {

constexpr int kChains = 12;

struct F32x8 {
  using T = float;
  using Reg = __m256;
  static constexpr int kLanes = 8;
  static Reg set1(T x) { return _mm256_set1_ps(x); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(T* p, Reg v) { _mm256_store_ps(p, v); }
};

struct F64x4 {
  using T = double;
  using Reg = __m256d;
  static constexpr int kLanes = 4;
  static Reg set1(T x) { return _mm256_set1_pd(x); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_pd(a, b, c); }
  static void store(T* p, Reg v) { _mm256_store_pd(p, v); }
};

void triad_nt(float* a, const float* b, const float* c, float s, long begin, long end) {
  const __m256 vs = _mm256_set1_ps(s);
  long i = begin;
  for (; i < end && (reinterpret_cast<unsigned long>(a + i) & 31u) != 0; ++i) a[i] = b[i] + s * c[i];
  for (; i + 8 <= end; i += 8)
    _mm256_stream_ps(a + i, _mm256_fmadd_ps(vs, _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i)));
  for (; i < end; ++i) a[i] = b[i] + s * c[i];
  _mm_sfence();
}

}  // namespace

const FmaProbe kFmaAvx2 = {&fma_chains<F32x8, kChains>, &fma_chains<F64x4, kChains>, kChains, F32x8::kLanes,
                           F64x4::kLanes};
const TriadFn kTriadNtAvx2 = &triad_nt;

}  // namespace taihu::arch::probes
