// Hand-scheduled AVX-512 GEMM micro-kernels in GNU inline assembly, one schedule for both
// precisions: the 14-column register tile of BLIS's skx DGEMM kernel, 2 vectors of A
// (16 doubles or 32 floats: 128 bytes) by 14 broadcasts of B, 28 accumulators
// zmm4-zmm31, A in zmm0-1, B broadcasts alternating through zmm2-3; written here from
// scratch. DGEMM 16x14 and SGEMM 32x14 differ only in the instruction suffix (pd / ps,
// sd / ss) and B's element size, so one macro body serves both. Include only from a
// translation unit compiled with the AVX-512 flags (kernels/avx512/).
//
// Contract (the full-tile case of microkernel.hpp): C(MR x 14, column major, ldc) :=
// alpha * Ap * Bp + beta * C, with Ap a packed A micro-panel (k steps of MR contiguous
// values, a_step == MR) and Bp a packed B micro-panel (k steps of 14). beta == 0 never
// reads C. k may be 0. The caller handles edges and A read in place (a_step != MR).
//
// Schedule, per k step: 2 loads of A, 14 broadcasts of B into registers (the embedded
// {1to8} form costs one load per FMA and measured 5-15% slower here), each broadcast
// followed by the 2 FMAs that use it; 16 loads per 28 FMAs, below the 2 loads/cycle the
// core sustains beside 2 FMAs/cycle. The k loop:
//   1. k % 4 single steps (so the unrolled loop needs no exit test inside);
//   2. groups of 4 steps, each prefetching the 8 lines of A kPfA bytes ahead and 7
//      prefetches over B's 4 steps kPfB bytes ahead (7 lines of doubles; 3.5 lines of
//      floats, two prefetches a line), spread over the group;
//   3. the last 14 * tail_steps steps (when k has them): each group of tail_steps prefetches
//      one column of C (prefetchw: it is written next) so that the C update does not
//      wait on memory, while late enough that the lines are not evicted meanwhile
//      (BLIS skx prefetches C in its last iterations the same way). For shorter k
//      every column is prefetched before the loop.
// A second, software-pipelined form (kPipelined; TAIHU_GEMM_DGEMM_TILE=16x14pipe,
// TAIHU_GEMM_SGEMM_TILE=32x14pipe) takes B as embedded-broadcast FMA operands, which
// frees zmm2-3 for a second A pair, and loads each step's A one step ahead (see
// TAIHU_ASM_TILE_X14_PIPE). Same phases, same C update, same rounding.
// The C update runs in the same asm block (the accumulators never leave registers):
// beta == 0: C = alpha * acc; beta == 1: C = alpha * acc + C (one FMA with C as the
// memory operand); otherwise C = alpha * acc + (beta * C), rounded as the template.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm::kernels::asm_x14 {

// Rows of the tile for element type T (two 64-byte vectors), and its columns.
template <class T>
inline constexpr int kMr = static_cast<int>(128 / sizeof(T));
inline constexpr int kNr = 14;

// S: the type suffix, "d" or "s"; B's element size in bytes is the asm operand %c[eb].
#define TAIHU_ASM_FMA2(S, B, X, Y)                      \
  "vfmadd231p" S " %%zmm0, %%zmm" #B ", %%zmm" #X "\n\t" \
  "vfmadd231p" S " %%zmm1, %%zmm" #B ", %%zmm" #Y "\n\t"

