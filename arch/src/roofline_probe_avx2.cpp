// AVX2 + FMA probe: 12 chains of 256-bit FMAs (covers 2 pipes x 4-5 cycles latency).
#include <immintrin.h>

#include "roofline_probes.hpp"

namespace taihu::arch::probes {
namespace {

constexpr int kChains = 12;

double fma_f32(long iterations, float m, float a) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i + 1));
  const __m256 vm = _mm256_set1_ps(m), va = _mm256_set1_ps(a);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], vm, va);
  double sum = 0;
  alignas(32) float lanes[8];
  for (int i = 0; i < kChains; ++i) {
    _mm256_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

double fma_f64(long iterations, double m, double a) {
  __m256d acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_pd(static_cast<double>(i + 1));
  const __m256d vm = _mm256_set1_pd(m), va = _mm256_set1_pd(a);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_pd(acc[i], vm, va);
  double sum = 0;
  alignas(32) double lanes[4];
  for (int i = 0; i < kChains; ++i) {
    _mm256_store_pd(lanes, acc[i]);
    for (double v : lanes) sum += v;
  }
  return sum;
}

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

const FmaProbe kFmaAvx2 = {&fma_f32, &fma_f64, kChains, 8, 4};
const TriadFn kTriadNtAvx2 = &triad_nt;

}  // namespace taihu::arch::probes
