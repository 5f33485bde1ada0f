// bench_gemm's level-3 and bf16 rows: taihu's trsm, syrk, gemmt, symm, trmm, syr2k (s and
// d) and sbgemm against MKL and the newest OpenBLAS (scripts/anchors), interleaved in
// one process, square n x n problems (512, 1024, 2048) at 1 and 2 threads. Counters as bench_gemm's:
// gflops (the routine's nominal flops: trsm/trmm m^2 n, syrk/gemmt n^2 k, syr2k and
// symm twice that), pct_peak, vs_mkl, vs_openblas (peer time / taihu time). The bf16
// rows' pct_peak is of the fp32 FMA peak (vdpbf16ps does twice the multiply-adds) and
// their peer is MKL's cblas_gemm_bf16bf16f32 (scipy-openblas32 and Debian's OpenBLAS
// are built without sbgemm). Compiled into bench_gemm:
//   bench_gemm --benchmark_filter='level3/'
// Triangular matrices are I + (entries of size 1/n), so repeated in-place trsm/trmm on
// the same B neither overflow nor underflow.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "anchor_registry.hpp"
#include "bench_common.hpp"
#include "cblas_anchor.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/bf16.hpp"
#include "taihu/gemm/level3.hpp"

namespace {

namespace tg = taihu::gemm;
using tg::index_t;

// CBLAS enum values (cblas.h).
constexpr int kCol = 102, kNoTrans = 111, kTrans = 112, kLower = 122, kNonUnit = 131, kLeft = 141;

std::vector<std::unique_ptr<taihu::bench::CblasAnchor>>& peers() {
  static std::vector<std::unique_ptr<taihu::bench::CblasAnchor>> list = [] {
    using taihu::bench::CblasAnchor;
    std::vector<std::unique_ptr<CblasAnchor>> v = taihu::bench::newest_cblas_anchors("no MKL column", "no OpenBLAS column");
    return v;
  }();
  return list;
}

enum class Routine { trsm, syrk, gemmt, symm, trmm, syr2k };
const char* name_of(Routine r) {
  static const char* names[] = {"trsm", "syrk", "gemmt", "symm", "trmm", "syr2k"};
  return names[static_cast<int>(r)];
}

template <class T>
struct Operands {
  std::vector<T> a, b, c;
  explicit Operands(index_t n) {
    const auto nn = static_cast<std::size_t>(n * n);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<T> u(-1, 1);
    a.resize(nn), b.resize(nn), c.resize(nn);
    for (auto& x : a) x = u(rng) / static_cast<T>(n);
    for (index_t i = 0; i < n; ++i) a[static_cast<std::size_t>(i + i * n)] = T(1);
    for (auto& x : b) x = u(rng);
    for (auto& x : c) x = u(rng);
  }
};

// Column major, lower triangle, no transposition (syrk/syr2k/gemmt: op(A) = A n x n,
// gemmt's op(B) = B^T so that it is syrk's shape with two operands).
template <class T>
std::function<void()> taihu_call(Routine r, index_t n, Operands<T>& o) {
  const auto L = tg::Layout::col_major;
  const auto lo = tg::Uplo::lower;
  T* a = o.a.data();
  T* b = o.b.data();
  T* c = o.c.data();
  switch (r) {
    case Routine::trsm:
      return [=] {
        if constexpr (sizeof(T) == 4) tg::strsm(L, tg::Side::left, lo, tg::Trans::no, tg::Diag::non_unit, n, n, 1, a, n, b, n);
        else tg::dtrsm(L, tg::Side::left, lo, tg::Trans::no, tg::Diag::non_unit, n, n, 1, a, n, b, n);
      };
    case Routine::trmm:
      return [=] {
        if constexpr (sizeof(T) == 4) tg::strmm(L, tg::Side::left, lo, tg::Trans::no, tg::Diag::non_unit, n, n, 1, a, n, b, n);
        else tg::dtrmm(L, tg::Side::left, lo, tg::Trans::no, tg::Diag::non_unit, n, n, 1, a, n, b, n);
      };
    case Routine::syrk:
      return [=] {
        if constexpr (sizeof(T) == 4) tg::ssyrk(L, lo, tg::Trans::no, n, n, 1, a, n, 0, c, n);
        else tg::dsyrk(L, lo, tg::Trans::no, n, n, 1, a, n, 0, c, n);
      };
    case Routine::syr2k:
      return [=] {
        if constexpr (sizeof(T) == 4) tg::ssyr2k(L, lo, tg::Trans::no, n, n, 1, a, n, b, n, 0, c, n);
        else tg::dsyr2k(L, lo, tg::Trans::no, n, n, 1, a, n, b, n, 0, c, n);
      };
    case Routine::gemmt:
      return [=] {
        if constexpr (sizeof(T) == 4) tg::sgemmt(L, lo, tg::Trans::no, tg::Trans::yes, n, n, 1, a, n, b, n, 0, c, n);
        else tg::dgemmt(L, lo, tg::Trans::no, tg::Trans::yes, n, n, 1, a, n, b, n, 0, c, n);
      };
    case Routine::symm:
      return [=] {
        if constexpr (sizeof(T) == 4) tg::ssymm(L, tg::Side::left, lo, n, n, 1, a, n, b, n, 0, c, n);
        else tg::dsymm(L, tg::Side::left, lo, n, n, 1, a, n, b, n, 0, c, n);
      };
  }
  return {};
}

// The same call through a peer's CBLAS symbol (cblas_strsm, ...), or {} if it lacks it.
template <class T>
std::function<void()> peer_call(const taihu::bench::CblasAnchor& lib, Routine r, index_t n, Operands<T>& o) {
  const std::string sym = std::string("cblas_") + (sizeof(T) == 4 ? "s" : "d") + name_of(r);
  void* f = lib.symbol(sym.c_str());
  if (f == nullptr) return {};
  const int N = static_cast<int>(n);
  T* a = o.a.data();
  T* b = o.b.data();
  T* c = o.c.data();
  switch (r) {
    case Routine::trsm:
    case Routine::trmm: {
      auto fn = reinterpret_cast<void (*)(int, int, int, int, int, int, int, T, const T*, int, T*, int)>(f);
      return [=] { fn(kCol, kLeft, kLower, kNoTrans, kNonUnit, N, N, 1, a, N, b, N); };
    }
    case Routine::syrk: {
      auto fn = reinterpret_cast<void (*)(int, int, int, int, int, T, const T*, int, T, T*, int)>(f);
      return [=] { fn(kCol, kLower, kNoTrans, N, N, 1, a, N, 0, c, N); };
    }
    case Routine::syr2k: {
      auto fn = reinterpret_cast<void (*)(int, int, int, int, int, T, const T*, int, const T*, int, T, T*, int)>(f);
      return [=] { fn(kCol, kLower, kNoTrans, N, N, 1, a, N, b, N, 0, c, N); };
    }
    case Routine::gemmt: {
      auto fn = reinterpret_cast<void (*)(int, int, int, int, int, int, T, const T*, int, const T*, int, T, T*, int)>(f);
      return [=] { fn(kCol, kLower, kNoTrans, kTrans, N, N, 1, a, N, b, N, 0, c, N); };
    }
    case Routine::symm: {
      auto fn = reinterpret_cast<void (*)(int, int, int, int, int, T, const T*, int, const T*, int, T, T*, int)>(f);
      return [=] { fn(kCol, kLeft, kLower, N, N, 1, a, N, b, N, 0, c, N); };
    }
  }
  return {};
}

double flops_of(Routine r, index_t n) {
  const double n3 = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return (r == Routine::syr2k || r == Routine::symm) ? 2 * n3 : n3;
}

template <class T>
void run_level3(benchmark::State& state, Routine r, index_t n, int threads) {
  Operands<T> o(n);
  taihu::arch::set_num_threads(threads);
  std::vector<taihu::bench::Anchor> anchors;
  for (const auto& lib : peers()) {
    if (!lib->loaded()) continue;
    if (auto call = peer_call<T>(*lib, r, n, o)) {
      lib->set_threads(threads);
      anchors.push_back({lib->name(), call});
    }
  }
  taihu::bench::Work work;
  work.flops = flops_of(r, n);
  work.bytes = sizeof(T) * 3.0 * static_cast<double>(n * n);
  taihu::bench::compare(state, work, sizeof(T) == 4 ? taihu::bench::Ceiling::peak_sp : taihu::bench::Ceiling::peak_dp,
                        threads, taihu_call<T>(r, n, o), anchors);
  taihu::arch::set_num_threads(0);
}

void run_sbgemm(benchmark::State& state, index_t n, int threads) {
  const auto nn = static_cast<std::size_t>(n * n);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<tg::bf16> a(nn), b(nn);
  for (auto& x : a) x = tg::float_to_bf16(u(rng));
  for (auto& x : b) x = tg::float_to_bf16(u(rng));
  std::vector<float> c(nn, 0.0f);
  taihu::arch::set_num_threads(threads);
  const int N = static_cast<int>(n);
  std::vector<taihu::bench::Anchor> anchors;
  for (const auto& lib : peers()) {
    if (!lib->loaded()) continue;
    using Fn = void (*)(int, int, int, int, int, int, float, const tg::bf16*, int, const tg::bf16*, int, float, float*, int);
    auto fn = reinterpret_cast<Fn>(lib->symbol("cblas_gemm_bf16bf16f32"));
    if (fn == nullptr) fn = reinterpret_cast<Fn>(lib->symbol("cblas_sbgemm"));
    if (fn == nullptr) continue;
    lib->set_threads(threads);
    anchors.push_back({lib->name(), [&, fn] { fn(kCol, kNoTrans, kNoTrans, N, N, N, 1.f, a.data(), N, b.data(), N, 0.f, c.data(), N); }});
  }
  taihu::bench::Work work;
  work.flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  work.bytes = 2.0 * 2 * static_cast<double>(nn) + 4.0 * static_cast<double>(nn);
  taihu::bench::compare(
      state, work, taihu::bench::Ceiling::peak_sp, threads,
      [&] { tg::sbgemm(tg::Layout::col_major, tg::Trans::no, tg::Trans::no, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n); },
      anchors);
  taihu::arch::set_num_threads(0);
}

benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b, double flops, int threads) {
  // About 0.3 s of taihu time per row at ~50 GFLOP/s per thread, 5..100 repeats.
  const auto iters = static_cast<benchmark::IterationCount>(std::clamp(0.3 * 50e9 * threads / flops, 5.0, 100.0));
  return b->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
}

