// The 3D constant-density acoustic line kernel of space order 8 (radius 4) written with
// x86 intrinsics, one per vector ISA (AVX2 + FMA: 8 floats; AVX-512F: 16 floats). Included
// by cpu_step_impl.hpp only inside a translation unit compiled for that ISA.
//
// Contract: like line_acoustic<4, 3> (u_prev <- 2u - u_prev + A lap u on the full vectors
// of one z line, returning how many points it did; the caller finishes the ragged end),
// reading u at +-4 along z (rotation of the aligned vectors c - W, c, c + W) and at
// +-1..4 lines / planes along x and y.
//
// Why intrinsics and byte strides: the generic template made GCC keep one address
// (or offset) per neighbour, 16 of them, and reload them from the stack every vector
// (8.4 instructions per point). Here every neighbour is one x86 address
// [base + index * {1, 2, 4} (+ disp)] from five registers per axis: the centre pointer c,
// c - 4s, and the byte strides s and 3s (p + 2s = [c + s*2], p - 3s = [c - 4s + s],
// p + 3s = [c + 3s], p - s = [c - 4s + 3s] ...). An empty asm statement makes the
// pointers and strides opaque once per iteration, so GCC neither derives per-neighbour
// induction variables nor hoists k * s into spilled registers.
#pragma once
#include <immintrin.h>

namespace taihu::stencil::kernels {
namespace {

// The factorised weights of line_acoustic's Weights<4>: centre, w[k] along z (and, times
// the ratios rx, ry, along x and y).
struct AcousticO8Weights {
  float centre, w[5], rx, ry;
};

#if defined(__AVX512F__)
using xvec = __m512;
constexpr long kXW = 16;
inline xvec xload(const char* p) { return _mm512_loadu_ps(p); }
inline void xstore(char* p, xvec v) { _mm512_storeu_ps(p, v); }
inline xvec xset1(float v) { return _mm512_set1_ps(v); }
inline xvec xadd(xvec a, xvec b) { return _mm512_add_ps(a, b); }
inline xvec xsub(xvec a, xvec b) { return _mm512_sub_ps(a, b); }
inline xvec xmul(xvec a, xvec b) { return _mm512_mul_ps(a, b); }
inline xvec xfma(xvec a, xvec b, xvec c) { return _mm512_fmadd_ps(a, b, c); }
// Elements R .. R + 15 of the concatenation (a, b).
template <int R>
inline xvec xrot(xvec a, xvec b) {
  return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(b), _mm512_castps_si512(a), R));
}
// The z neighbours +-1..4 of the vector v0 between vm (before) and vp (after).
struct ZNeighbours {
  xvec p[5], m[5];
  ZNeighbours(xvec vm, xvec v0, xvec vp) {
    p[1] = xrot<1>(v0, vp);
    p[2] = xrot<2>(v0, vp);
    p[3] = xrot<3>(v0, vp);
    p[4] = xrot<4>(v0, vp);
    m[1] = xrot<15>(vm, v0);
    m[2] = xrot<14>(vm, v0);
    m[3] = xrot<13>(vm, v0);
    m[4] = xrot<12>(vm, v0);
  }
};
// Returns the number of points done (a multiple of the vector width; the rest of the line
// is the caller's).
__attribute__((noinline)) long line_acoustic_o8_x86(const float* u, float* up, const float* A, long n0, long s1,
                                                    long s2, const AcousticO8Weights& wt, long lead, long dist) {
  const long nv = n0 / kXW * kXW;
  if (nv == 0) return 0;
  const xvec wc = xset1(wt.centre), w1 = xset1(wt.w[1]), w2 = xset1(wt.w[2]), w3 = xset1(wt.w[3]),
             w4 = xset1(wt.w[4]), rx = xset1(wt.rx), ry = xset1(wt.ry);
  const char* c = reinterpret_cast<const char*>(u);
  const char* const end = c + nv * long(sizeof(float));
  long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;  // line x - 4
  const char* cy = c - 4 * sy;  // plane y - 4
  long dup = reinterpret_cast<const char*>(up) - c, da = reinterpret_cast<const char*>(A) - c;
  const long pf_lead = (lead + dist) * long(sizeof(float)), pf_dist = dist * long(sizeof(float));
  constexpr long VB = kXW * long(sizeof(float));  // bytes per vector

  // lap along a strided axis: pairs (c + k s, c - k s), k = 1..4, from c, cm = c - 4s, s, s3.
  auto strided = [&](const char* cc, const char* cm, long s, long s3) {
    xvec l = xmul(w1, xadd(xload(cc + s), xload(cm + s3)));
    l = xfma(w2, xadd(xload(cc + 2 * s), xload(cm + 2 * s)), l);
    l = xfma(w3, xadd(xload(cc + s3), xload(cm + s)), l);
    return xfma(w4, xadd(xload(cc + 4 * s), xload(cm)), l);
  };
  auto update = [&](const char* cc, const char* cxx, const char* cyy, const ZNeighbours& z, xvec v0) {
    xvec lz = xfma(w1, xadd(z.p[1], z.m[1]), xmul(wc, v0));
    lz = xfma(w2, xadd(z.p[2], z.m[2]), lz);
    lz = xfma(w3, xadd(z.p[3], z.m[3]), lz);
    lz = xfma(w4, xadd(z.p[4], z.m[4]), lz);
    const xvec lx = strided(cc, cxx, sx, sx3);
    const xvec ly = strided(cc, cyy, sy, sy3);
    const xvec lap = xadd(lz, xfma(rx, lx, xmul(ry, ly)));
    const xvec prev = xsub(xadd(v0, v0), xload(cc + dup));
    xstore(const_cast<char*>(cc) + dup, xfma(xload(cc + da), lap, prev));
  };

  xvec vm = xload(c - VB), v0 = xload(c);
  for (; c < end;) {
    asm("" : "+r"(c), "+r"(cx), "+r"(cy));
    if (dist) {
      _mm_prefetch(c + pf_lead, _MM_HINT_T0);
      _mm_prefetch(c + dup + pf_dist, _MM_HINT_T0);
      _mm_prefetch(c + da + pf_dist, _MM_HINT_T0);
    }
    const xvec vp = xload(c + VB);
    update(c, cx, cy, ZNeighbours(vm, v0, vp), v0);
    vm = v0;
    v0 = vp;
    c += VB;
    cx += VB;
    cy += VB;
  }
  return nv;
}

