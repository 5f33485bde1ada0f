// Hand-scheduled AVX-512 DGEMM 24x8 micro-kernel in GNU inline assembly: the panel shape
// MKL packs (24-row A, 8-column B) and BLIS's skx DGEMM shape. 3 vectors of A (24 doubles,
// 192 bytes) in zmm0-2 by 8 values of B, 24 accumulators zmm8-31 (column j in zmm 8+3j,
// 9+3j, 10+3j). Written here from scratch, in the style of gemm_asm_x14.hpp. Include only
// from a translation unit compiled with the AVX-512 flags (kernels/avx512/).
//
// Contract (the full-tile case of microkernel.hpp): C(24 x 8, column major, ldc) :=
// alpha * Ap * Bp + beta * C, with Ap a packed A micro-panel (k steps of 24 contiguous
// values, a_step == 24) and Bp a packed B micro-panel (k steps of 8). beta == 0 never
// reads C. k may be 0. The caller handles edges and A read in place (a_step != 24).
//
// Two forms of B, chosen by the template parameter kEmbedded:
//   - embedded: each FMA takes its B value as a {1to8} memory operand, no broadcast
//     instruction; 24 FMAs per k step, each with its own 8-byte load uop (27 loads);
//   - register: 8 vbroadcastsd from memory (pure load uops) into zmm3-6 in rotation, each
//     used by 3 FMAs; 11 loads per 24 FMAs.
// The k loop (as gemm_asm_x14.hpp):
//   1. k % 4 single steps (so the unrolled loop needs no exit test inside);
//   2. groups of 4 steps, each prefetching the 12 lines of A kPfA bytes ahead and the 4
//      lines of B kPfB bytes ahead, spread over the group;
//   3. the last 8 steps (when k has them), each prefetching one column of C for writing
//      (prefetchw of its 192 bytes: 4 lines when ldc leaves it unaligned). For k < 8 every
//      column is prefetched before the loop.
// C update in the same asm block: beta == 0: C = alpha * acc (C never read); beta == 1:
// one FMA with C as the memory operand; otherwise alpha * acc + (beta * C), rounded as
// the intrinsics template does.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm::kernels::asm_24x8 {

inline constexpr int kMr = 24;
inline constexpr int kNr = 8;

// Three FMAs of column J of B (byte offset BO of the k step) into X, Y, Z.
#define TAIHU_ASM24_FMA3_EMB(BO, J, R, X, Y, Z)                              \
  "vfmadd231pd " #BO "+" #J "*8(%[b])%{1to8%}, %%zmm0, %%zmm" #X "\n\t"      \
  "vfmadd231pd " #BO "+" #J "*8(%[b])%{1to8%}, %%zmm1, %%zmm" #Y "\n\t"      \
  "vfmadd231pd " #BO "+" #J "*8(%[b])%{1to8%}, %%zmm2, %%zmm" #Z "\n\t"
#define TAIHU_ASM24_FMA3_REG(BO, J, R, X, Y, Z)                  \
  "vbroadcastsd " #BO "+" #J "*8(%[b]), %%zmm" #R "\n\t"          \
  "vfmadd231pd %%zmm0, %%zmm" #R ", %%zmm" #X "\n\t"              \
  "vfmadd231pd %%zmm1, %%zmm" #R ", %%zmm" #Y "\n\t"              \
  "vfmadd231pd %%zmm2, %%zmm" #R ", %%zmm" #Z "\n\t"

// One k step with A at byte offset AO from %[a] and B at byte offset BO from %[b]; F is
// one of the FMA3 forms above (R: the broadcast register of the register form).
#define TAIHU_ASM24_KSTEP(F, AO, BO)                  \
  "vmovupd " #AO "(%[a]), %%zmm0\n\t"                  \
  "vmovupd " #AO "+64(%[a]), %%zmm1\n\t"               \
  "vmovupd " #AO "+128(%[a]), %%zmm2\n\t"              \
  F(BO, 0, 3, 8, 9, 10) F(BO, 1, 4, 11, 12, 13)        \
  F(BO, 2, 5, 14, 15, 16) F(BO, 3, 6, 17, 18, 19)      \
  F(BO, 4, 3, 20, 21, 22) F(BO, 5, 4, 23, 24, 25)      \
  F(BO, 6, 5, 26, 27, 28) F(BO, 7, 6, 29, 30, 31)

