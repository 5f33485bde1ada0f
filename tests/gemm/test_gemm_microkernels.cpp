// The AVX-512 micro-kernels called directly, the DGEMM tiles (16x12, 24x8, the inline-asm
// 16x14 and the inline-asm 24x8 in both B forms) and the SGEMM tiles (32x12, the inline-asm 32x14), against a naive loop: the full tile, every narrow (column-edge) variant,
// the half-rows variant, every unpacked-B width with op(B) column- and row-major, A read
// as a packed panel (a_step == mr) and in place (a_step > mr), k = 0, 1 and odd, and
// beta = 0 (C holds NaN, which must not leak), 1 and -0.5, with C's leading dimension
// larger than the tile. The asm tile also runs every k that reaches its code paths (the
// k % 4 single steps, the unrolled groups, the C-prefetching tail of 28 steps) and C at
// an address off the 64-byte line. The software-pipelined x14 asm (B as embedded
// broadcasts, A loaded one k step ahead) runs the same and, with A's panel ending at a
// guard page, must not read past it. Skips on CPUs without AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "kernels/microkernel.hpp"
#include "taihu/arch/cpu_features.hpp"

namespace {

using taihu::gemm::index_t;
namespace kernels = taihu::gemm::kernels;

// What one call must produce: C[i, j] for i < rows, j < cols, the rest of C untouched.
template <class T>
void check_tile(const char* what, int rows, int cols, index_t k, T alpha, const std::vector<T>& a,
                index_t a_step, const std::vector<T>& b, index_t b_rs, index_t b_cs, T beta,
                const std::vector<T>& c0, const std::vector<T>& c, index_t ldc) {
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (index_t j = 0; j < ldc; ++j)  // ldc columns is more than enough to cover the tile
    for (index_t i = 0; i < ldc; ++i) {
      const size_t at = static_cast<size_t>(i + j * ldc);
      if (at >= c.size()) continue;
      if (i >= rows || j >= cols) {
        ASSERT_TRUE(c[at] == c0[at] || (std::isnan(c[at]) && std::isnan(c0[at])))
            << what << ": wrote outside the tile at (" << i << ", " << j << ")";
        continue;
      }
      double ref = 0, mag = 0;
      for (index_t p = 0; p < k; ++p) {
        const double t = double(a[static_cast<size_t>(p * a_step + i)]) * b[static_cast<size_t>(p * b_rs + j * b_cs)];
        ref += t;
        mag += std::fabs(t);
      }
      ref *= alpha;
      mag *= std::fabs(double(alpha));
      if (beta != T(0)) {
        ref += double(beta) * c0[at];
        mag += std::fabs(double(beta) * c0[at]);
      }
      ASSERT_NEAR(c[at], ref, tol * (mag + 1)) << what << " k=" << k << " beta=" << beta << " a_step=" << a_step
                                               << " at (" << i << ", " << j << ")";
    }
}

template <class T>
void exercise(const kernels::MicroKernel<T>& uk, std::vector<index_t> ks = {0, 1, 7, 37}) {
  std::mt19937_64 rng(20);
  std::uniform_real_distribution<double> u(-1, 1);
  const int mr = uk.mr, nr = uk.nr;
  const index_t ldc = mr + 3;
  for (index_t k : ks) {
    for (index_t a_step : {index_t(mr), index_t(mr + 5)}) {
      std::vector<T> a(static_cast<size_t>(a_step * (k + 1) + mr)), b(static_cast<size_t>((k + 1) * (nr + 3) + nr));
      for (auto& x : a) x = T(u(rng));
      for (auto& x : b) x = T(u(rng));
      for (T beta : {T(0), T(1), T(-0.5)}) {
        const T alpha = T(1.25);
        std::vector<T> c0(static_cast<size_t>(ldc * (nr + 1)));
        for (auto& x : c0) x = beta == T(0) ? std::numeric_limits<T>::quiet_NaN() : T(u(rng));
        // Full tile and narrow column edges: packed B, step p at b + p * nr.
        for (int cols = 1; cols <= nr; ++cols) {
          const auto fn = cols == nr ? uk.fn : uk.narrow[cols];
          if (fn == nullptr) continue;
          std::vector<T> c = c0;
          fn(k, alpha, a.data(), a_step, b.data(), beta, c.data(), ldc);
          check_tile("packed", mr, cols, k, alpha, a, a_step, b, nr, 1, beta, c0, c, ldc);
        }
        if (uk.half_rows != nullptr) {
          std::vector<T> c = c0;
          uk.half_rows(k, alpha, a.data(), a_step, b.data(), beta, c.data(), ldc);
          check_tile("half_rows", mr / 2, nr, k, alpha, a, a_step, b, nr, 1, beta, c0, c, ldc);
        }
        // op(B) in place: column-major (rs 1, cs k + 1) and its transpose (rs nr + 3, cs 1).
        for (int cols = 1; cols <= nr; ++cols) {
          if (uk.unpacked_b[cols] == nullptr) continue;
          const index_t strides[2][2] = {{1, k + 1}, {nr + 3, 1}};
          for (const auto& s : strides) {
            std::vector<T> c = c0;
            uk.unpacked_b[cols](k, alpha, a.data(), a_step, b.data(), s[0], s[1], beta, c.data(), ldc);
            check_tile("unpacked_b", mr, cols, k, alpha, a, a_step, b, s[0], s[1], beta, c0, c, ldc);
          }
        }
      }
    }
  }
}

bool have_avx512() {
  return taihu::arch::isa_supported(taihu::arch::Isa::avx512, taihu::arch::cpu_features());
}

// C one double past a 64-byte line (each column then spans one more line, all
// prefetched), a long k, beta = 0 over NaN (never read) and beta = 2: the tile matches
// the naive loop and nothing is written before it.
void check_unaligned_c(const kernels::MicroKernel<double>& uk, std::uint64_t seed) {
  const index_t mr = uk.mr, nr = uk.nr, k = 300, ldc = mr + 5;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(static_cast<size_t>(mr * k)), b(static_cast<size_t>(nr * k));
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  const auto span = static_cast<size_t>(ldc * (nr + 1));
  alignas(64) static double storage[8 + 29 * 15];  // the largest tile here: 24 x 14 rows
  ASSERT_LE(8 + span, sizeof storage / sizeof storage[0]);
  for (double beta : {0.0, 2.0}) {
    for (size_t i = 0; i < 8 + span; ++i)
      storage[i] = beta == 0.0 ? std::numeric_limits<double>::quiet_NaN() : u(rng);
    std::vector<double> c0(storage + 1, storage + 1 + span);
    uk.fn(k, -0.75, a.data(), mr, b.data(), beta, storage + 1, ldc);
    std::vector<double> c(storage + 1, storage + 1 + span);
    check_tile("unaligned C", uk.mr, uk.nr, k, -0.75, a, mr, b, nr, 1, beta, c0, c, ldc);
    EXPECT_TRUE(std::isnan(storage[0]) || beta != 0.0) << "wrote before the tile";
  }
}

TEST(Avx512MicroKernels, Dgemm16x12MatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ASSERT_EQ(kernels::kAvx512Kernels.dgemm.mr, 16);
  ASSERT_EQ(kernels::kAvx512Kernels.dgemm.nr, 12);
  exercise(kernels::kAvx512Kernels.dgemm);
}

TEST(Avx512MicroKernels, Dgemm24x8MatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ASSERT_EQ(kernels::kAvx512Kernels24x8.dgemm.mr, 24);
  ASSERT_EQ(kernels::kAvx512Kernels24x8.dgemm.nr, 8);
  exercise(kernels::kAvx512Kernels24x8.dgemm);
}

TEST(Avx512MicroKernels, Dgemm16x14AsmMatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ASSERT_EQ(kernels::kAvx512Kernels16x14.dgemm.mr, 16);
  ASSERT_EQ(kernels::kAvx512Kernels16x14.dgemm.nr, 14);
  exercise(kernels::kAvx512Kernels16x14.dgemm, {0, 1, 3, 4, 7, 27, 28, 29, 31, 32, 37, 64, 101, 256});
}

// The asm tile with C one double past a 64-byte line (each column then spans three
// lines, all prefetched) and a long k, beta = 0 over NaN and beta = 2.
TEST(Avx512MicroKernels, Dgemm16x14AsmUnalignedC) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  check_unaligned_c(kernels::kAvx512Kernels16x14.dgemm, 7);
}