// One k step: A at byte offset AO from %[a], B at element offset BO (scaled by %c[eb])
// from %[b]. Broadcast j goes to zmm2 (even j) or zmm3 (odd j) one pair of FMAs ahead
// of its use.
#define TAIHU_ASM_BCAST(S, BO, J, R) "vbroadcasts" S " " #BO "*%c[eb]+" #J "*%c[eb](%[b]), %%zmm" #R "\n\t"
#define TAIHU_ASM_KSTEP(S, AO, BO)                                                       \
  "vmovup" S " " #AO "(%[a]), %%zmm0\n\t"                                              \
  "vmovup" S " " #AO "+64(%[a]), %%zmm1\n\t"                                           \
  TAIHU_ASM_BCAST(S, BO, 0, 2) TAIHU_ASM_BCAST(S, BO, 1, 3)                             \
  TAIHU_ASM_FMA2(S, 2, 4, 5)   TAIHU_ASM_BCAST(S, BO, 2, 2)                             \
  TAIHU_ASM_FMA2(S, 3, 6, 7)   TAIHU_ASM_BCAST(S, BO, 3, 3)                             \
  TAIHU_ASM_FMA2(S, 2, 8, 9)   TAIHU_ASM_BCAST(S, BO, 4, 2)                             \
  TAIHU_ASM_FMA2(S, 3, 10, 11) TAIHU_ASM_BCAST(S, BO, 5, 3)                             \
  TAIHU_ASM_FMA2(S, 2, 12, 13) TAIHU_ASM_BCAST(S, BO, 6, 2)                             \
  TAIHU_ASM_FMA2(S, 3, 14, 15) TAIHU_ASM_BCAST(S, BO, 7, 3)                             \
  TAIHU_ASM_FMA2(S, 2, 16, 17) TAIHU_ASM_BCAST(S, BO, 8, 2)                             \
  TAIHU_ASM_FMA2(S, 3, 18, 19) TAIHU_ASM_BCAST(S, BO, 9, 3)                             \
  TAIHU_ASM_FMA2(S, 2, 20, 21) TAIHU_ASM_BCAST(S, BO, 10, 2)                            \
  TAIHU_ASM_FMA2(S, 3, 22, 23) TAIHU_ASM_BCAST(S, BO, 11, 3)                            \
  TAIHU_ASM_FMA2(S, 2, 24, 25) TAIHU_ASM_BCAST(S, BO, 12, 2)                            \
  TAIHU_ASM_FMA2(S, 3, 26, 27) TAIHU_ASM_BCAST(S, BO, 13, 3)                            \
  TAIHU_ASM_FMA2(S, 2, 28, 29)                                                           \
  TAIHU_ASM_FMA2(S, 3, 30, 31)

#define TAIHU_ASM_PFA(OFF) "prefetcht0 %c[pfa]+" #OFF "(%[a])\n\t"
// B prefetches step 8 elements: a line of doubles, half a line of floats.
#define TAIHU_ASM_PFB(OFF8) "prefetcht0 %c[pfb]+" #OFF8 "*%c[eb](%[b])\n\t"

// C update of column pointer %[cp] with accumulators X (rows 0-7) and Y (rows 8-15);
// zmm0 = alpha, zmm1 = beta. Then %[cp] moves to the next column.
#define TAIHU_ASM_C_BETA0(S, X, Y)                      \
  "vmulp" S " %%zmm0, %%zmm" #X ", %%zmm" #X "\n\t"      \
  "vmulp" S " %%zmm0, %%zmm" #Y ", %%zmm" #Y "\n\t"      \
  "vmovup" S " %%zmm" #X ", (%[cp])\n\t"                 \
  "vmovup" S " %%zmm" #Y ", 64(%[cp])\n\t"               \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM_C_BETA1(S, X, Y)                           \
  "vfmadd213p" S " (%[cp]), %%zmm0, %%zmm" #X "\n\t"          \
  "vfmadd213p" S " 64(%[cp]), %%zmm0, %%zmm" #Y "\n\t"        \
  "vmovup" S " %%zmm" #X ", (%[cp])\n\t"                      \
  "vmovup" S " %%zmm" #Y ", 64(%[cp])\n\t"                    \
  "add %[ldc], %[cp]\n\t"
// General beta rounds as the intrinsics template does, alpha * acc + (beta * C) in one
// FMA, so that a product is bitwise the same whichever kernel computes a tile (the
// template takes A read in place): zmm2-3 hold beta * C.
#define TAIHU_ASM_C_BETAN(S, X, Y)                           \
  "vmulp" S " (%[cp]), %%zmm1, %%zmm2\n\t"                    \
  "vmulp" S " 64(%[cp]), %%zmm1, %%zmm3\n\t"                  \
  "vfmadd231p" S " %%zmm0, %%zmm" #X ", %%zmm2\n\t"           \
  "vfmadd231p" S " %%zmm0, %%zmm" #Y ", %%zmm3\n\t"           \
  "vmovup" S " %%zmm2, (%[cp])\n\t"                          \
  "vmovup" S " %%zmm3, 64(%[cp])\n\t"                        \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM_C_ALL(M, S)                                                                        \
  M(S, 4, 5) M(S, 6, 7) M(S, 8, 9) M(S, 10, 11) M(S, 12, 13) M(S, 14, 15) M(S, 16, 17) M(S, 18, 19) \
  M(S, 20, 21) M(S, 22, 23) M(S, 24, 25) M(S, 26, 27) M(S, 28, 29) M(S, 30, 31)

