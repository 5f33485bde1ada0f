// A hand-scheduled AVX-512 DGEMM micro-kernel in GNU inline assembly: the 16x14 register
// tile of BLIS's skx kernel (28 accumulators zmm4-zmm31, A in zmm0-1, B broadcasts
// alternating through zmm2-3), written here from scratch. Include only from a translation
// unit compiled with the AVX-512 flags (kernels/avx512/).
//
// Contract (the full-tile case of microkernel.hpp): C(16 x 14, column major, ldc) :=
// alpha * Ap * Bp + beta * C, with Ap a packed A micro-panel (k steps of 16 contiguous
// doubles, a_step == 16) and Bp a packed B micro-panel (k steps of 14). beta == 0 never
// reads C. k may be 0. The caller handles edges and A read in place (a_step != 16).
//
// Schedule, per k step: 2 loads of A, 14 vbroadcastsd of B into registers (the embedded
// {1to8} form costs one load per FMA and measured 5-15% slower here), each broadcast
// followed by the 2 FMAs that use it; 16 loads per 28 FMAs, below the 2 loads/cycle the
// core sustains beside 2 FMAs/cycle. The k loop:
//   1. k % 4 single steps (so the unrolled loop needs no exit test inside);
//   2. groups of 4 steps, each prefetching the 8 lines of A kPfA bytes ahead and the 7
//      lines of B kPfB bytes ahead (one prefetch per line, spread over the group);
//   3. the last 14 * tail_steps steps (when k has them): each group of tail_steps prefetches
//      one column of C (prefetchw: it is written next) so that the C update does not
//      wait on memory, while late enough that the lines are not evicted meanwhile
//      (BLIS skx prefetches C in its last iterations the same way). For shorter k
//      every column is prefetched before the loop.
// The C update runs in the same asm block (the accumulators never leave registers):
// beta == 0: C = alpha * acc; beta == 1: C = alpha * acc + C (one FMA with C as the
// memory operand); otherwise C = alpha * acc + (beta * C), rounded as the template.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm::kernels::asm16x14 {

inline constexpr int kMr = 16;
inline constexpr int kNr = 14;

#define TAIHU_ASM_FMA2(B, X, Y)                    \
  "vfmadd231pd %%zmm0, %%zmm" #B ", %%zmm" #X "\n\t" \
  "vfmadd231pd %%zmm1, %%zmm" #B ", %%zmm" #Y "\n\t"

// One k step: A at byte offset AO from %[a], B at BO from %[b]. Broadcast j goes to
// zmm2 (even j) or zmm3 (odd j) one pair of FMAs ahead of its use.
#define TAIHU_ASM_KSTEP(AO, BO)                  \
  "vmovupd " #AO "(%[a]), %%zmm0\n\t"            \
  "vmovupd " #AO "+64(%[a]), %%zmm1\n\t"         \
  "vbroadcastsd " #BO "(%[b]), %%zmm2\n\t"       \
  "vbroadcastsd " #BO "+8(%[b]), %%zmm3\n\t"     \
  TAIHU_ASM_FMA2(2, 4, 5)                        \
  "vbroadcastsd " #BO "+16(%[b]), %%zmm2\n\t"    \
  TAIHU_ASM_FMA2(3, 6, 7)                        \
  "vbroadcastsd " #BO "+24(%[b]), %%zmm3\n\t"    \
  TAIHU_ASM_FMA2(2, 8, 9)                        \
  "vbroadcastsd " #BO "+32(%[b]), %%zmm2\n\t"    \
  TAIHU_ASM_FMA2(3, 10, 11)                      \
  "vbroadcastsd " #BO "+40(%[b]), %%zmm3\n\t"    \
  TAIHU_ASM_FMA2(2, 12, 13)                      \
  "vbroadcastsd " #BO "+48(%[b]), %%zmm2\n\t"    \
  TAIHU_ASM_FMA2(3, 14, 15)                      \
  "vbroadcastsd " #BO "+56(%[b]), %%zmm3\n\t"    \
  TAIHU_ASM_FMA2(2, 16, 17)                      \
  "vbroadcastsd " #BO "+64(%[b]), %%zmm2\n\t"    \
  TAIHU_ASM_FMA2(3, 18, 19)                      \
  "vbroadcastsd " #BO "+72(%[b]), %%zmm3\n\t"    \
  TAIHU_ASM_FMA2(2, 20, 21)                      \
  "vbroadcastsd " #BO "+80(%[b]), %%zmm2\n\t"    \
  TAIHU_ASM_FMA2(3, 22, 23)                      \
  "vbroadcastsd " #BO "+88(%[b]), %%zmm3\n\t"    \
  TAIHU_ASM_FMA2(2, 24, 25)                      \
  "vbroadcastsd " #BO "+96(%[b]), %%zmm2\n\t"    \
  TAIHU_ASM_FMA2(3, 26, 27)                      \
  "vbroadcastsd " #BO "+104(%[b]), %%zmm3\n\t"   \
  TAIHU_ASM_FMA2(2, 28, 29)                      \
  TAIHU_ASM_FMA2(3, 30, 31)