// The inline-asm 24x8 in both forms of B (register and embedded broadcasts): every k that
// reaches its code paths (k % 4 single steps, the unrolled groups, the 8-step C tail).
TEST(Avx512MicroKernels, Dgemm24x8AsmMatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const auto* set : {&kernels::kAvx512Kernels24x8Asm, &kernels::kAvx512Kernels24x8AsmEmb}) {
    ASSERT_EQ(set->dgemm.mr, 24);
    ASSERT_EQ(set->dgemm.nr, 8);
    exercise(set->dgemm, {0, 1, 3, 4, 7, 8, 9, 11, 12, 13, 15, 16, 37, 64, 101, 256});
  }
}

// The asm 24x8 with C one double past a 64-byte line (each column spans four lines, all
// prefetched) and a long k, beta = 0 over NaN and beta = 2.
TEST(Avx512MicroKernels, Dgemm24x8AsmUnalignedC) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const auto* set : {&kernels::kAvx512Kernels24x8Asm, &kernels::kAvx512Kernels24x8AsmEmb})
    check_unaligned_c(set->dgemm, 11);
}

// The software-pipelined x14 asm (16x14pipe / 32x14pipe) in both precisions: every k
// that reaches its paths (all single steps when k < 14, else k % 4 singles, groups whose
// look-ahead loads the next step's A, the 14-step C tail), C one element off the line.
TEST(Avx512MicroKernels, X14PipelinedAsmMatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const std::vector<index_t> ks = {0, 1, 4, 13, 14, 15, 18, 19, 31, 32, 37, 101};
  ASSERT_EQ(kernels::kAvx512Kernels16x14Pipe.dgemm.mr, 16);
  ASSERT_EQ(kernels::kAvx512Kernels16x14Pipe.dgemm.nr, 14);
  exercise(kernels::kAvx512Kernels16x14Pipe.dgemm, ks);
  ASSERT_EQ(kernels::kAvx512Sgemm32x14Pipe.mr, 32);
  ASSERT_EQ(kernels::kAvx512Sgemm32x14Pipe.nr, 14);
  exercise(kernels::kAvx512Sgemm32x14Pipe, ks);
  check_unaligned_c(kernels::kAvx512Kernels16x14Pipe.dgemm, 13);
}