// Prefetch for writing the 128 bytes of column %[cpf] (3 lines when ldc leaves it
// unaligned), then move to the next column.
#define TAIHU_ASM_PFC               \
  "prefetchw (%[cpf])\n\t"          \
  "prefetchw 64(%[cpf])\n\t"        \
  "prefetchw 127(%[cpf])\n\t"       \
  "add %[ldc], %[cpf]\n\t"

// The whole asm statement for type suffix S (see gemm_x14 for the operands).
// The C update (alpha, then beta 0 / 1 / other) and the operand and clobber lists that
// both x14 kernels share: the tail of their asm statements.
#define TAIHU_ASM_X14_C_UPDATE_AND_OPERANDS(S) \
      "vbroadcasts" S " (%[alpha]), %%zmm0\n\t"                                                               \
      "vbroadcasts" S " (%[beta]), %%zmm1\n\t"                                                                \
      "cmp $1, %[mode]\n\t"                                                                                   \
      "je 8f\n\t"                                                                                             \
      "ja 9f\n\t"                                                                                             \
      TAIHU_ASM_C_ALL(TAIHU_ASM_C_BETA0, S)                                                                   \
      "jmp 10f\n\t"                                                                                           \
      "8:\n\t"                                                                                                \
      TAIHU_ASM_C_ALL(TAIHU_ASM_C_BETA1, S)                                                                   \
      "jmp 10f\n\t"                                                                                           \
      "9:\n\t"                                                                                                \
      TAIHU_ASM_C_ALL(TAIHU_ASM_C_BETAN, S)                                                                   \
      "10:\n\t"                                                                                               \
      "vzeroupper\n\t"                                                                                        \
      : [a] "+r"(ap), [b] "+r"(bp), [singles] "+r"(singles), [groups] "+r"(groups), [tail] "+r"(tail),        \
        [cp] "+r"(cp), [cpf] "+r"(cpf), [inner] "=&r"(inner)                                                  \
      : [ldc] "r"(ldc_bytes), [alpha] "r"(&alpha), [beta] "r"(&beta), [mode] "r"(mode),                       \
        [per_col] "r"(per_col), [pfa] "i"(kPfA), [pfb] "i"(kPfB), [eb] "i"(sizeof(T))                         \
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",       \
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",    \
        "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31"

// zmm4-31 (the 2 x 14 accumulators) := 0.
#define TAIHU_ASM_ZERO_ACCUMULATORS                                                     \
  "vpxord %%zmm4, %%zmm4, %%zmm4\n\t"                                                   \
  "vmovapd %%zmm4, %%zmm5\n\t vmovapd %%zmm4, %%zmm6\n\t vmovapd %%zmm4, %%zmm7\n\t"    \
  "vmovapd %%zmm4, %%zmm8\n\t vmovapd %%zmm4, %%zmm9\n\t vmovapd %%zmm4, %%zmm10\n\t"   \
  "vmovapd %%zmm4, %%zmm11\n\t vmovapd %%zmm4, %%zmm12\n\t vmovapd %%zmm4, %%zmm13\n\t" \
  "vmovapd %%zmm4, %%zmm14\n\t vmovapd %%zmm4, %%zmm15\n\t vmovapd %%zmm4, %%zmm16\n\t" \
  "vmovapd %%zmm4, %%zmm17\n\t vmovapd %%zmm4, %%zmm18\n\t vmovapd %%zmm4, %%zmm19\n\t" \
  "vmovapd %%zmm4, %%zmm20\n\t vmovapd %%zmm4, %%zmm21\n\t vmovapd %%zmm4, %%zmm22\n\t" \
  "vmovapd %%zmm4, %%zmm23\n\t vmovapd %%zmm4, %%zmm24\n\t vmovapd %%zmm4, %%zmm25\n\t" \
  "vmovapd %%zmm4, %%zmm26\n\t vmovapd %%zmm4, %%zmm27\n\t vmovapd %%zmm4, %%zmm28\n\t" \
  "vmovapd %%zmm4, %%zmm29\n\t vmovapd %%zmm4, %%zmm30\n\t vmovapd %%zmm4, %%zmm31\n\t"