#define TAIHU_ASM24_PFA(OFF) "prefetcht0 %c[pfa]+" #OFF "(%[a])\n\t"
#define TAIHU_ASM24_PFB(OFF) "prefetcht0 %c[pfb]+" #OFF "(%[b])\n\t"

// C update of column %[cp] with accumulators X, Y, Z (rows 0-7, 8-15, 16-23); zmm0 =
// alpha, zmm1 = beta, zmm2-4 scratch. Then %[cp] moves to the next column.
#define TAIHU_ASM24_C_BETA0(X, Y, Z)                  \
  "vmulpd %%zmm0, %%zmm" #X ", %%zmm" #X "\n\t"        \
  "vmulpd %%zmm0, %%zmm" #Y ", %%zmm" #Y "\n\t"        \
  "vmulpd %%zmm0, %%zmm" #Z ", %%zmm" #Z "\n\t"        \
  "vmovupd %%zmm" #X ", (%[cp])\n\t"                   \
  "vmovupd %%zmm" #Y ", 64(%[cp])\n\t"                 \
  "vmovupd %%zmm" #Z ", 128(%[cp])\n\t"                \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM24_C_BETA1(X, Y, Z)                       \
  "vfmadd213pd (%[cp]), %%zmm0, %%zmm" #X "\n\t"            \
  "vfmadd213pd 64(%[cp]), %%zmm0, %%zmm" #Y "\n\t"          \
  "vfmadd213pd 128(%[cp]), %%zmm0, %%zmm" #Z "\n\t"         \
  "vmovupd %%zmm" #X ", (%[cp])\n\t"                        \
  "vmovupd %%zmm" #Y ", 64(%[cp])\n\t"                      \
  "vmovupd %%zmm" #Z ", 128(%[cp])\n\t"                     \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM24_C_BETAN(X, Y, Z)                       \
  "vmulpd (%[cp]), %%zmm1, %%zmm2\n\t"                      \
  "vmulpd 64(%[cp]), %%zmm1, %%zmm3\n\t"                    \
  "vmulpd 128(%[cp]), %%zmm1, %%zmm4\n\t"                   \
  "vfmadd231pd %%zmm0, %%zmm" #X ", %%zmm2\n\t"             \
  "vfmadd231pd %%zmm0, %%zmm" #Y ", %%zmm3\n\t"             \
  "vfmadd231pd %%zmm0, %%zmm" #Z ", %%zmm4\n\t"             \
  "vmovupd %%zmm2, (%[cp])\n\t"                             \
  "vmovupd %%zmm3, 64(%[cp])\n\t"                           \
  "vmovupd %%zmm4, 128(%[cp])\n\t"                          \
  "add %[ldc], %[cp]\n\t"
#define TAIHU_ASM24_C_ALL(M)                                                                   \
  M(8, 9, 10) M(11, 12, 13) M(14, 15, 16) M(17, 18, 19) M(20, 21, 22) M(23, 24, 25) M(26, 27, 28) \
  M(29, 30, 31)

// Prefetch for writing the 192 bytes of column %[cpf] (4 lines when unaligned), then move
// to the next column.
#define TAIHU_ASM24_PFC          \
  "prefetchw (%[cpf])\n\t"       \
  "prefetchw 64(%[cpf])\n\t"     \
  "prefetchw 128(%[cpf])\n\t"    \
  "prefetchw 191(%[cpf])\n\t"    \
  "add %[ldc], %[cpf]\n\t"

