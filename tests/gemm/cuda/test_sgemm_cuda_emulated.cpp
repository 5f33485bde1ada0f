// The CUDA SGEMM kernels run on the host, so their index math, edge handling, float4
// paths and barriers are checked on every machine, GPU or not. The real device headers
// (gemm/cuda/src: loaders, double-buffered main loops, thread and warp math,
// epilogues) compile as C++ against the stand-ins in emulation/ (no CUDA include path
// reaches this test); a block is 256 std::threads, __syncthreads/__syncwarp are
// std::barrier waits, shared memory is poisoned with NaN before every block (a read
// before the write shows up in C), and A, B and C are allocated to their exact extent
// (with the sanitize build, ASan reports any read or write past them; TSan any shared-
// memory race). The wmma stand-in follows the documented fragment semantics, so what
// this cannot see is the hardware itself: real lane mappings, timing, occupancy.
#include <gtest/gtest.h>

#include <array>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "epilogue/epilogue_simt.cuh"
#include "epilogue/epilogue_wmma.cuh"
#include "threadblock/mma_simt_pipelined.cuh"
#include "threadblock/mma_tf32_pipelined.cuh"

thread_local EmulatedIndex threadIdx, blockIdx;

namespace {

using namespace taihu::gemm_cuda::detail;

constexpr unsigned kThreads = 256;
std::barrier<>* g_block = nullptr;
std::array<std::unique_ptr<std::barrier<>>, kThreads / 32> g_warps;

alignas(128) MmaSimtPipelined::SharedStorage g_simt_shared;
alignas(128) MmaTf32Pipelined::SharedStorage g_tf32_shared;

// The kernel bodies of kernel/sgemm_simt_128x128x8.cu and
// kernel/sgemm_tf32_wmma_128x128x16.cu, with __shared__ storage as a global.
void simt_block(const GemmParams& p) {
  using Mainloop = MmaSimtPipelined;
  const long long m0 = static_cast<long long>(blockIdx.x) * Mainloop::kTile;
  const long long n0 = static_cast<long long>(blockIdx.y) * Mainloop::kTile;
  ThreadMma8x8 mma;
  Mainloop::run(p, m0, n0, g_simt_shared, mma);
  EpilogueSimt::store(p, m0, n0, Mainloop::thread_m(), Mainloop::thread_n(), mma);
}

void tf32_block(const GemmParams& p) {
  using Mainloop = MmaTf32Pipelined;
  const long long m0 = static_cast<long long>(blockIdx.x) * Mainloop::kTile;
  const long long n0 = static_cast<long long>(blockIdx.y) * Mainloop::kTile;
  WarpMmaTf32 mma;
  Mainloop::run(p, m0, n0, g_tf32_shared, mma);
  float* stage = &g_tf32_shared.a[0][0][0] + (threadIdx.x / 32) * EpilogueWmma::kStageFloats;
  EpilogueWmma::store(p, m0 + Mainloop::warp_m0(), n0 + Mainloop::warp_n0(), mma, stage);
}

enum class Kernel { simt, tf32 };

// One launch: 256 threads walk the grid block by block, as one resident block at a time.
void launch(Kernel kernel, const GemmParams& p) {
  const unsigned gx = static_cast<unsigned>((p.m + kTileM - 1) / kTileM);
  const unsigned gy = static_cast<unsigned>((p.n + kTileN - 1) / kTileN);
  std::barrier<> block(kThreads);
  g_block = &block;
  for (auto& w : g_warps) w = std::make_unique<std::barrier<>>(32);
  float* shared = kernel == Kernel::simt ? &g_simt_shared.a[0][0][0] : &g_tf32_shared.a[0][0][0];
  const std::size_t shared_floats =
      (kernel == Kernel::simt ? sizeof g_simt_shared : sizeof g_tf32_shared) / sizeof(float);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      for (unsigned by = 0; by < gy; ++by)
        for (unsigned bx = 0; bx < gx; ++bx) {
          if (t == 0)
            for (std::size_t i = 0; i < shared_floats; ++i)
              shared[i] = std::numeric_limits<float>::quiet_NaN();
          __syncthreads();
          blockIdx = {bx, by, 0};
          if (kernel == Kernel::simt)
            simt_block(p);
          else
            tf32_block(p);
          __syncthreads();
        }
    });
  for (auto& th : threads) th.join();
}