#define TAIHU_ASM_TILE_X14(S)                                                                              \
  __asm__ volatile(                                                                                        \
      /* Accumulators := 0. */                                                                             \
      TAIHU_ASM_ZERO_ACCUMULATORS                                                                          \
      /* 1. k % 4 single steps. */                                                                         \
      "test %[singles], %[singles]\n\t"                                                                    \
      "jz 2f\n\t"                                                                                          \
      "1:\n\t"                                                                                             \
      TAIHU_ASM_KSTEP(S, 0, 0)                                                                             \
      "add $128, %[a]\n\t"                                                                                 \
      "add $14*%c[eb], %[b]\n\t"                                                                           \
      "dec %[singles]\n\t"                                                                                 \
      "jnz 1b\n\t"                                                                                         \
      "2:\n\t"                                                                                             \
      /* 2. Groups of 4 steps with A and B prefetch. */                                                    \
      "test %[groups], %[groups]\n\t"                                                                      \
      "jz 4f\n\t"                                                                                          \
      ".p2align 5\n\t"                                                                                     \
      "3:\n\t"                                                                                             \
      TAIHU_ASM_PFA(0) TAIHU_ASM_PFB(0)                                                                    \
      TAIHU_ASM_KSTEP(S, 0, 0)                                                                             \
      TAIHU_ASM_PFA(64) TAIHU_ASM_PFA(128) TAIHU_ASM_PFB(8) TAIHU_ASM_PFB(16)                              \
      TAIHU_ASM_KSTEP(S, 128, 14)                                                                          \
      TAIHU_ASM_PFA(192) TAIHU_ASM_PFA(256) TAIHU_ASM_PFB(24) TAIHU_ASM_PFB(32)                             \
      TAIHU_ASM_KSTEP(S, 256, 28)                                                                          \
      TAIHU_ASM_PFA(320) TAIHU_ASM_PFA(384) TAIHU_ASM_PFA(448) TAIHU_ASM_PFB(40) TAIHU_ASM_PFB(48)          \
      TAIHU_ASM_KSTEP(S, 384, 42)                                                                          \
      "add $512, %[a]\n\t"                                                                                 \
      "add $56*%c[eb], %[b]\n\t"                                                                           \
      "dec %[groups]\n\t"                                                                                  \
      "jnz 3b\n\t"                                                                                         \
      "4:\n\t"                                                                                             \
      /* 3. The last 14 * tail_steps steps, one C column prefetched per tail_steps steps. */               \
      "test %[tail], %[tail]\n\t"                                                                          \
      "jz 6f\n\t"                                                                                          \
      "5:\n\t"                                                                                             \
      TAIHU_ASM_PFC                                                                                        \
      "mov %[per_col], %[inner]\n\t"                                                                       \
      "7:\n\t"                                                                                             \
      TAIHU_ASM_PFA(0) TAIHU_ASM_PFA(64)                                                                   \
      TAIHU_ASM_KSTEP(S, 0, 0)                                                                             \
      "add $128, %[a]\n\t"                                                                                 \
      "add $14*%c[eb], %[b]\n\t"                                                                           \
      "dec %[inner]\n\t"                                                                                   \
      "jnz 7b\n\t"                                                                                         \
      "dec %[tail]\n\t"                                                                                    \
      "jnz 5b\n\t"                                                                                         \
      "6:\n\t"                                                                                             \
      /* C update. */                                                                                      \
      TAIHU_ASM_X14_C_UPDATE_AND_OPERANDS(S))

// The pipelined form (kPipelined): B as embedded {1to8} / {1to16} memory operands of the
// FMAs, so no broadcast instruction and no B register: zmm2-3 become a second A pair
// and each k step loads the NEXT step's A while its 28 FMAs use this step's, so no FMA
// waits on an A load issued in the same step and none on a B broadcast. 30 load uops
// per 28 FMAs (16 with register broadcasts): a trade that depends on the core (a
// 512-bit FMA is two 256-bit halves on Zen 4, which leaves load slots spare).
// E: the broadcast count, "8" (double) or "16" (float).
#define TAIHU_ASM_EFMA2(S, E, BO, J, A0, A1, X, Y)                                                   \
  "vfmadd231p" S " " #BO "*%c[eb]+" #J "*%c[eb](%[b])%{1to" E "%}, %%zmm" #A0 ", %%zmm" #X "\n\t" \
  "vfmadd231p" S " " #BO "*%c[eb]+" #J "*%c[eb](%[b])%{1to" E "%}, %%zmm" #A1 ", %%zmm" #Y "\n\t"