#define TAIHU_ASM_PFA(OFF) "prefetcht0 %c[pfa]+" #OFF "(%[a])\n\t"
#define TAIHU_ASM_PFB(OFF) "prefetcht0 %c[pfb]+" #OFF "(%[b])\n\t"

// C update of column pointer %[cp] with accumulators X (rows 0-7) and Y (rows 8-15);
// zmm0 = alpha, zmm1 = beta. Then %[cp] moves to the next column.
#define TAIHU_ASM_C_BETA0(X, Y)                      \
  "vmulpd %%zmm0, %%zmm" #X ", %%zmm" #X "\n\t"      \
  "vmulpd %%zmm0, %%zmm" #Y ", %%zmm" #Y "\n\t"      \
  "vmovupd %%zmm" #X ", (%[cp])\n\t"                 \
  "vmovupd %%zmm" #Y ", 64(%[cp])\n\t"               \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM_C_BETA1(X, Y)                           \
  "vfmadd213pd (%[cp]), %%zmm0, %%zmm" #X "\n\t"          \
  "vfmadd213pd 64(%[cp]), %%zmm0, %%zmm" #Y "\n\t"        \
  "vmovupd %%zmm" #X ", (%[cp])\n\t"                      \
  "vmovupd %%zmm" #Y ", 64(%[cp])\n\t"                    \
  "add %[ldc], %[cp]\n\t"
// General beta rounds as the intrinsics template does, alpha * acc + (beta * C) in one
// FMA, so that a product is bitwise the same whichever kernel computes a tile (the
// template takes A read in place): zmm2-3 hold beta * C.
#define TAIHU_ASM_C_BETAN(X, Y)                           \
  "vmulpd (%[cp]), %%zmm1, %%zmm2\n\t"                    \
  "vmulpd 64(%[cp]), %%zmm1, %%zmm3\n\t"                  \
  "vfmadd231pd %%zmm0, %%zmm" #X ", %%zmm2\n\t"           \
  "vfmadd231pd %%zmm0, %%zmm" #Y ", %%zmm3\n\t"           \
  "vmovupd %%zmm2, (%[cp])\n\t"                          \
  "vmovupd %%zmm3, 64(%[cp])\n\t"                        \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM_C_ALL(M)                                                                \
  M(4, 5) M(6, 7) M(8, 9) M(10, 11) M(12, 13) M(14, 15) M(16, 17) M(18, 19) M(20, 21) \
  M(22, 23) M(24, 25) M(26, 27) M(28, 29) M(30, 31)

// Prefetch for writing the 128 bytes of column %[cpf] (3 lines when ldc leaves it
// unaligned), then move to the next column.
#define TAIHU_ASM_PFC               \
  "prefetchw (%[cpf])\n\t"          \
  "prefetchw 64(%[cpf])\n\t"        \
  "prefetchw 127(%[cpf])\n\t"       \
  "add %[ldc], %[cpf]\n\t"

