// bench_gemm: taihu SGEMM/DGEMM against MKL, the newest OpenBLAS (both from
// scripts/anchors), Debian's OpenBLAS and BLIS, interleaved in one process, on the
// shapes of issue #3 (square 64..4096, DNN shapes, a batch-1 FC layer), 1 and 2
// threads. Counters: gflops, pct_peak (of the FMA peak measured in this run; for the
// GEMV-shaped FC layer, of the STREAM triad bandwidth), vs_anchor (time of the fastest
// peer / taihu's time), vs_mkl, vs_openblas, vs_openblas_debian, vs_blis. The context
// lines anchor_<name>_kernel say which code path each peer picked on this CPU.
// A peer that is not installed is named on stderr and left out.
//   bench_gemm --benchmark_filter=sgemm/.*/threads:1
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "anchor_registry.hpp"
#include "bench_common.hpp"
#include "cblas_anchor.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/topology.hpp"
#include "taihu/gemm/gemm.hpp"

namespace {

using taihu::gemm::index_t;

// Row-major C (m x n) = op(A) op(B); trans_a / trans_b as dnn's conv calls pass them
// (forward explicit GEMM: no/no; implicit GEMM and backward data: no/yes, yes/no).
struct GemmShape {
  index_t m, n, k;
  bool trans_a = false, trans_b = false;
};

const GemmShape kShapes[] = {
    {64, 64, 64},     {128, 128, 128},  {256, 256, 256},   {512, 512, 512},
    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
    {64, 3136, 576},  {64, 3136, 64},   {256, 3136, 64},
    {64, 3136, 576, false, true}, {576, 3136, 64, true, false},
    {256, 196, 2304}, {128, 128, 4096},  {1000, 1, 4096}};

// "64x3136x576", with "nt" / "tn" appended for a transposed operand.
std::string shape_name(const GemmShape& s) {
  std::string name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  if (s.trans_a || s.trans_b) name += std::string(s.trans_a ? "t" : "n") + (s.trans_b ? "t" : "n");
  return name;
}

// The peers, strongest first: MKL and the newest OpenBLAS from scripts/anchors (PyPI),
// then Debian's OpenBLAS and BLIS (2022), which stay as columns so a ratio against
// them can be read beside today's; vs_anchor is against the fastest of all loaded.
std::vector<std::unique_ptr<taihu::bench::CblasAnchor>>& anchors() {
  static std::vector<std::unique_ptr<taihu::bench::CblasAnchor>> list = [] {
    using taihu::bench::CblasAnchor;
    std::vector<std::unique_ptr<CblasAnchor>> v = taihu::bench::newest_cblas_anchors("Debian's OpenBLAS and BLIS", "Debian's OpenBLAS 0.3.21");
    v.push_back(std::make_unique<CblasAnchor>(
        "openblas_debian", std::initializer_list<std::string>{"libopenblas.so.0", "libopenblas.so"}));
    v.push_back(std::make_unique<CblasAnchor>("blis", std::initializer_list<std::string>{"libblis.so.4", "libblis.so"}));
    return v;
  }();
  return list;
}

template <class T>
void run_gemm(benchmark::State& state, GemmShape s, int threads) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  // The GEMV-shaped product reads its matrix once per call: rotate through copies
  // that together exceed the last-level cache, so every call streams from memory.
  const bool streaming = s.n == 1 || s.m == 1;
  const std::size_t a_elems = static_cast<std::size_t>(s.m * s.k);
  const double llc = static_cast<double>(taihu::arch::topology().caches.back().size_bytes);
  const int copies = streaming ? std::max(1, static_cast<int>(3 * llc / static_cast<double>(a_elems * sizeof(T))) + 1) : 1;
  std::vector<taihu::arch::AlignedBuffer<T>> a;
  for (int i = 0; i < copies; ++i) {
    a.emplace_back(a_elems);
    for (auto& x : a.back()) x = static_cast<T>(dist(rng));
  }
  taihu::arch::AlignedBuffer<T> b(static_cast<std::size_t>(s.k * s.n)), c(static_cast<std::size_t>(s.m * s.n));
  for (auto& x : b) x = static_cast<T>(dist(rng));
  for (auto& x : c) x = 0;
  int turn = 0;
  auto next_a = [&] { return a[static_cast<std::size_t>(turn++ % copies)].data(); };