#define TAIHU_ASM24_TILE(F)                                                                                \
  __asm__ volatile(                                                                                        \
      /* Accumulators := 0. */                                                                             \
      "vpxord %%zmm8, %%zmm8, %%zmm8\n\t"                                                                  \
      "vmovapd %%zmm8, %%zmm9\n\t vmovapd %%zmm8, %%zmm10\n\t vmovapd %%zmm8, %%zmm11\n\t"                 \
      "vmovapd %%zmm8, %%zmm12\n\t vmovapd %%zmm8, %%zmm13\n\t vmovapd %%zmm8, %%zmm14\n\t"                \
      "vmovapd %%zmm8, %%zmm15\n\t vmovapd %%zmm8, %%zmm16\n\t vmovapd %%zmm8, %%zmm17\n\t"                \
      "vmovapd %%zmm8, %%zmm18\n\t vmovapd %%zmm8, %%zmm19\n\t vmovapd %%zmm8, %%zmm20\n\t"                \
      "vmovapd %%zmm8, %%zmm21\n\t vmovapd %%zmm8, %%zmm22\n\t vmovapd %%zmm8, %%zmm23\n\t"                \
      "vmovapd %%zmm8, %%zmm24\n\t vmovapd %%zmm8, %%zmm25\n\t vmovapd %%zmm8, %%zmm26\n\t"                \
      "vmovapd %%zmm8, %%zmm27\n\t vmovapd %%zmm8, %%zmm28\n\t vmovapd %%zmm8, %%zmm29\n\t"                \
      "vmovapd %%zmm8, %%zmm30\n\t vmovapd %%zmm8, %%zmm31\n\t"                                            \
      /* 1. k % 4 single steps. */                                                                         \
      "test %[singles], %[singles]\n\t"                                                                    \
      "jz 2f\n\t"                                                                                          \
      "1:\n\t"                                                                                             \
      TAIHU_ASM24_KSTEP(F, 0, 0)                                                                           \
      "add $192, %[a]\n\t"                                                                                 \
      "add $64, %[b]\n\t"                                                                                  \
      "dec %[singles]\n\t"                                                                                 \
      "jnz 1b\n\t"                                                                                         \
      "2:\n\t"                                                                                             \
      /* 2. Groups of 4 steps with A and B prefetch. */                                                    \
      "test %[groups], %[groups]\n\t"                                                                      \
      "jz 4f\n\t"                                                                                          \
      ".p2align 5\n\t"                                                                                     \
      "3:\n\t"                                                                                             \
      TAIHU_ASM24_PFA(0) TAIHU_ASM24_PFA(64) TAIHU_ASM24_PFA(128) TAIHU_ASM24_PFB(0)                       \
      TAIHU_ASM24_KSTEP(F, 0, 0)                                                                           \
      TAIHU_ASM24_PFA(192) TAIHU_ASM24_PFA(256) TAIHU_ASM24_PFA(320) TAIHU_ASM24_PFB(64)                   \
      TAIHU_ASM24_KSTEP(F, 192, 64)                                                                        \
      TAIHU_ASM24_PFA(384) TAIHU_ASM24_PFA(448) TAIHU_ASM24_PFA(512) TAIHU_ASM24_PFB(128)                  \
      TAIHU_ASM24_KSTEP(F, 384, 128)                                                                       \
      TAIHU_ASM24_PFA(576) TAIHU_ASM24_PFA(640) TAIHU_ASM24_PFA(704) TAIHU_ASM24_PFB(192)                  \
      TAIHU_ASM24_KSTEP(F, 576, 192)                                                                       \
      "add $768, %[a]\n\t"                                                                                 \
      "add $256, %[b]\n\t"                                                                                 \
      "dec %[groups]\n\t"                                                                                  \
      "jnz 3b\n\t"                                                                                         \
      "4:\n\t"                                                                                             \
      /* 3. The last 8 steps, one C column prefetched per step. */                                         \
      "test %[tail], %[tail]\n\t"                                                                          \
      "jz 6f\n\t"                                                                                          \
      "5:\n\t"                                                                                             \
      TAIHU_ASM24_PFC                                                                                      \
      TAIHU_ASM24_PFA(0) TAIHU_ASM24_PFA(64) TAIHU_ASM24_PFA(128) TAIHU_ASM24_PFB(0)                       \
      TAIHU_ASM24_KSTEP(F, 0, 0)                                                                           \
      "add $192, %[a]\n\t"                                                                                 \
      "add $64, %[b]\n\t"                                                                                  \
      "dec %[tail]\n\t"                                                                                    \
      "jnz 5b\n\t"                                                                                         \
      "6:\n\t"                                                                                             \
      /* C update. */                                                                                      \
      "vbroadcastsd (%[alpha]), %%zmm0\n\t"                                                                \
      "vbroadcastsd (%[beta]), %%zmm1\n\t"                                                                 \
      "cmp $1, %[mode]\n\t"                                                                                \
      "je 8f\n\t"                                                                                          \
      "ja 9f\n\t"                                                                                          \
      TAIHU_ASM24_C_ALL(TAIHU_ASM24_C_BETA0)                                                               \
      "jmp 10f\n\t"                                                                                        \
      "8:\n\t"                                                                                             \
      TAIHU_ASM24_C_ALL(TAIHU_ASM24_C_BETA1)                                                               \
      "jmp 10f\n\t"                                                                                        \
      "9:\n\t"                                                                                             \
      TAIHU_ASM24_C_ALL(TAIHU_ASM24_C_BETAN)                                                               \
      "10:\n\t"                                                                                            \
      "vzeroupper\n\t"                                                                                     \
      : [a] "+r"(ap), [b] "+r"(bp), [singles] "+r"(singles), [groups] "+r"(groups), [tail] "+r"(tail),     \
        [cp] "+r"(cp), [cpf] "+r"(cpf)                                                                     \
      : [ldc] "r"(ldc_bytes), [alpha] "r"(&alpha), [beta] "r"(&beta), [mode] "r"(mode), [pfa] "i"(kPfA),   \
        [pfb] "i"(kPfB)                                                                                    \
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",     \
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", \
        "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31")