// kPfA / kPfB: prefetch distance in bytes for A and B; tail_steps (>= 1): k steps per
// C column in the C-prefetching tail.
template <int kPfA, int kPfB>
inline void dgemm_16x14(index_t k, double alpha, const double* a, const double* b, double beta, double* c,
                        index_t ldc, std::int64_t tail_steps) {
  const std::int64_t ldc_bytes = static_cast<std::int64_t>(ldc) * 8;
  const std::int64_t per_col = tail_steps;
  std::int64_t tail = 0, inner;
  if (k >= kNr * per_col) {
    tail = kNr;
  } else {
    for (int j = 0; j < kNr; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc + 15), _MM_HINT_T0);
    }
  }
  const std::int64_t body = static_cast<std::int64_t>(k) - tail * per_col;
  std::int64_t singles = body % 4, groups = body / 4;
  const std::int64_t mode = beta == 0.0 ? 0 : beta == 1.0 ? 1 : 2;
  double* cp = c;
  double* cpf = c;
  const double* ap = a;
  const double* bp = b;
  __asm__ volatile(
      // Accumulators := 0.
      "vpxord %%zmm4, %%zmm4, %%zmm4\n\t"
      "vmovapd %%zmm4, %%zmm5\n\t vmovapd %%zmm4, %%zmm6\n\t vmovapd %%zmm4, %%zmm7\n\t"
      "vmovapd %%zmm4, %%zmm8\n\t vmovapd %%zmm4, %%zmm9\n\t vmovapd %%zmm4, %%zmm10\n\t"
      "vmovapd %%zmm4, %%zmm11\n\t vmovapd %%zmm4, %%zmm12\n\t vmovapd %%zmm4, %%zmm13\n\t"
      "vmovapd %%zmm4, %%zmm14\n\t vmovapd %%zmm4, %%zmm15\n\t vmovapd %%zmm4, %%zmm16\n\t"
      "vmovapd %%zmm4, %%zmm17\n\t vmovapd %%zmm4, %%zmm18\n\t vmovapd %%zmm4, %%zmm19\n\t"
      "vmovapd %%zmm4, %%zmm20\n\t vmovapd %%zmm4, %%zmm21\n\t vmovapd %%zmm4, %%zmm22\n\t"
      "vmovapd %%zmm4, %%zmm23\n\t vmovapd %%zmm4, %%zmm24\n\t vmovapd %%zmm4, %%zmm25\n\t"
      "vmovapd %%zmm4, %%zmm26\n\t vmovapd %%zmm4, %%zmm27\n\t vmovapd %%zmm4, %%zmm28\n\t"
      "vmovapd %%zmm4, %%zmm29\n\t vmovapd %%zmm4, %%zmm30\n\t vmovapd %%zmm4, %%zmm31\n\t"
      // 1. k % 4 single steps.
      "test %[singles], %[singles]\n\t"
      "jz 2f\n\t"
      "1:\n\t"
      TAIHU_ASM_KSTEP(0, 0)
      "add $128, %[a]\n\t"
      "add $112, %[b]\n\t"
      "dec %[singles]\n\t"
      "jnz 1b\n\t"
      "2:\n\t"
      // 2. Groups of 4 steps with A and B prefetch.
      "test %[groups], %[groups]\n\t"
      "jz 4f\n\t"
      ".p2align 5\n\t"
      "3:\n\t"
      TAIHU_ASM_PFA(0) TAIHU_ASM_PFB(0)
      TAIHU_ASM_KSTEP(0, 0)
      TAIHU_ASM_PFA(64) TAIHU_ASM_PFA(128) TAIHU_ASM_PFB(64) TAIHU_ASM_PFB(128)
      TAIHU_ASM_KSTEP(128, 112)
      TAIHU_ASM_PFA(192) TAIHU_ASM_PFA(256) TAIHU_ASM_PFB(192) TAIHU_ASM_PFB(256)
      TAIHU_ASM_KSTEP(256, 224)
      TAIHU_ASM_PFA(320) TAIHU_ASM_PFA(384) TAIHU_ASM_PFA(448) TAIHU_ASM_PFB(320) TAIHU_ASM_PFB(384)
      TAIHU_ASM_KSTEP(384, 336)
      "add $512, %[a]\n\t"
      "add $448, %[b]\n\t"
      "dec %[groups]\n\t"
      "jnz 3b\n\t"
      "4:\n\t"
      // 3. The last 14 * tail_steps steps, one C column prefetched per tail_steps steps.
      "test %[tail], %[tail]\n\t"
      "jz 6f\n\t"
      "5:\n\t"
      TAIHU_ASM_PFC
      "mov %[per_col], %[inner]\n\t"
      "7:\n\t"
      TAIHU_ASM_PFA(0) TAIHU_ASM_PFA(64)
      TAIHU_ASM_KSTEP(0, 0)
      "add $128, %[a]\n\t"
      "add $112, %[b]\n\t"
      "dec %[inner]\n\t"
      "jnz 7b\n\t"
      "dec %[tail]\n\t"
      "jnz 5b\n\t"
      "6:\n\t"
      // C update.
      "vbroadcastsd (%[alpha]), %%zmm0\n\t"
      "vbroadcastsd (%[beta]), %%zmm1\n\t"
      "cmp $1, %[mode]\n\t"
      "je 8f\n\t"
      "ja 9f\n\t"
      TAIHU_ASM_C_ALL(TAIHU_ASM_C_BETA0)
      "jmp 10f\n\t"
      "8:\n\t"
      TAIHU_ASM_C_ALL(TAIHU_ASM_C_BETA1)
      "jmp 10f\n\t"
      "9:\n\t"
      TAIHU_ASM_C_ALL(TAIHU_ASM_C_BETAN)
      "10:\n\t"
      "vzeroupper\n\t"
      : [a] "+r"(ap), [b] "+r"(bp), [singles] "+r"(singles), [groups] "+r"(groups), [tail] "+r"(tail),
        [cp] "+r"(cp), [cpf] "+r"(cpf), [inner] "=&r"(inner)
      : [ldc] "r"(ldc_bytes), [alpha] "r"(&alpha), [beta] "r"(&beta), [mode] "r"(mode),
        [per_col] "r"(per_col), [pfa] "i"(kPfA), [pfb] "i"(kPfB)
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
        "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}

#undef TAIHU_ASM_FMA2
#undef TAIHU_ASM_KSTEP
#undef TAIHU_ASM_PFA
#undef TAIHU_ASM_PFB
#undef TAIHU_ASM_C_BETA0
#undef TAIHU_ASM_C_BETA1
#undef TAIHU_ASM_C_BETAN
#undef TAIHU_ASM_C_ALL
#undef TAIHU_ASM_PFC

}  // namespace taihu::gemm::kernels::asm16x14