#else  // AVX2
// Returns the number of points done (a multiple of the vector width; the rest of the line
// is the caller's).
__attribute__((noinline)) long line_acoustic_o8_x86(const float* u, float* up, const float* A, long n0, long s1,
                                                    long s2, const AcousticO8Weights& wt, long lead, long dist) {
  const char* c = reinterpret_cast<const char*>(u);
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;  // line x - 4
  const char* cy = c - 4 * sy;  // plane y - 4
  const long dup = reinterpret_cast<const char*>(up) - c, da = reinterpret_cast<const char*>(A) - c;
  const long pf_lead = (lead + dist) * long(sizeof(float)), pf_dist = dist * long(sizeof(float));
  const long n2 = n0 / 16 * 16;  // two vectors per iteration; the caller does the rest
  if (n2 == 0) return 0;
  // Inline assembly: from intrinsics GCC 12 kept re-deriving c + k s with lea chains and
  // spilling strides (126 instructions per 16 points); this loop is 97.
  // Registers: ymm9 centre weight, ymm10-13 w1..w4, ymm14/15 the x/y ratios; ymm0-8 work.
  // z neighbours: the loop starts at c = 32 mod 64 bytes (the layout's 8-float pad), so
  // the first vector's z - k and the second's z + k are unaligned loads that stay inside
  // one cache line, and the other side comes from one lane permute shared by both
  // vectors plus byte aligns (7 shuffles per 16 points instead of 16: shuffles share the
  // FMA pipes). Correct for any alignment; only the cost changes.
  // x, y axes and the update of the vector at displacement OFF; in: ymm0 = u, ymm5 = z part.
#define TAIHU_O8_XY_UPDATE(OFF)                                                            \
  "vmovups " #OFF "(%[c],%[sx],1), %%ymm6\n\t" /* x +- 1 */                                 \
  "vaddps " #OFF "(%[cx],%[sx3],1), %%ymm6, %%ymm6\n\t"                                     \
  "vmovups " #OFF "(%[c],%[sy],1), %%ymm8\n\t" /* y +- 1 */                                 \
  "vaddps " #OFF "(%[cy],%[sy3],1), %%ymm8, %%ymm8\n\t"                                     \
  "vmulps %%ymm6, %%ymm10, %%ymm6\n\t"                                                      \
  "vmulps %%ymm8, %%ymm10, %%ymm8\n\t"                                                      \
  "vmovups " #OFF "(%[c],%[sx],2), %%ymm7\n\t"                                              \
  "vaddps " #OFF "(%[cx],%[sx],2), %%ymm7, %%ymm7\n\t"                                      \
  "vmovups " #OFF "(%[c],%[sy],2), %%ymm3\n\t"                                              \
  "vaddps " #OFF "(%[cy],%[sy],2), %%ymm3, %%ymm3\n\t"                                      \
  "vfmadd231ps %%ymm7, %%ymm11, %%ymm6\n\t"                                                 \
  "vfmadd231ps %%ymm3, %%ymm11, %%ymm8\n\t"                                                 \
  "vmovups " #OFF "(%[c],%[sx3],1), %%ymm7\n\t"                                             \
  "vaddps " #OFF "(%[cx],%[sx],1), %%ymm7, %%ymm7\n\t"                                      \
  "vmovups " #OFF "(%[c],%[sy3],1), %%ymm3\n\t"                                             \
  "vaddps " #OFF "(%[cy],%[sy],1), %%ymm3, %%ymm3\n\t"                                      \
  "vfmadd231ps %%ymm7, %%ymm12, %%ymm6\n\t"                                                 \
  "vfmadd231ps %%ymm3, %%ymm12, %%ymm8\n\t"                                                 \
  "vmovups " #OFF "(%[c],%[sx],4), %%ymm7\n\t"                                              \
  "vaddps " #OFF "(%[cx]), %%ymm7, %%ymm7\n\t"                                              \
  "vmovups " #OFF "(%[c],%[sy],4), %%ymm3\n\t"                                              \
  "vaddps " #OFF "(%[cy]), %%ymm3, %%ymm3\n\t"                                              \
  "vfmadd231ps %%ymm7, %%ymm13, %%ymm6\n\t"                                                 \
  "vfmadd231ps %%ymm3, %%ymm13, %%ymm8\n\t"                                                 \
  "vmulps %%ymm8, %%ymm15, %%ymm8\n\t"                                                      \
  "vfmadd231ps %%ymm6, %%ymm14, %%ymm8\n\t"                                                 \
  "vaddps %%ymm8, %%ymm5, %%ymm5\n\t" /* lap */                                             \
  "vaddps %%ymm0, %%ymm0, %%ymm0\n\t"                                                       \
  "vsubps " #OFF "(%[c],%[dup],1), %%ymm0, %%ymm0\n\t"                                      \
  "vfmadd231ps " #OFF "(%[c],%[da],1), %%ymm5, %%ymm0\n\t"                                  \
  "vmovups %%ymm0, " #OFF "(%[c],%[dup],1)\n\t"
#define TAIHU_O8_PAIR                                                                      \
  "vmovups (%[c]), %%ymm0\n\t"               /* v0 */                                     \
  "vmovups 32(%[c]), %%ymm1\n\t"             /* v1 */                                     \
  "vperm2f128 $0x21, %%ymm1, %%ymm0, %%ymm2\n\t" /* mid = (v0 high, v1 low) */             \
  "vmulps %%ymm0, %%ymm9, %%ymm5\n\t"                                                       \
  "vpalignr $4, %%ymm0, %%ymm2, %%ymm6\n\t"                                                 \
  "vaddps -4(%[c]), %%ymm6, %%ymm6\n\t"                                                     \
  "vfmadd231ps %%ymm6, %%ymm10, %%ymm5\n\t"                                                 \
  "vpalignr $8, %%ymm0, %%ymm2, %%ymm6\n\t"                                                 \
  "vaddps -8(%[c]), %%ymm6, %%ymm6\n\t"                                                     \
  "vfmadd231ps %%ymm6, %%ymm11, %%ymm5\n\t"                                                 \
  "vpalignr $12, %%ymm0, %%ymm2, %%ymm6\n\t"                                                \
  "vaddps -12(%[c]), %%ymm6, %%ymm6\n\t"                                                    \
  "vfmadd231ps %%ymm6, %%ymm12, %%ymm5\n\t"                                                 \
  "vaddps -16(%[c]), %%ymm2, %%ymm6\n\t"                                                    \
  "vfmadd231ps %%ymm6, %%ymm13, %%ymm5\n\t"                                                 \
  TAIHU_O8_XY_UPDATE(0)                                                                    \
  "vmovaps %%ymm1, %%ymm0\n\t"               /* second vector: v1, before = mid */        \
  "vmulps %%ymm0, %%ymm9, %%ymm5\n\t"                                                       \
  "vpalignr $12, %%ymm2, %%ymm0, %%ymm6\n\t"                                                \
  "vaddps 36(%[c]), %%ymm6, %%ymm6\n\t"                                                     \
  "vfmadd231ps %%ymm6, %%ymm10, %%ymm5\n\t"                                                 \
  "vpalignr $8, %%ymm2, %%ymm0, %%ymm6\n\t"                                                 \
  "vaddps 40(%[c]), %%ymm6, %%ymm6\n\t"                                                     \
  "vfmadd231ps %%ymm6, %%ymm11, %%ymm5\n\t"                                                 \
  "vpalignr $4, %%ymm2, %%ymm0, %%ymm6\n\t"                                                 \
  "vaddps 44(%[c]), %%ymm6, %%ymm6\n\t"                                                     \
  "vfmadd231ps %%ymm6, %%ymm12, %%ymm5\n\t"                                                 \
  "vaddps 48(%[c]), %%ymm2, %%ymm6\n\t"                                                     \
  "vfmadd231ps %%ymm6, %%ymm13, %%ymm5\n\t"                                                 \
  TAIHU_O8_XY_UPDATE(32)

  if (n2 == 0) return 0;
  const char* const end2 = c + n2 * long(sizeof(float));
  // Software prefetch of the DRAM streams (u's leading plane, u_prev, A) one line per
  // iteration; with dist == 0 it touches the lines being computed instead (harmless).
  const char* pf = dist ? c + pf_lead : c;
  const long pf_up = dist ? dup + pf_dist - pf_lead : dup, pf_a = dist ? da + pf_dist - pf_lead : da;
  const float wvec[7] = {wt.centre, wt.w[1], wt.w[2], wt.w[3], wt.w[4], wt.rx, wt.ry};
  asm volatile(
      "vbroadcastss %[w0], %%ymm9\n\t"
      "vbroadcastss %[w1], %%ymm10\n\t"
      "vbroadcastss %[w2], %%ymm11\n\t"
      "vbroadcastss %[w3], %%ymm12\n\t"
      "vbroadcastss %[w4], %%ymm13\n\t"
      "vbroadcastss %[w5], %%ymm14\n\t"
      "vbroadcastss %[w6], %%ymm15\n\t"
      ".p2align 5\n\t"
      "1:\n\t"
      "prefetcht0 (%[pf])\n\t"
      "prefetcht0 (%[pf],%[pfu],1)\n\t"
      "prefetcht0 (%[pf],%[pfa],1)\n\t"
      TAIHU_O8_PAIR
      "add $64, %[c]\n\t"
      "add $64, %[cx]\n\t"
      "add $64, %[cy]\n\t"
      "add $64, %[pf]\n\t"
      "cmp %[end], %[c]\n\t"
      "jb 1b\n\t"
      : [c] "+r"(c), [cx] "+r"(cx), [cy] "+r"(cy), [pf] "+r"(pf)
      : [sx] "r"(sx), [sx3] "r"(sx3), [sy] "r"(sy), [sy3] "r"(sy3), [dup] "r"(dup), [da] "r"(da),
        [pfu] "r"(pf_up), [pfa] "r"(pf_a), [end] "r"(end2),
        [w0] "m"(wvec[0]), [w1] "m"(wvec[1]), [w2] "m"(wvec[2]), [w3] "m"(wvec[3]), [w4] "m"(wvec[4]),
        [w5] "m"(wvec[5]), [w6] "m"(wvec[6])
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#undef TAIHU_O8_PAIR
#undef TAIHU_O8_XY_UPDATE
  return n2;
}
#endif

}  // namespace
}  // namespace taihu::stencil::kernels
