// AVX-512 probe: 16 chains of 512-bit FMAs (2 FMA units x 4 cycles latency, with room).
#include <immintrin.h>

#include "roofline_fma_chains.hpp"
#include "roofline_probes.hpp"

namespace taihu::arch::probes {
namespace {

constexpr int kChains = 16;

struct F32x16 {
  using T = float;
  using Reg = __m512;
  static constexpr int kLanes = 16;
  static Reg set1(T x) { return _mm512_set1_ps(x); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(T* p, Reg v) { _mm512_store_ps(p, v); }
};

struct F64x8 {
  using T = double;
  using Reg = __m512d;
  static constexpr int kLanes = 8;
  static Reg set1(T x) { return _mm512_set1_pd(x); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_pd(a, b, c); }
  static void store(T* p, Reg v) { _mm512_store_pd(p, v); }
};

}  // namespace

const FmaProbe kFmaAvx512 = {&fma_chains<F32x16, kChains>, &fma_chains<F64x8, kChains>, kChains,
                             F32x16::kLanes, F64x8::kLanes};

}  // namespace taihu::arch::probes