#define TAIHU_ASM_EFMA_ALL(S, E, BO, A0, A1)                                                                    \
  TAIHU_ASM_EFMA2(S, E, BO, 0, A0, A1, 4, 5) TAIHU_ASM_EFMA2(S, E, BO, 1, A0, A1, 6, 7)                         \
  TAIHU_ASM_EFMA2(S, E, BO, 2, A0, A1, 8, 9) TAIHU_ASM_EFMA2(S, E, BO, 3, A0, A1, 10, 11)                       \
  TAIHU_ASM_EFMA2(S, E, BO, 4, A0, A1, 12, 13) TAIHU_ASM_EFMA2(S, E, BO, 5, A0, A1, 14, 15)                     \
  TAIHU_ASM_EFMA2(S, E, BO, 6, A0, A1, 16, 17) TAIHU_ASM_EFMA2(S, E, BO, 7, A0, A1, 18, 19)                     \
  TAIHU_ASM_EFMA2(S, E, BO, 8, A0, A1, 20, 21) TAIHU_ASM_EFMA2(S, E, BO, 9, A0, A1, 22, 23)                     \
  TAIHU_ASM_EFMA2(S, E, BO, 10, A0, A1, 24, 25) TAIHU_ASM_EFMA2(S, E, BO, 11, A0, A1, 26, 27)                   \
  TAIHU_ASM_EFMA2(S, E, BO, 12, A0, A1, 28, 29) TAIHU_ASM_EFMA2(S, E, BO, 13, A0, A1, 30, 31)
#define TAIHU_ASM_ALOAD(S, AO, R0, R1)                 \
  "vmovup" S " " #AO "(%[a]), %%zmm" #R0 "\n\t"        \
  "vmovup" S " " #AO "+64(%[a]), %%zmm" #R1 "\n\t"
// One unpipelined step: this step's A into zmm0-1, then its FMAs.
#define TAIHU_ASM_ESTEP(S, E) TAIHU_ASM_ALOAD(S, 0, 0, 1) TAIHU_ASM_EFMA_ALL(S, E, 0, 0, 1)

// The pipelined asm statement: the same three phases and C update as TAIHU_ASM_TILE_X14;
// the groups of 4 run only when the C-prefetch tail follows them (gemm_x14 sees to it),
// so the last group's look-ahead load (A of the first tail step) stays inside A's panel.
#define TAIHU_ASM_TILE_X14_PIPE(S, E)                                                                      \
  __asm__ volatile(                                                                                        \
      TAIHU_ASM_ZERO_ACCUMULATORS                                                                          \
      /* 1. Single steps. */                                                                               \
      "test %[singles], %[singles]\n\t"                                                                    \
      "jz 2f\n\t"                                                                                          \
      "1:\n\t"                                                                                             \
      TAIHU_ASM_ESTEP(S, E)                                                                                \
      "add $128, %[a]\n\t"                                                                                 \
      "add $14*%c[eb], %[b]\n\t"                                                                           \
      "dec %[singles]\n\t"                                                                                 \
      "jnz 1b\n\t"                                                                                         \
      "2:\n\t"                                                                                             \
      /* 2. Groups of 4 steps, A one step ahead in zmm0-1 / zmm2-3 alternately. */                        \
      "test %[groups], %[groups]\n\t"                                                                      \
      "jz 4f\n\t"                                                                                          \
      TAIHU_ASM_ALOAD(S, 0, 0, 1)                                                                          \
      ".p2align 5\n\t"                                                                                     \
      "3:\n\t"                                                                                             \
      TAIHU_ASM_PFA(0) TAIHU_ASM_PFB(0)                                                                    \
      TAIHU_ASM_ALOAD(S, 128, 2, 3) TAIHU_ASM_EFMA_ALL(S, E, 0, 0, 1)                                      \
      TAIHU_ASM_PFA(64) TAIHU_ASM_PFA(128) TAIHU_ASM_PFB(8) TAIHU_ASM_PFB(16)                              \
      TAIHU_ASM_ALOAD(S, 256, 0, 1) TAIHU_ASM_EFMA_ALL(S, E, 14, 2, 3)                                     \
      TAIHU_ASM_PFA(192) TAIHU_ASM_PFA(256) TAIHU_ASM_PFB(24) TAIHU_ASM_PFB(32)                             \
      TAIHU_ASM_ALOAD(S, 384, 2, 3) TAIHU_ASM_EFMA_ALL(S, E, 28, 0, 1)                                     \
      TAIHU_ASM_PFA(320) TAIHU_ASM_PFA(384) TAIHU_ASM_PFA(448) TAIHU_ASM_PFB(40) TAIHU_ASM_PFB(48)          \
      TAIHU_ASM_ALOAD(S, 512, 0, 1) TAIHU_ASM_EFMA_ALL(S, E, 42, 2, 3)                                     \
      "add $512, %[a]\n\t"                                                                                 \
      "add $56*%c[eb], %[b]\n\t"                                                                           \
      "dec %[groups]\n\t"                                                                                  \
      "jnz 3b\n\t"                                                                                         \
      "4:\n\t"                                                                                             \
      /* 3. The C-prefetching tail, unpipelined steps. */                                                  \
      "test %[tail], %[tail]\n\t"                                                                          \
      "jz 6f\n\t"                                                                                          \
      "5:\n\t"                                                                                             \
      TAIHU_ASM_PFC                                                                                        \
      "mov %[per_col], %[inner]\n\t"                                                                       \
      "7:\n\t"                                                                                             \
      TAIHU_ASM_PFA(0) TAIHU_ASM_PFA(64)                                                                   \
      TAIHU_ASM_ESTEP(S, E)                                                                                \
      "add $128, %[a]\n\t"                                                                                 \
      "add $14*%c[eb], %[b]\n\t"                                                                           \
      "dec %[inner]\n\t"                                                                                   \
      "jnz 7b\n\t"                                                                                         \
      "dec %[tail]\n\t"                                                                                    \
      "jnz 5b\n\t"                                                                                         \
      "6:\n\t"                                                                                             \
      TAIHU_ASM_X14_C_UPDATE_AND_OPERANDS(S))