// The look-ahead load must stay inside A's panel: the panel ends where an inaccessible
// page begins, so a read past it faults (ASan does not see inside inline asm).
TEST(Avx512MicroKernels, X14PipelinedAsmReadsNothingPastA) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(map) + page, page, PROT_NONE), 0);
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  for (index_t k : {4, 13, 14, 18, 19, 31}) {  // 16 * k doubles fit in the page
    double* a_end = reinterpret_cast<double*>(static_cast<char*>(map) + page);
    double* ap = a_end - 16 * k;
    std::vector<double> a(static_cast<size_t>(16 * k)), b(static_cast<size_t>(14 * k));
    for (size_t i = 0; i < a.size(); ++i) ap[i] = a[i] = u(rng);
    for (auto& x : b) x = u(rng);
    std::vector<double> c0(16 * 14, 0.0), c = c0;
    kernels::kAvx512Kernels16x14Pipe.dgemm.fn(k, 1.0, ap, 16, b.data(), 0.0, c.data(), 16);
    check_tile("A at a guard page", 16, 14, k, 1.0, a, 16, b, 14, 1, 0.0, c0, c, 16);
  }
  munmap(map, 2 * page);
}

TEST(Avx512MicroKernels, Sgemm32x12MatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  exercise(kernels::kAvx512Kernels.sgemm);
}

// The same asm schedule in single precision: every k that reaches its code paths.
TEST(Avx512MicroKernels, Sgemm32x14AsmMatchesNaiveLoop) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ASSERT_EQ(kernels::kAvx512Sgemm32x14.mr, 32);
  ASSERT_EQ(kernels::kAvx512Sgemm32x14.nr, 14);
  exercise(kernels::kAvx512Sgemm32x14, {0, 1, 3, 4, 7, 27, 28, 29, 31, 32, 37, 64, 101, 256});
}

// Single precision with C one float past a 64-byte line and beta = 0 over NaN, 2.
TEST(Avx512MicroKernels, Sgemm32x14AsmUnalignedC) {
  if (!have_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const auto& uk = kernels::kAvx512Sgemm32x14;
  const index_t k = 300, ldc = 37;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>(32 * k)), b(static_cast<size_t>(14 * k));
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  alignas(64) static float storage[16 + 37 * 15];
  for (float beta : {0.0f, 2.0f}) {
    for (auto& x : storage) x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : u(rng);
    std::vector<float> c0(storage + 1, storage + 1 + ldc * 15);
    uk.fn(k, -0.75f, a.data(), 32, b.data(), beta, storage + 1, ldc);
    std::vector<float> c(storage + 1, storage + 1 + ldc * 15);
    check_tile("unaligned C", 32, 14, k, -0.75f, a, 32, b, 14, 1, beta, c0, c, ldc);
    EXPECT_TRUE(std::isnan(storage[0]) || beta != 0.0f) << "wrote before the tile";
  }
}

}  // namespace