// Layout variants: 0 tight leading dimensions, 1 padded to a multiple of 4 (float4
// paths), 2 tight + 3 with every pointer one float past 16-byte alignment.
std::string run_case(Kernel kernel, bool ta, bool tb, long long m, long long n, long long k,
                     int variant, float alpha, float beta, std::mt19937& rng) {
  auto ld = [variant](long long rows) -> long long {
    if (variant == 1) return (rows + 3) / 4 * 4 + 4;
    if (variant == 2) return rows + 3;
    return rows;
  };
  const long long a_rows = ta ? k : m, a_cols = ta ? m : k;
  const long long b_rows = tb ? n : k, b_cols = tb ? k : n;
  const long long lda = ld(a_rows), ldb = ld(b_rows), ldc = ld(m);
  const std::size_t off = variant == 2 ? 1 : 0;
  // Exact extents: the last column holds only `rows` elements.
  std::vector<float> a(off + static_cast<std::size_t>(lda * (a_cols - 1) + a_rows));
  std::vector<float> b(off + static_cast<std::size_t>(ldb * (b_cols - 1) + b_rows));
  std::vector<float> c(off + static_cast<std::size_t>(ldc * (n - 1) + m));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  for (auto& x : c) x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  const std::vector<float> c0 = c;

  GemmParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.a = a.data() + off;
  p.lda = lda;
  p.b = b.data() + off;
  p.ldb = ldb;
  p.c = c.data() + off;
  p.ldc = ldc;
  p.trans_a = ta;
  p.trans_b = tb;
  auto aligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
  p.vec_a = aligned(p.a) && lda % 4 == 0;
  p.vec_b = aligned(p.b) && ldb % 4 == 0;
  p.vec_c = aligned(p.c) && ldc % 4 == 0;
  launch(kernel, p);

  const double unit = std::ldexp(1.0, -24);
  const double tol = (kernel == Kernel::tf32 ? std::ldexp(1.0, -9) : 0.0) +
                     2.0 * static_cast<double>(k + 4) * unit;
  std::ostringstream out;
  int bad = 0;
  for (long long j = 0; j < n; ++j)
    for (long long i = 0; i < (j + 1 < n ? ldc : m); ++i) {
      const std::size_t e = off + static_cast<std::size_t>(i + j * ldc);
      const float got = c[e];
      double want = 0, bound = 0;
      bool ok = true;
      if (i >= m) {  // ldc padding: untouched
        ok = (std::isnan(c0[e]) && std::isnan(got)) || c0[e] == got;
        want = static_cast<double>(c0[e]);
      } else {
        double s = 0, sa = 0;
        for (long long l = 0; l < k; ++l) {
          const double av = ta ? a[off + static_cast<std::size_t>(l + i * lda)]
                               : a[off + static_cast<std::size_t>(i + l * lda)];
          const double bv = tb ? b[off + static_cast<std::size_t>(j + l * ldb)]
                               : b[off + static_cast<std::size_t>(l + j * ldb)];
          s += av * bv;
          sa += std::fabs(av * bv);
        }
        want = static_cast<double>(alpha) * s;
        bound = std::fabs(static_cast<double>(alpha)) * sa;
        if (beta != 0.0f) {
          want += static_cast<double>(beta) * static_cast<double>(c0[e]);
          bound += std::fabs(static_cast<double>(beta) * static_cast<double>(c0[e]));
        }
        ok = std::fabs(static_cast<double>(got) - want) <= tol * bound + 1e-30;
      }
      if (!ok && bad++ < 3)
        out << "  C(" << i << ", " << j << ") = " << got << ", want " << want << "\n";
    }
  if (bad == 0) return {};
  std::ostringstream head;
  head << (kernel == Kernel::simt ? "simt " : "tf32 ") << (ta ? 'T' : 'N') << (tb ? 'T' : 'N')
       << " m" << m << "n" << n << "k" << k << " layout " << variant << " alpha " << alpha
       << " beta " << beta << ": " << bad << " wrong\n";
  return head.str() + out.str();
}

void check_kernel(Kernel kernel) {
  std::mt19937 rng(kernel == Kernel::simt ? 1u : 2u);
  // Edges on every side of the 128 x 128 tile and of the k step (8 or 16), k tails,
  // single rows/columns, and a k long enough for many double-buffer swaps.
  const std::array<long long, 3> shapes[] = {{1, 1, 1},      {4, 4, 4},      {128, 128, 8},
                                             {129, 127, 17}, {131, 3, 33},   {3, 259, 7},
                                             {200, 140, 37}, {127, 129, 16}, {5, 6, 301}};
  const float alphas[] = {1.0f, -1.0f, 0.5f, 1.0f};
  const float betas[] = {0.0f, 1.0f, -1.0f, 0.5f};
  int run = 0;
  for (const auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const std::string err = run_case(kernel, ta, tb, s[0], s[1], s[2], run % 3, alphas[run % 4],
                                         betas[(run / 4) % 4], rng);
        ++run;
        ASSERT_TRUE(err.empty()) << err;
      }
}

TEST(SgemmCudaEmulated, SimtKernelMatchesHostLoop) { check_kernel(Kernel::simt); }

TEST(SgemmCudaEmulated, Tf32WmmaKernelMatchesHostLoop) { check_kernel(Kernel::tf32); }

}  // namespace

void __syncthreads() { g_block->arrive_and_wait(); }
void __syncwarp() { g_warps[threadIdx.x / 32]->arrive_and_wait(); }