  taihu::arch::set_num_threads(threads);
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = s.trans_a ? m : k, ldb = s.trans_b ? k : n;
  using taihu::gemm::Trans;
  const Trans ta = s.trans_a ? Trans::yes : Trans::no, tb = s.trans_b ? Trans::yes : Trans::no;
  const int cta = s.trans_a ? 112 : 111, ctb = s.trans_b ? 112 : 111;  // CblasTrans / CblasNoTrans
  auto taihu_call = [&] {
    if constexpr (sizeof(T) == 4)
      taihu::gemm::sgemm(taihu::gemm::Layout::row_major, ta, tb, s.m, s.n, s.k, 1.f, next_a(), lda, b.data(), ldb,
                         0.f, c.data(), s.n);
    else
      taihu::gemm::dgemm(taihu::gemm::Layout::row_major, ta, tb, s.m, s.n, s.k, 1.0, next_a(), lda, b.data(), ldb,
                         0.0, c.data(), s.n);
  };
  std::vector<taihu::bench::Anchor> peers;
  for (const auto& lib : anchors()) {
    if (!lib->loaded()) continue;
    lib->set_threads(threads);
    const taihu::bench::CblasAnchor* p = lib.get();
    peers.push_back({lib->name(), [&, p] {
                       if constexpr (sizeof(T) == 4)
                         p->sgemm()(101, cta, ctb, m, n, k, 1.f, next_a(), lda, b.data(), ldb, 0.f, c.data(), n);
                       else
                         p->dgemm()(101, cta, ctb, m, n, k, 1.0, next_a(), lda, b.data(), ldb, 0.0, c.data(), n);
                     }});
  }
  taihu::bench::Work work;
  work.flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  work.bytes = sizeof(T) * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
  const auto kind = streaming ? taihu::bench::Ceiling::stream
                              : (sizeof(T) == 4 ? taihu::bench::Ceiling::peak_sp : taihu::bench::Ceiling::peak_dp);
  taihu::bench::compare(state, work, kind, threads, taihu_call, peers);
  taihu::arch::set_num_threads(0);
}

void register_all() {
  for (const char* type : {"sgemm", "dgemm"})
    for (int threads : {1, 2})
      for (const auto& s : kShapes) {
        const std::string name =
            std::string(type) + "/" + shape_name(s) + "/threads:" + std::to_string(threads);
        const bool single = type[0] == 's';
        auto* b = benchmark::RegisterBenchmark(name.c_str(), [s, threads, single](benchmark::State& st) {
          if (single)
            run_gemm<float>(st, s, threads);
          else
            run_gemm<double>(st, s, threads);
        });
        // About 0.3 s of taihu time per row (at ~50 GFLOP/s per thread), 5..200 repeats:
        // at least 5, so the best-of statistic on the big sizes has a choice.
        const double flops = 2.0 * static_cast<double>(s.m * s.n) * static_cast<double>(s.k);
        const auto iters = static_cast<benchmark::IterationCount>(
            std::clamp(0.3 * 50e9 * threads / flops, 5.0, 200.0));
        b->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
      }
}

}  // namespace

int main(int argc, char** argv) {
  // OpenBLAS's idle threads spin for about 0.1 s after each call and would take a core
  // from the next library in the interleaved loop: let them sleep at once, as bench_conv
  // does (read when the library loads). MKL runs on its GNU OpenMP layer, so MKL, BLIS
  // and taihu share one OpenMP runtime and hand the cores over without contention (its
  // default Intel layer would bring a second runtime whose workers spin).
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  setenv("MKL_THREADING_LAYER", "GNU", 0);
  setenv("MKL_DYNAMIC", "FALSE", 0);
  benchmark::Initialize(&argc, argv);
  for (const auto& lib : anchors()) {
    benchmark::AddCustomContext("anchor_" + lib->name(), lib->loaded() ? lib->path() : "not found");
    if (lib->loaded()) benchmark::AddCustomContext("anchor_" + lib->name() + "_kernel", lib->kernel());
  }
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
