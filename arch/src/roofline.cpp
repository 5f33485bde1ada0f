// Measured ceilings: FMA peak and STREAM bandwidth, pinned threads, best of repeats.
#include "taihu/arch/roofline.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "roofline_probes.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::arch {
namespace {

// The machine's peak is what its widest supported registers deliver, whatever
// TAIHU_ISA caps the kernels to.
const probes::FmaProbe& widest_probe() {
  switch (best_supported_isa(cpu_features())) {
    case Isa::avx512: return probes::kFmaAvx512;
    case Isa::avx2: return probes::kFmaAvx2;
    case Isa::generic: break;
  }
  return probes::kFmaGeneric;
}

// Wall time of one pinned parallel run of body(thread) over `threads` threads.
template <class Body>
double timed_parallel(int threads, Body&& body) {
  double seconds = 0;
#pragma omp parallel num_threads(threads)
  {
    ThreadPin pin(omp_get_thread_num());
#pragma omp barrier
    const double start = now_seconds();
    body(omp_get_thread_num());
#pragma omp barrier
#pragma omp master
    seconds = now_seconds() - start;
  }
  return seconds;
}

volatile double g_sink;  // keeps probe results alive

}  // namespace

double measure_peak_gflops(Precision precision, int threads) {
  const probes::FmaProbe& p = widest_probe();
  const int lanes = precision == Precision::f32 ? p.lanes_f32 : p.lanes_f64;
  const double flops_per_iter = 2.0 * p.chains * lanes;
  auto run = [&](long iterations) {
    return timed_parallel(threads, [&](int) {
      g_sink = precision == Precision::f32 ? p.f32(iterations, 0.999999f, 1e-6f)
                                           : p.f64(iterations, 0.999999, 1e-6);
    });
  };
  // Calibrate to ~20 ms per run, then keep the best of several runs.
  long iterations = 1 << 16;
  double t = run(iterations);
  while (t < 5e-3 && iterations < (1L << 32)) t = run(iterations *= 4);
  iterations = std::max(1L, static_cast<long>(static_cast<double>(iterations) * 0.02 / t));
  double best = 1e30;
  for (int r = 0; r < 7; ++r) best = std::min(best, run(iterations));
  const double gflops = flops_per_iter * static_cast<double>(iterations) * threads / best / 1e9;
  log_verbose("roofline: peak %s %d thread(s): %.1f GFLOP/s",
              precision == Precision::f32 ? "f32" : "f64", threads, gflops);
  return gflops;
}

StreamResult measure_stream(int threads, long elements) {
  if (elements <= 0) {
    const CacheLevel* llc = nullptr;
    for (const auto& c : topology().caches) llc = &c;
    const long llc_bytes = llc ? static_cast<long>(llc->size_bytes * std::max(1, llc->instances)) : (32L << 20);
    elements = std::max(8L << 20, 4 * llc_bytes / static_cast<long>(sizeof(float)));
  }
  AlignedBuffer<float> a(static_cast<std::size_t>(elements)), b(static_cast<std::size_t>(elements)),
      c(static_cast<std::size_t>(elements));
  const long n = elements;
  // First touch by the threads that will use each part (NUMA placement).
  auto chunk = [n, threads](int t, long& begin, long& end) {
    const long per = (n + threads - 1) / threads;
    begin = std::min(n, per * t);
    end = std::min(n, begin + per);
  };
  timed_parallel(threads, [&](int t) {
    long lo, hi;
    chunk(t, lo, hi);
    for (long i = lo; i < hi; ++i) a[i] = 0.f, b[i] = 1.f, c[i] = 2.f;
  });
  const float s = 3.f;
  auto triad = [&](int t) {
    long lo, hi;
    chunk(t, lo, hi);
    float* __restrict pa = a.data();
    const float* __restrict pb = b.data();
    const float* __restrict pc = c.data();
#pragma omp simd
    for (long i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
  };
  auto copy = [&](int t) {
    long lo, hi;
    chunk(t, lo, hi);
    float* __restrict pa = a.data();
    const float* __restrict pb = b.data();
#pragma omp simd
    for (long i = lo; i < hi; ++i) pa[i] = pb[i];
  };
  const bool have_nt = isa_supported(Isa::avx2, cpu_features());
  auto triad_nt = [&](int t) {
    long lo, hi;
    chunk(t, lo, hi);
    probes::kTriadNtAvx2(a.data(), b.data(), c.data(), s, lo, hi);
  };
  double best_triad = 1e30, best_copy = 1e30, best_nt = 1e30;
  for (int r = 0; r < 8; ++r) {
    best_triad = std::min(best_triad, timed_parallel(threads, triad));
    best_copy = std::min(best_copy, timed_parallel(threads, copy));
    if (have_nt) best_nt = std::min(best_nt, timed_parallel(threads, triad_nt));
  }
  const double bytes = static_cast<double>(n) * sizeof(float);
  StreamResult res;
  res.triad_gbps = 3 * bytes / best_triad / 1e9;
  res.copy_gbps = 2 * bytes / best_copy / 1e9;
  res.triad_nt_gbps = have_nt ? 3 * bytes / best_nt / 1e9 : 0.0;
  log_verbose("roofline: STREAM %d thread(s), %ld floats/array: triad %.1f GB/s, nt %.1f, copy %.1f",
              threads, n, res.triad_gbps, res.triad_nt_gbps, res.copy_gbps);
  return res;
}

Ceilings measure_ceilings() {
  Ceilings c;
  c.threads = num_threads();
  c.peak_gflops_sp_1t = measure_peak_gflops(Precision::f32, 1);
  c.peak_gflops_dp_1t = measure_peak_gflops(Precision::f64, 1);
  c.peak_gflops_sp = measure_peak_gflops(Precision::f32, c.threads);
  c.peak_gflops_dp = measure_peak_gflops(Precision::f64, c.threads);
  const StreamResult s = measure_stream(c.threads);
  c.stream_gbps = s.triad_gbps;
  c.stream_nt_gbps = s.triad_nt_gbps;
  c.stream_copy_gbps = s.copy_gbps;
  return c;
}

}  // namespace taihu::arch
