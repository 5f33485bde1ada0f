// bench_gemm_microkernel: the active ISA's GEMM micro-kernel alone, operands resident in
// cache, against the DP/SP FMA peak measured in the same process. Separates kernel
// quality from blocking and packing: a packed A micro-panel (mr x kc) and B micro-panel
// (kc x nr) are reused call after call, so small kc keeps both in L1 (A + B of a
// 16x12 double tile: 28 KiB at kc = 128, 56 KiB at 256, which streams from L2), and C
// (one tile) stays in L1; all three line-aligned. TAIHU_GEMM_DGEMM_TILE picks the AVX-512
// DGEMM tile. Usage: bench_gemm_microkernel [kc ...] (default 64 128 256 384 512).
// Prints per kc: GFLOP/s and % of the measured peak, best of 7 repetitions.
// `bench_gemm_microkernel pack [kc]` times the packing alone instead: the blocks a
// 2048^3 product packs (B: kc x 2048 of a column-major 2048 x 2048 B, columns along k;
// A: 592 x kc of a 2048 x 2048 A, plain and transposed), through the active ISA's
// register-transposing line packer and through the portable packer, alternating in one
// process, best of 9: GB/s of packed data and ms per 2048^3 product's worth of packing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/microkernel.hpp"
#include "packing.hpp"
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

// Seconds to pack every kc block of a 2048^3 product's operand once (B: all of it, kc x
// 2048 at a time; A: 592-row blocks), best of `reps`, through `packer` or the portable
// packer (nullptr).
template <class T>
double pack_seconds(const taihu::gemm::MatrixView<T>& x, bool as_b, index_t kc, int width,
                    kernels::PackLinesFn<T> packer, T* dst, int reps) {
  constexpr index_t n = 2048, mc = 592;
  double best = 1e30;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (index_t pc = 0; pc + kc <= n; pc += kc) {
      if (as_b) {
        const index_t panels = (n + width - 1) / width;
        taihu::gemm::pack_b(x, pc, kc, 0, n, width, dst, 0, panels, packer);
      } else {
        for (index_t ic = 0; ic < n; ic += mc) {
          const index_t rows = std::min(mc, n - ic), panels = (rows + width - 1) / width;
          taihu::gemm::pack_a(x, ic, rows, pc, kc, width, dst, 0, panels, packer);
        }
      }
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

template <class T>
void report_packing(const char* type, const kernels::MicroKernel<T>& uk, index_t kc) {
  constexpr index_t n = 2048;
  taihu::arch::AlignedBuffer<T> src(static_cast<size_t>(n * n), 4096);
  taihu::arch::AlignedBuffer<T> dst(static_cast<size_t>((n + 64) * kc), 4096);
  for (size_t i = 0; i < static_cast<size_t>(n * n); ++i) src.data()[i] = T(1) / T(1 + i % 7);
  struct Case {
    const char* what;
    bool as_b, trans;
  };
  const Case cases[] = {{"B no-transpose (columns along k)", true, false},
                        {"A transposed (rows along k)", false, true},
                        {"A no-transpose (rows across k)", false, false}};
  for (const Case& c : cases) {
    const taihu::gemm::MatrixView<T> view{src.data(), n, c.trans};
    const int width = c.as_b ? uk.nr : uk.mr;
    const kernels::PackLinesFn<T> isa = c.as_b ? uk.pack_b_lines : uk.pack_a_transposed;
    const bool along_k = c.as_b != c.trans;
    double t_isa = 1e30, t_portable = 1e30;
    for (int round = 0; round < 3; ++round) {  // alternate, so load changes hit both
      if (along_k && isa != nullptr) t_isa = std::min(t_isa, pack_seconds(view, c.as_b, kc, width, isa, dst.data(), 3));
      t_portable = std::min(t_portable, pack_seconds<T>(view, c.as_b, kc, width, nullptr, dst.data(), 3));
    }
    const double bytes = static_cast<double>((n / kc) * kc) * n * sizeof(T);
    std::printf("%s pack %-34s width %2d kc=%-4ld portable %6.2f ms %5.1f GB/s", type, c.what, width,
                static_cast<long>(kc), t_portable * 1e3, bytes / t_portable * 1e-9);
    if (along_k && isa != nullptr)
      std::printf("   isa %6.2f ms %5.1f GB/s  (%.2fx)", t_isa * 1e3, bytes / t_isa * 1e-9, t_portable / t_isa);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "pack") {
    char* end = nullptr;
    const long kc = argc >= 3 ? std::strtol(argv[2], &end, 10) : 216;
    if (argc >= 3 && (end == argv[2] || *end != '\0' || kc <= 0 || kc > 2048)) {
      std::fprintf(stderr, "bench_gemm_microkernel: bad kc '%s' (expected 1..2048)\n", argv[2]);
      return 2;
    }
    const auto& ks = kernels::active_kernels();
    std::printf("kernels: %s\n", kernels::active_kernels_name());
    report_packing("dgemm", ks.dgemm, kc);
    report_packing("sgemm", ks.sgemm, kc);
    return 0;
  }
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
