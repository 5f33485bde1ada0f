// AVX-512 probe: 16 chains of 512-bit FMAs (2 FMA units x 4 cycles latency, with room).
#include <immintrin.h>

#include "roofline_probes.hpp"

namespace taihu::arch::probes {
namespace {

constexpr int kChains = 16;

double fma_f32(long iterations, float m, float a) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i + 1));
  const __m512 vm = _mm512_set1_ps(m), va = _mm512_set1_ps(a);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], vm, va);
  double sum = 0;
  alignas(64) float lanes[16];  // (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized)
  for (int i = 0; i < kChains; ++i) {
    _mm512_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

double fma_f64(long iterations, double m, double a) {
  __m512d acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_pd(static_cast<double>(i + 1));
  const __m512d vm = _mm512_set1_pd(m), va = _mm512_set1_pd(a);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_pd(acc[i], vm, va);
  double sum = 0;
  alignas(64) double lanes[8];
  for (int i = 0; i < kChains; ++i) {
    _mm512_store_pd(lanes, acc[i]);
    for (double v : lanes) sum += v;
  }
  return sum;
}

}  // namespace

const FmaProbe kFmaAvx512 = {&fma_f32, &fma_f64, kChains, 16, 8};

}  // namespace taihu::arch::probes