// kEmbedded: B as {1to8} memory operands (true) or register broadcasts (false); kPfA /
// kPfB: prefetch distance in bytes for A and B.
template <bool kEmbedded, int kPfA, int kPfB>
inline void dgemm_24x8(index_t k, double alpha, const double* a, const double* b, double beta, double* c,
                       index_t ldc) {
  const std::int64_t ldc_bytes = static_cast<std::int64_t>(ldc) * static_cast<std::int64_t>(sizeof(double));
  std::int64_t tail = 0;
  if (k >= kNr) {
    tail = kNr;
  } else {
    for (int j = 0; j < kNr; ++j) {  // the column's 192 bytes: 3 lines, or 4 when unaligned
      const char* col = reinterpret_cast<const char*>(c + j * ldc);
      _mm_prefetch(col, _MM_HINT_T0);
      _mm_prefetch(col + 64, _MM_HINT_T0);
      _mm_prefetch(col + 128, _MM_HINT_T0);
      _mm_prefetch(col + 191, _MM_HINT_T0);
    }
  }
  const std::int64_t body = static_cast<std::int64_t>(k) - tail;
  std::int64_t singles = body % 4, groups = body / 4;
  const std::int64_t mode = beta == 0.0 ? 0 : beta == 1.0 ? 1 : 2;
  double* cp = c;
  double* cpf = c;
  const double* ap = a;
  const double* bp = b;
  if constexpr (kEmbedded)
    TAIHU_ASM24_TILE(TAIHU_ASM24_FMA3_EMB);
  else
    TAIHU_ASM24_TILE(TAIHU_ASM24_FMA3_REG);
}

#undef TAIHU_ASM24_FMA3_EMB
#undef TAIHU_ASM24_FMA3_REG
#undef TAIHU_ASM24_KSTEP
#undef TAIHU_ASM24_PFA
#undef TAIHU_ASM24_PFB
#undef TAIHU_ASM24_C_BETA0
#undef TAIHU_ASM24_C_BETA1
#undef TAIHU_ASM24_C_BETAN
#undef TAIHU_ASM24_C_ALL
#undef TAIHU_ASM24_PFC
#undef TAIHU_ASM24_TILE

}  // namespace taihu::gemm::kernels::asm_24x8
