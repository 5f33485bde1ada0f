// The AVX-512 twin of the hand-written order-8 acoustic line kernel
// (stencil/src/kernels/cpu/acoustic_o8_x86.hpp) on any x86 CPU: its intrinsics run
// through SIMDe's emulation (built only where SIMDe's headers exist), against a plain
// double-precision update of the same points, on several line lengths, strides and line
// alignments (the kernel runs 64-byte-aligned vectors with masked ends): every point of
// the lines is updated and no other point is touched.
// On AVX-512 CPUs the real instructions are tested by test_stencil_kernels under
// TAIHU_ISA=avx512.
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

// SIMDe 0.7 has no 512-bit alignr: lanes imm .. imm + 15 of the concatenation (b low,
// a high), as Intel documents _mm512_mask_alignr_epi32 with every mask bit set.
static inline simde__m512i emulated_mask_alignr_epi32(simde__m512i w, simde__mmask16 m, simde__m512i a,
                                                      simde__m512i b, int imm) {
  int t[32], keep[16], r[16];
  std::memcpy(t, &b, 64);
  std::memcpy(t + 16, &a, 64);
  std::memcpy(keep, &w, 64);
  for (int i = 0; i < 16; ++i) r[i] = ((m >> i) & 1) ? (i + imm < 32 ? t[i + imm] : 0) : keep[i];
  simde__m512i out;
  std::memcpy(&out, r, 64);
  return out;
}
#define _mm512_mask_alignr_epi32 emulated_mask_alignr_epi32
#define TAIHU_STENCIL_EMULATE_AVX512 1
#include "kernels/cpu/acoustic_o8_x86.hpp"

namespace {
using taihu::stencil::kernels::AcousticO8Weights;
using taihu::stencil::kernels::line_acoustic_o8_x86;

TEST(StencilO8Avx512Emulated, MatchesPlainUpdate) {
  const AcousticO8Weights w{-3.1f, {0.f, 1.6f, -0.2f, 0.025f, -0.0018f}, 0.7f, 1.3f};
  for (long shift : {0L, 5L, 8L})
  for (long n0 : {5L, 16L, 17L, 31L, 32L, 40L, 77L}) {
    const long s1 = (n0 + 16 + 15) / 16 * 16 + (n0 % 2) * 16, nx = 6, ny = 5;
    const long s2 = s1 * (nx + 16), total = s2 * (ny + 16);
    std::vector<float> u(total), up(total), A(total);
    std::mt19937 rng(static_cast<unsigned>(n0));
    std::uniform_real_distribution<float> d(-0.5f, 0.5f);
    for (long i = 0; i < total; ++i) {
      u[i] = d(rng);
      up[i] = d(rng);
      A[i] = 0.6f + d(rng);
    }
    std::vector<float> expect = up;
    double maxdiff = 0, maxabs = 0;
    for (long y = 0; y < ny; ++y)
      for (long x = 0; x < nx; ++x) {
        const long off = (y + 8) * s2 + (x + 8) * s1 + 8 + shift;
        const long done = line_acoustic_o8_x86(u.data() + off, up.data() + off, A.data() + off, n0, s1, s2, w);
        ASSERT_EQ(done, n0) << "n0 " << n0;
        for (long i = 0; i < done; ++i) {
          const long c = off + i;
          double lz = w.centre * double(u[c]), lx = 0, ly = 0;
          for (int k = 1; k <= 4; ++k) {
            lz += w.w[k] * (double(u[c + k]) + u[c - k]);
            lx += w.w[k] * (double(u[c + k * s1]) + u[c - k * s1]);
            ly += w.w[k] * (double(u[c + k * s2]) + u[c - k * s2]);
          }
          expect[c] = float(2.0 * u[c] - expect[c] + A[c] * (lz + w.rx * lx + w.ry * ly));
        }
      }
    for (long i = 0; i < total; ++i) {
      maxdiff = std::max(maxdiff, std::abs(double(up[i]) - expect[i]));
      maxabs = std::max(maxabs, std::abs(double(expect[i])));
    }
    EXPECT_LT(maxdiff, 1e-6 * maxabs) << "n0 " << n0 << " shift " << shift;
  }
}
}  // namespace