const bool registered = [] {
  const Routine routines[] = {Routine::trsm, Routine::syrk, Routine::gemmt, Routine::symm, Routine::trmm, Routine::syr2k};
  for (const char* type : {"s", "d"})
    for (Routine r : routines)
      for (index_t n : {index_t{512}, index_t{1024}, index_t{2048}})
        for (int threads : {1, 2}) {
          const std::string name = std::string("level3/") + type + name_of(r) + "/" + std::to_string(n) +
                                   "/threads:" + std::to_string(threads);
          const bool single = type[0] == 's';
          configure(benchmark::RegisterBenchmark(name.c_str(),
                                                 [r, n, threads, single](benchmark::State& st) {
                                                   if (single) run_level3<float>(st, r, n, threads);
                                                   else run_level3<double>(st, r, n, threads);
                                                 }),
                    flops_of(r, n), threads);
        }
  for (index_t n : {index_t{512}, index_t{2048}})
    for (int threads : {1, 2}) {
      const std::string name = "level3/sbgemm/" + std::to_string(n) + "/threads:" + std::to_string(threads);
      configure(benchmark::RegisterBenchmark(name.c_str(), [n, threads](benchmark::State& st) { run_sbgemm(st, n, threads); }),
                2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n), threads);
    }
  return true;
}();

}  // namespace
