// bench_gemm_microkernel: the active ISA's GEMM micro-kernel alone, operands resident in
// cache, against the DP/SP FMA peak measured in the same process. Separates kernel
// quality from blocking and packing: a packed A micro-panel (mr x kc) and B micro-panel
// (kc x nr) are reused call after call, so small kc keeps both in L1 (A + B of a
// 16x12 double tile: 28 KiB at kc = 128, 56 KiB at 256, which streams from L2), and C
// (one tile) stays in L1; all three line-aligned. TAIHU_GEMM_DGEMM_TILE picks the AVX-512
// DGEMM tile. Usage: bench_gemm_microkernel [kc ...] (default 64 128 256 384 512).
// Prints per kc: GFLOP/s and % of the measured peak, best of 7 repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/microkernel.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/roofline.hpp"

namespace {

using taihu::gemm::index_t;
namespace kernels = taihu::gemm::kernels;

template <class T>
double kernel_gflops(const kernels::MicroKernel<T>& uk, index_t kc) {
  // Line-aligned, as the driver's packing buffers are (a std::vector's 16-byte alignment
  // split every 64-byte load of A across two lines).
  const size_t a_len = static_cast<size_t>(uk.mr) * kc + 64, b_len = static_cast<size_t>(uk.nr) * kc + 64;
  taihu::arch::AlignedBuffer<T> a(a_len), b(b_len), c(static_cast<size_t>(uk.mr) * uk.nr);
  for (size_t i = 0; i < a_len; ++i) a.data()[i] = T(1) / T(1 + i % 7);
  for (size_t i = 0; i < b_len; ++i) b.data()[i] = T(1) / T(1 + i % 5);
  for (size_t i = 0; i < static_cast<size_t>(uk.mr) * uk.nr; ++i) c.data()[i] = T(0);
  // About 0.2 s of work per repetition at 100 GFLOP/s.
  const double flops_per_call = 2.0 * uk.mr * uk.nr * static_cast<double>(kc);
  const long calls = std::max(1L, static_cast<long>(2e10 / flops_per_call));
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) uk.fn(kc, T(1), a.data(), uk.mr, b.data(), T(1), c.data(), uk.mr);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops_per_call * static_cast<double>(calls) / s * 1e-9);
  }
  volatile T sink = c.data()[0];
  (void)sink;
  return best;
}

template <class T>
void report(const char* type, const kernels::MicroKernel<T>& uk, const std::vector<index_t>& kcs, double peak) {
  for (index_t kc : kcs) {
    const double g = kernel_gflops(uk, kc);
    std::printf("%s %dx%d kc=%-4ld %7.1f GFLOP/s  %5.1f%% of peak %.1f\n", type, uk.mr, uk.nr,
                static_cast<long>(kc), g, 100.0 * g / peak, peak);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<index_t> kcs;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const long v = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v <= 0) {
      std::fprintf(stderr, "bench_gemm_microkernel: bad kc '%s' (expected a positive integer)\n", argv[i]);
      return 2;
    }
    kcs.push_back(v);
  }
  if (kcs.empty()) kcs = {64, 128, 256, 384, 512};
  const auto& ks = kernels::active_kernels();
  std::printf("kernels: %s\n", kernels::active_kernels_name());
  const double dp = taihu::arch::measure_peak_gflops(taihu::arch::Precision::f64, 1);
  report("dgemm", ks.dgemm, kcs, dp);
  const double sp = taihu::arch::measure_peak_gflops(taihu::arch::Precision::f32, 1);
  report("sgemm", ks.sgemm, kcs, sp);
  std::printf("peak re-measured: dp %.1f sp %.1f\n", taihu::arch::measure_peak_gflops(taihu::arch::Precision::f64, 1),
              taihu::arch::measure_peak_gflops(taihu::arch::Precision::f32, 1));
  return 0;
}