// kPfA / kPfB: prefetch distance in bytes for A and B; tail_steps (>= 1): k steps per
// C column in the C-prefetching tail. T: double (the 16x14 tile) or float (32x14).
// kPipelined: the embedded-broadcast form with A loaded one step ahead (above).
template <class T, int kPfA, int kPfB, bool kPipelined = false>
inline void gemm_x14(index_t k, T alpha, const T* a, const T* b, T beta, T* c, index_t ldc,
                     std::int64_t tail_steps) {
  static_assert(sizeof(T) == 8 || sizeof(T) == 4, "double or float");
  const std::int64_t ldc_bytes = static_cast<std::int64_t>(ldc) * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t per_col = tail_steps;
  std::int64_t tail = 0, inner;
  if (k >= kNr * per_col) {
    tail = kNr;
  } else {
    for (int j = 0; j < kNr; ++j) {  // the column's first and last byte (2 lines, or 3 when unaligned: 1 missed)
      _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + j * ldc + kMr<T> - 1), _MM_HINT_T0);
    }
  }
  const std::int64_t body = static_cast<std::int64_t>(k) - tail * per_col;
  std::int64_t singles = body % 4, groups = body / 4;
  if (kPipelined && tail == 0) {  // no tail: the groups' look-ahead would read past A's panel
    singles = body;
    groups = 0;
  }
  const std::int64_t mode = beta == T(0) ? 0 : beta == T(1) ? 1 : 2;
  T* cp = c;
  T* cpf = c;
  const T* ap = a;
  const T* bp = b;
  if constexpr (kPipelined && sizeof(T) == 8)
    TAIHU_ASM_TILE_X14_PIPE("d", "8");
  else if constexpr (kPipelined)
    TAIHU_ASM_TILE_X14_PIPE("s", "16");
  else if constexpr (sizeof(T) == 8)
    TAIHU_ASM_TILE_X14("d");
  else
    TAIHU_ASM_TILE_X14("s");
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
#undef TAIHU_ASM_BCAST
#undef TAIHU_ASM_TILE_X14
#undef TAIHU_ASM_TILE_X14_PIPE
#undef TAIHU_ASM_EFMA2
#undef TAIHU_ASM_EFMA_ALL
#undef TAIHU_ASM_ALOAD
#undef TAIHU_ASM_ESTEP
#undef TAIHU_ASM_X14_C_UPDATE_AND_OPERANDS

}  // namespace taihu::gemm::kernels::asm_x14
