// Measured roofline ceilings: what this machine really delivers, not its datasheet.
// Every benchmark divides by these (pct_peak). Measurements pin their threads and
// report the best of several short repetitions, because shared hosts are noisy.
#pragma once

namespace taihu::arch {

enum class Precision { f32, f64 };

// Peak FMA throughput in GFLOP/s (2 flops per FMA lane) with `threads` threads running
// independent FMA chains in the widest registers the CPU supports (the machine's peak,
// whatever TAIHU_ISA caps the kernels to).
double measure_peak_gflops(Precision precision, int threads);

struct StreamResult {
  double triad_gbps = 0.0;     // a[i] = b[i] + s*c[i], 12 bytes/element (float), STREAM counting
  double triad_nt_gbps = 0.0;  // same with non-temporal stores (0 where the ISA has none)
  double copy_gbps = 0.0;      // a[i] = b[i], 8 bytes/element
};

// STREAM with float arrays of `elements` each (default: 4x the last-level cache).
StreamResult measure_stream(int threads, long elements = 0);

struct Ceilings {
  int threads = 1;
  double peak_gflops_sp_1t = 0, peak_gflops_dp_1t = 0;
  double peak_gflops_sp = 0, peak_gflops_dp = 0;  // all `threads`
  double stream_gbps = 0, stream_nt_gbps = 0, stream_copy_gbps = 0;
};

// All ceilings at num_threads(); takes about a second.
Ceilings measure_ceilings();

}  // namespace taihu::arch
