// The 3D constant-density acoustic line kernel of space order 8 (radius 4), hand-written
// for x86: AVX2 + FMA as inline assembly (8 floats per vector, 16 points per iteration),
// AVX-512F with intrinsics (16 floats). Included by cpu_step_impl.hpp only inside a
// translation unit compiled for that ISA.
//
// Contract: like line_acoustic<4, 3>: u_prev <- 2u - u_prev + A lap u along one z line,
// returning how many points it did (the caller finishes the rest with the template code):
// AVX2 the line's first multiple of 16 points; AVX-512 the whole line, in vectors on
// 64-byte boundaries with masked stores at both ends (AlignedSpan), so it also reads up
// to 31 floats before and after the line (a 3D layout's pads and neighbouring lines;
// only the line's own points are written). Reads u at +-4 along z and at +-1..4 lines /
// planes along x and y; prefetches u's leading plane, u_prev and A 4 KiB ahead.
//
// Why by hand: the template kernel made GCC keep one address (or offset) per neighbour,
// 16 of them, and reload them from the stack every vector (8.4 instructions per point).
// Here every neighbour is one x86 address [base + index * {1, 2, 4} (+ disp)] from the
// centre pointer c, c - 4s and the byte strides s and 3s per axis (p + 2s = [c + s*2],
// p - 3s = [c - 4s + s], p + 3s = [c + 3s], p - s = [c - 4s + 3s], ...).
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace taihu::stencil::kernels {
namespace {

// The factorised weights of line_acoustic's Weights<4>: centre, w[k] along z (and, times
// the ratios rx, ry, along x and y).
struct AcousticO8Weights {
  float centre, w[5], rx, ry;
};

// The AVX-512 build has no half-coefficient line kernel (the template code reads the
// packed halves there); the AVX2 one does (line_acoustic_o8_x86_half).
#if defined(__AVX512F__) || defined(TAIHU_STENCIL_EMULATE_AVX512)
constexpr bool kO8HalfHandKernel = false;
#else
constexpr bool kO8HalfHandKernel = true;
#endif

// TAIHU_STENCIL_EMULATE_AVX512: the AVX-512 code on a CPU without it, through SIMDe's
// emulated intrinsics (tests/stencil/test_o8_avx512_emulated.cpp).
#if defined(__AVX512F__) || defined(TAIHU_STENCIL_EMULATE_AVX512)
using xvec = __m512;
constexpr long kXW = 16;
inline xvec xload(const char* p) { return _mm512_loadu_ps(p); }
inline void xstore(char* p, xvec v) { _mm512_storeu_ps(p, v); }
inline xvec xset1(float v) { return _mm512_set1_ps(v); }
inline xvec xadd(xvec a, xvec b) { return _mm512_add_ps(a, b); }
inline xvec xsub(xvec a, xvec b) { return _mm512_sub_ps(a, b); }
inline xvec xmul(xvec a, xvec b) { return _mm512_mul_ps(a, b); }
inline xvec xfma(xvec a, xvec b, xvec c) { return _mm512_fmadd_ps(a, b, c); }
inline xvec xfmsub(xvec a, xvec b, xvec c) { return _mm512_fmsub_ps(a, b, c); }
// Stores the lanes of v whose bit is set in m.
inline void xstore_mask(char* p, __mmask16 m, xvec v) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, m, v);
#else  // (SIMDe 0.7 has no masked store)
  float lanes[kXW];
  std::memcpy(lanes, &v, sizeof lanes);
  for (long i = 0; i < kXW; ++i)
    if ((m >> i) & 1) std::memcpy(p + i * long(sizeof(float)), &lanes[i], sizeof(float));
#endif
}
// Elements R .. R + 15 of the concatenation (a, b).
template <int R>
inline xvec xrot(xvec a, xvec b) {
  // (the masked form with every lane set: GCC 12's unmasked one trips -Wmaybe-uninitialized)
  const __m512i lo = _mm512_castps_si512(a), hi = _mm512_castps_si512(b);
  return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(lo, __mmask16(0xFFFF), hi, lo, R));
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
// One output vector's update from its neighbours, one FMA chain with the axis ratios
// folded into the weights (27 FP operations per 16 points instead of 31 with an
// accumulator per axis; in-cache 1.03-1.05x):
//   acc = wc u + sum_k wz_k (z+k + z-k) + sum_k wx_k (x+k + x-k) + sum_k wy_k (y+k + y-k)
//   u_prev <- (2u - u_prev) + A acc    (2u - u_prev as one fmsub: 2u is exact)
// Every caller (single line, plane pair) goes through it, so their results are bitwise
// equal, whatever a vector's position in the line.
struct ChainWeights {
  xvec wc, two, wz[5], wx[5], wy[5];
  explicit ChainWeights(const AcousticO8Weights& wt) {
    wc = xset1(wt.centre);
    two = xset1(2.f);
    for (int k = 1; k <= 4; ++k) {
      wz[k] = xset1(wt.w[k]);
      wx[k] = xset1(wt.w[k] * wt.rx);
      wy[k] = xset1(wt.w[k] * wt.ry);
    }
  }
};
// yp[k], ym[k]: u at y + k and y - k (k = 1..4); cc: the vector's u address (x neighbours
// at cc +- k sx).
inline xvec chain_update(const ChainWeights& cw, const ZNeighbours& z, xvec v0, const char* cc, long sx,
                         const xvec (&yp)[5], const xvec (&ym)[5], xvec prev, xvec a) {
  const char* cm = cc - 4 * sx;
  xvec acc = xmul(cw.wc, v0);
  for (int k = 1; k <= 4; ++k) acc = xfma(cw.wz[k], xadd(z.p[k], z.m[k]), acc);
  acc = xfma(cw.wx[1], xadd(xload(cc + sx), xload(cm + 3 * sx)), acc);
  acc = xfma(cw.wx[2], xadd(xload(cc + 2 * sx), xload(cm + 2 * sx)), acc);
  acc = xfma(cw.wx[3], xadd(xload(cc + 3 * sx), xload(cm + sx)), acc);
  acc = xfma(cw.wx[4], xadd(xload(cc + 4 * sx), xload(cm)), acc);
  for (int k = 1; k <= 4; ++k) acc = xfma(cw.wy[k], xadd(yp[k], ym[k]), acc);
  return xfma(a, acc, xfmsub(cw.two, v0, prev));
}

// Where a line's vectors start and which lanes of its first and last vector are its own.
// The vectors sit on 64-byte boundaries of u (every load of u, u_prev and A a single cache
// line when the three arrays share u's alignment, as fields of one layout do): a line
// starting 32 bytes into a cache line, as every line of the padded layout does, made each
// 64-byte load a split load (in-cache 1.3 -> 1.7 GPts/s per core with aligned lines).
// The first vector starts up to 15 floats before the line and the last ends up to 15
// after it: those lanes are computed from the halo and whatever follows the line (read,
// never written: the stores are masked).
struct AlignedSpan {
  long lead;                   // floats from the first vector to the line's first point
  long count;                  // vectors
  __mmask16 first, last;       // lanes to store in the first and last vector
  AlignedSpan(const float* u, long n0) {
    lead = long((reinterpret_cast<std::uintptr_t>(u) / sizeof(float)) % kXW);
    count = (lead + n0 + kXW - 1) / kXW;
    const long tail = lead + n0 - (count - 1) * kXW;  // lanes of the last vector in the line (1..16)
    first = __mmask16(0xFFFFu << lead);
    last = __mmask16(0xFFFFu >> (kXW - tail));
    if (count == 1) first = last = __mmask16(first & last);
  }
  __mmask16 mask(long j) const { return j == 0 ? first : j + 1 == count ? last : __mmask16(0xFFFF); }
};

// Returns n0: the whole line (its own points only).
__attribute__((noinline)) long line_acoustic_o8_x86(const float* u, float* up, const float* A, long n0, long s1,
                                                    long s2, const AcousticO8Weights& wt) {
  if (n0 <= 0) return 0;
  const AlignedSpan span(u, n0);
  const ChainWeights cw(wt);
  const char* c = reinterpret_cast<const char*>(u - span.lead);
  const long sx = s1 * long(sizeof(float)), sy = s2 * long(sizeof(float));
  const long dup = reinterpret_cast<const char*>(up) - reinterpret_cast<const char*>(u);
  const long da = reinterpret_cast<const char*>(A) - reinterpret_cast<const char*>(u);
  const long dist = 4096, pf_lead = 4 * sy + dist;  // prefetch 4 KiB ahead, u from its leading plane
  constexpr long VB = kXW * long(sizeof(float));
  xvec vm = xload(c - VB), v0 = xload(c);
  for (long j = 0; j < span.count; ++j, c += VB) {
    asm("" : "+r"(c));
    _mm_prefetch(c + pf_lead, _MM_HINT_T0);
    _mm_prefetch(c + dup + dist, _MM_HINT_T0);
    _mm_prefetch(c + da + dist, _MM_HINT_T0);
    const xvec vp = xload(c + VB);
    xvec yp[5], ym[5];
    for (int k = 1; k <= 4; ++k) {
      yp[k] = xload(c + k * sy);
      ym[k] = xload(c - k * sy);
    }
    const xvec r = chain_update(cw, ZNeighbours(vm, v0, vp), v0, c, sx, yp, ym, xload(c + dup), xload(c + da));
    xstore_mask(const_cast<char*>(c) + dup, span.mask(j), r);
    vm = v0;
    v0 = vp;
  }
  return n0;
}
// Line x of planes y and y + 1 (u, up, A at plane y; the second at + s2): the y
// neighbours of both, planes y-4 .. y+5, loaded once (10 loads instead of 16: the y
// window is what a 256^2 plane sweep misses in L2), each point through chain_update as
// in line_acoustic_o8_x86, so results are bitwise those of two single-line calls.
// Returns n0 (both planes' lines whole; s2 a multiple of 16 floats keeps both aligned).
constexpr bool kO8PlanePairKernel = true;
__attribute__((noinline)) long line_pair_acoustic_o8_x86(const float* u, float* up, const float* A, long n0, long s1,
                                                         long s2, const AcousticO8Weights& wt) {
  if (n0 <= 0) return 0;
  const AlignedSpan span(u, n0);
  const ChainWeights cw(wt);
  const char* c = reinterpret_cast<const char*>(u - span.lead);
  const long sx = s1 * long(sizeof(float)), sy = s2 * long(sizeof(float));
  const long dup = reinterpret_cast<const char*>(up) - reinterpret_cast<const char*>(u);
  const long da = reinterpret_cast<const char*>(A) - reinterpret_cast<const char*>(u);
  const long dist = 4096, pf_lead = 5 * sy + dist;  // prefetch 4 KiB ahead, u from plane y + 5
  constexpr long VB = kXW * long(sizeof(float));
  xvec vm0 = xload(c - VB), v00 = xload(c), vm1 = xload(c + sy - VB), v01 = xload(c + sy);
  for (long j = 0; j < span.count; ++j, c += VB) {
    asm("" : "+r"(c));
    _mm_prefetch(c + pf_lead, _MM_HINT_T0);
    _mm_prefetch(c + dup + dist, _MM_HINT_T0);
    _mm_prefetch(c + dup + sy + dist, _MM_HINT_T0);
    _mm_prefetch(c + da + dist, _MM_HINT_T0);
    _mm_prefetch(c + da + sy + dist, _MM_HINT_T0);
    const char* c1 = c + sy;
    // planes y-4 .. y+5 of this vector; plane y is v00, plane y+1 is v01
    const xvec q4 = xload(c - 4 * sy), q3 = xload(c - 3 * sy), q2 = xload(c - 2 * sy), q1 = xload(c - sy);
    const xvec p2 = xload(c + 2 * sy), p3 = xload(c + 3 * sy), p4 = xload(c + 4 * sy), p5 = xload(c + 5 * sy);
    const xvec yp0[5] = {v00, v01, p2, p3, p4}, ym0[5] = {v00, q1, q2, q3, q4};
    const xvec yp1[5] = {v01, p2, p3, p4, p5}, ym1[5] = {v01, v00, q1, q2, q3};
    const xvec vp0 = xload(c + VB), vp1 = xload(c1 + VB);
    const xvec r0 = chain_update(cw, ZNeighbours(vm0, v00, vp0), v00, c, sx, yp0, ym0, xload(c + dup), xload(c + da));
    const xvec r1 =
        chain_update(cw, ZNeighbours(vm1, v01, vp1), v01, c1, sx, yp1, ym1, xload(c1 + dup), xload(c1 + da));
    const __mmask16 m = span.mask(j);
    xstore_mask(const_cast<char*>(c) + dup, m, r0);
    xstore_mask(const_cast<char*>(c1) + dup, m, r1);
    vm0 = v00;
    v00 = vp0;
    vm1 = v01;
    v01 = vp1;
  }
  return n0;
}
inline long line_pair_acoustic_o8_x86_half(const float*, float*, const unsigned short*, long, long, long,
                                           const AcousticO8Weights&) {
  return 0;
}
// (no AVX-512 half variant: the template code does the whole line)
inline long line_acoustic_o8_x86_half(const float*, float*, const unsigned short*, long, long, long,
                                      const AcousticO8Weights&) {
  return 0;
}

#else  // AVX2

// The loop below is inline assembly: from intrinsics GCC 12 kept re-deriving c + k s
// with lea chains and spilling strides (126 instructions per 16 points; this loop: 86).
// Registers: ymm9 centre weight, ymm10-13 w1..w4, ymm14/15 the x/y ratios; the rest work
// (the x and y parts leave ymm1 and ymm2 alone, the second vector's z part reuses them).
// Every line starts at c = 32 mod 64 bytes (the layout's 8-float pad), so in each pair of
// vectors the first's z - k and the second's z + k neighbours are unaligned loads inside
// one cache line, and the other side comes from one lane permute shared by both vectors
// plus byte aligns (7 shuffles per 16 points instead of 16: on Zen 3 shuffles share the
// FMA pipes). Correct for any alignment; only the cost changes.
// Per point, in this order:
//   acc = wc u + sum_k w_k (z+k + z-k)            (k = 1..4, pairs summed)
//   acc += rx * sum_k w_k (x+k + x-k)
//   ly = sum over planes y-4 .. y+4 (not y) of w_|k| u   (in plane order, FMAs with the
//        plane loads as memory operands: 8 instructions instead of 12)
//   lap = acc + ry * ly;  u_prev <- (2u - u_prev) + A lap

// z part of the first vector of a pair (at B), into ACC; leaves u in ymm0.
#define TAIHU_O8_Z_FIRST(B, ACC)                                                           \
  "vmovups (" B "), %%ymm0\n\t"                                                             \
  "vmovups 32(" B "), %%ymm1\n\t"                                                           \
  "vperm2f128 $0x21, %%ymm1, %%ymm0, %%ymm2\n\t" /* (u high, next low) */                  \
  "vmulps %%ymm0, %%ymm9, " ACC "\n\t"                                                      \
  "vpalignr $4, %%ymm0, %%ymm2, %%ymm7\n\t"                                                 \
  "vaddps -4(" B "), %%ymm7, %%ymm7\n\t"                                                    \
  "vfmadd231ps %%ymm7, %%ymm10, " ACC "\n\t"                                                \
  "vpalignr $8, %%ymm0, %%ymm2, %%ymm7\n\t"                                                 \
  "vaddps -8(" B "), %%ymm7, %%ymm7\n\t"                                                    \
  "vfmadd231ps %%ymm7, %%ymm11, " ACC "\n\t"                                                \
  "vpalignr $12, %%ymm0, %%ymm2, %%ymm7\n\t"                                                \
  "vaddps -12(" B "), %%ymm7, %%ymm7\n\t"                                                   \
  "vfmadd231ps %%ymm7, %%ymm12, " ACC "\n\t"                                                \
  "vaddps -16(" B "), %%ymm2, %%ymm7\n\t"                                                   \
  "vfmadd231ps %%ymm7, %%ymm13, " ACC "\n\t"

// z part of the second vector of a pair (at B + 32), into ACC; leaves u in ymm0. In: the
// first's ymm1 (this u) and ymm2 (the first's high half, this low half).
#define TAIHU_O8_Z_SECOND(B, ACC)                                                          \
  "vmovaps %%ymm1, %%ymm0\n\t"                                                              \
  "vmulps %%ymm0, %%ymm9, " ACC "\n\t"                                                      \
  "vpalignr $12, %%ymm2, %%ymm0, %%ymm7\n\t"                                                \
  "vaddps 36(" B "), %%ymm7, %%ymm7\n\t"                                                    \
  "vfmadd231ps %%ymm7, %%ymm10, " ACC "\n\t"                                                 \
  "vpalignr $8, %%ymm2, %%ymm0, %%ymm7\n\t"                                                 \
  "vaddps 40(" B "), %%ymm7, %%ymm7\n\t"                                                    \
  "vfmadd231ps %%ymm7, %%ymm11, " ACC "\n\t"                                                \
  "vpalignr $4, %%ymm2, %%ymm0, %%ymm7\n\t"                                                 \
  "vaddps 44(" B "), %%ymm7, %%ymm7\n\t"                                                    \
  "vfmadd231ps %%ymm7, %%ymm12, " ACC "\n\t"                                                \
  "vaddps 48(" B "), %%ymm2, %%ymm7\n\t"                                                    \
  "vfmadd231ps %%ymm7, %%ymm13, " ACC "\n\t"

// ACC += rx * x part of the vector at OFF from B (BX = B - 4 sx); uses ymm6, ymm7.
#define TAIHU_O8_X(OFF, B, BX, ACC)                                                        \
  "vmovups " OFF "(" B ",%[sx],1), %%ymm6\n\t"                                              \
  "vaddps " OFF "(" BX ",%[sx3],1), %%ymm6, %%ymm6\n\t"                                     \
  "vmulps %%ymm6, %%ymm10, %%ymm6\n\t"                                                      \
  "vmovups " OFF "(" B ",%[sx],2), %%ymm7\n\t"                                              \
  "vaddps " OFF "(" BX ",%[sx],2), %%ymm7, %%ymm7\n\t"                                      \
  "vfmadd231ps %%ymm7, %%ymm11, %%ymm6\n\t"                                                 \
  "vmovups " OFF "(" B ",%[sx3],1), %%ymm7\n\t"                                             \
  "vaddps " OFF "(" BX ",%[sx],1), %%ymm7, %%ymm7\n\t"                                      \
  "vfmadd231ps %%ymm7, %%ymm12, %%ymm6\n\t"                                                 \
  "vmovups " OFF "(" B ",%[sx],4), %%ymm7\n\t"                                              \
  "vaddps " OFF "(" BX "), %%ymm7, %%ymm7\n\t"                                              \
  "vfmadd231ps %%ymm7, %%ymm13, %%ymm6\n\t"                                                 \
  "vfmadd231ps %%ymm6, %%ymm14, " ACC "\n\t"

// u_prev <- (2u - u_prev) + A lap for the vector at OFF from B (U: u, clobbered).
#define TAIHU_O8_UPDATE(OFF, B, U, LAP)                                                    \
  "vaddps " U ", " U ", " U "\n\t"                                                          \
  "vsubps " OFF "(" B ",%[dup],1), " U ", " U "\n\t"                                        \
  "vfmadd231ps " OFF "(" B ",%[da],1), " LAP ", " U "\n\t"                                  \
  "vmovups " U ", " OFF "(" B ",%[dup],1)\n\t"

// The same with A as 8 halves at HOFF from %[hp] (packed coefficients), via ymm4.
#define TAIHU_O8_UPDATE_HALF(OFF, HOFF, B, U, LAP)                                         \
  "vaddps " U ", " U ", " U "\n\t"                                                          \
  "vsubps " OFF "(" B ",%[dup],1), " U ", " U "\n\t"                                        \
  "vcvtph2ps " HOFF "(%[hp]), %%ymm4\n\t"                                                  \
  "vfmadd231ps %%ymm4, " LAP ", " U "\n\t"                                                 \
  "vmovups " U ", " OFF "(" B ",%[dup],1)\n\t"

// One plane, the vector at OFF: y part from memory operands, then the update.
#define TAIHU_O8_Y_SINGLE(OFF)                                                             \
  TAIHU_O8_Y_PART(OFF)                                                                     \
  TAIHU_O8_UPDATE(OFF, "%[c]", "%%ymm0", "%%ymm3")
#define TAIHU_O8_Y_SINGLE_HALF(OFF, HOFF)                                                  \
  TAIHU_O8_Y_PART(OFF)                                                                     \
  TAIHU_O8_UPDATE_HALF(OFF, HOFF, "%[c]", "%%ymm0", "%%ymm3")
#define TAIHU_O8_Y_PART(OFF)                                                               \
  "vmulps " OFF "(%[cy]), %%ymm13, %%ymm5\n\t"                                              \
  "vfmadd231ps " OFF "(%[cy],%[sy],1), %%ymm12, %%ymm5\n\t"                                 \
  "vfmadd231ps " OFF "(%[cy],%[sy],2), %%ymm11, %%ymm5\n\t"                                 \
  "vfmadd231ps " OFF "(%[cy],%[sy3],1), %%ymm10, %%ymm5\n\t"                                \
  "vfmadd231ps " OFF "(%[c],%[sy],1), %%ymm10, %%ymm5\n\t"                                  \
  "vfmadd231ps " OFF "(%[c],%[sy],2), %%ymm11, %%ymm5\n\t"                                  \
  "vfmadd231ps " OFF "(%[c],%[sy3],1), %%ymm12, %%ymm5\n\t"                                 \
  "vfmadd231ps " OFF "(%[c],%[sy],4), %%ymm13, %%ymm5\n\t"                                  \
  "vfmadd231ps %%ymm5, %%ymm15, %%ymm3\n\t"

#define TAIHU_O8_LOAD_WEIGHTS                                                              \
  "vbroadcastss %[w0], %%ymm9\n\t"                                                          \
  "vbroadcastss %[w1], %%ymm10\n\t"                                                         \
  "vbroadcastss %[w2], %%ymm11\n\t"                                                         \
  "vbroadcastss %[w3], %%ymm12\n\t"                                                         \
  "vbroadcastss %[w4], %%ymm13\n\t"                                                         \
  "vbroadcastss %[w5], %%ymm14\n\t"                                                         \
  "vbroadcastss %[w6], %%ymm15\n\t"

#define TAIHU_O8_WEIGHT_OPERANDS                                                           \
  [w0] "m"(wv[0]), [w1] "m"(wv[1]), [w2] "m"(wv[2]), [w3] "m"(wv[3]), [w4] "m"(wv[4]), [w5] "m"(wv[5]), \
      [w6] "m"(wv[6])

#define TAIHU_O8_CLOBBERS                                                                  \
  "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

// Software prefetch distance of the hand kernels' DRAM streams (u's leading plane,
// u_prev, A), fixed at 4 KiB ahead (TAIHU_STENCIL_PREFETCH tunes the template kernels).
#define TAIHU_O8_PF "4096"

// One z line of plane y (u at `u`): returns the points done (a multiple of 16).
__attribute__((noinline)) long line_acoustic_o8_x86(const float* u, float* up, const float* A, long n0, long s1,
                                                    long s2, const AcousticO8Weights& wt) {
  const long n2 = n0 / 16 * 16;  // two vectors per iteration; the caller does the rest
  if (n2 == 0) return 0;
  const char* c = reinterpret_cast<const char*>(u);
  const char* const end = c + n2 * long(sizeof(float));
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;  // line x - 4
  const char* cy = c - 4 * sy;  // plane y - 4
  const long dup = reinterpret_cast<const char*>(up) - c, da = reinterpret_cast<const char*>(A) - c;
  const float wv[7] = {wt.centre, wt.w[1], wt.w[2], wt.w[3], wt.w[4], wt.rx, wt.ry};
  asm volatile(TAIHU_O8_LOAD_WEIGHTS
      ".p2align 5\n\t"
      "1:\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[sy],4)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[dup],1)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[da],1)\n\t"
      TAIHU_O8_Z_FIRST("%[c]", "%%ymm3")
      TAIHU_O8_X("0", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_SINGLE("0")
      TAIHU_O8_Z_SECOND("%[c]", "%%ymm3")
      TAIHU_O8_X("32", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_SINGLE("32")
      "add $64, %[c]\n\t"
      "add $64, %[cx]\n\t"
      "add $64, %[cy]\n\t"
      "cmp %[end], %[c]\n\t"
      "jb 1b\n\t"
      : [c] "+r"(c), [cx] "+r"(cx), [cy] "+r"(cy)
      : [sx] "r"(sx), [sx3] "r"(sx3), [sy] "r"(sy), [sy3] "r"(sy3), [dup] "r"(dup), [da] "r"(da), [end] "r"(end),
        TAIHU_O8_WEIGHT_OPERANDS
      : TAIHU_O8_CLOBBERS);
  return n2;
}

// Two lines at once: line x of plane y (at u) and of plane y + 1 (at u + s2), sharing
// the y-neighbour loads (register blocking along y): the two outputs need planes
// y-4 .. y+5, 10 lines instead of 2 x 9, so each pair of vectors loads 78 instead of 92
// values (9 instead of 16 from the y window, which lives in L2/L3). Per point the very
// same operations in the same order as line_acoustic_o8_x86 (the two y sums are separate
// accumulators, each in plane order), so the results are bitwise equal to two single
// lines. Returns the points done per line (a multiple of 16; the caller does the rest).
constexpr bool kO8PlanePairKernel = true;

// y parts of the vector at OFF for plane y (into ymm5, then added to ymm3 times ry) and
// plane y + 1 (into LY1). ymm0 holds u of plane y at OFF; ymm6 is the loaded plane.
#define TAIHU_O8_Y_PAIR(OFF, LY1)                                                          \
  "vmovups " OFF "(%[cy]), %%ymm6\n\t"                     /* y - 4 */                   \
  "vmulps %%ymm6, %%ymm13, %%ymm5\n\t"                                                    \
  "vmovups " OFF "(%[cy],%[sy],1), %%ymm6\n\t"             /* y - 3 */                   \
  "vfmadd231ps %%ymm6, %%ymm12, %%ymm5\n\t"                                               \
  "vmulps %%ymm6, %%ymm13, " LY1 "\n\t"                                                   \
  "vmovups " OFF "(%[cy],%[sy],2), %%ymm6\n\t"             /* y - 2 */                   \
  "vfmadd231ps %%ymm6, %%ymm11, %%ymm5\n\t"                                               \
  "vfmadd231ps %%ymm6, %%ymm12, " LY1 "\n\t"                                              \
  "vmovups " OFF "(%[cy],%[sy3],1), %%ymm6\n\t"            /* y - 1 */                   \
  "vfmadd231ps %%ymm6, %%ymm10, %%ymm5\n\t"                                               \
  "vfmadd231ps %%ymm6, %%ymm11, " LY1 "\n\t"                                              \
  "vfmadd231ps %%ymm0, %%ymm10, " LY1 "\n\t"               /* y (ymm0) */                \
  "vmovups " OFF "(%[c],%[sy],1), %%ymm6\n\t"              /* y + 1 */                   \
  "vfmadd231ps %%ymm6, %%ymm10, %%ymm5\n\t"                                               \
  "vmovups " OFF "(%[c],%[sy],2), %%ymm6\n\t"              /* y + 2 */                   \
  "vfmadd231ps %%ymm6, %%ymm11, %%ymm5\n\t"                                               \
  "vfmadd231ps %%ymm6, %%ymm10, " LY1 "\n\t"                                              \
  "vmovups " OFF "(%[c],%[sy3],1), %%ymm6\n\t"             /* y + 3 */                   \
  "vfmadd231ps %%ymm6, %%ymm12, %%ymm5\n\t"                                               \
  "vfmadd231ps %%ymm6, %%ymm11, " LY1 "\n\t"                                              \
  "vmovups " OFF "(%[c],%[sy],4), %%ymm6\n\t"              /* y + 4 */                   \
  "vfmadd231ps %%ymm6, %%ymm13, %%ymm5\n\t"                                               \
  "vfmadd231ps %%ymm6, %%ymm12, " LY1 "\n\t"                                              \
  "vfmadd231ps " OFF "(%[c1],%[sy],4), %%ymm13, " LY1 "\n\t" /* y + 5 */                \
  "vfmadd231ps %%ymm5, %%ymm15, %%ymm3\n\t"

__attribute__((noinline)) long line_pair_acoustic_o8_x86(const float* u, float* up, const float* A, long n0, long s1,
                                                         long s2, const AcousticO8Weights& wt) {
  const long n2 = n0 / 16 * 16;
  if (n2 == 0) return 0;
  const char* c = reinterpret_cast<const char*>(u);
  const char* const end = c + n2 * long(sizeof(float));
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;   // line x - 4 of plane y
  const char* cy = c - 4 * sy;   // plane y - 4
  const char* c1 = c + sy;       // plane y + 1
  const char* cx1 = cx + sy;     // line x - 4 of plane y + 1
  const long dup = reinterpret_cast<const char*>(up) - c, da = reinterpret_cast<const char*>(A) - c;
  const float wv[7] = {wt.centre, wt.w[1], wt.w[2], wt.w[3], wt.w[4], wt.rx, wt.ry};
  asm volatile(TAIHU_O8_LOAD_WEIGHTS
      ".p2align 5\n\t"
      "1:\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[sy],4)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c1],%[sy],4)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[dup],1)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c1],%[dup],1)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[da],1)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c1],%[da],1)\n\t"
      TAIHU_O8_Z_FIRST("%[c]", "%%ymm3")
      TAIHU_O8_X("0", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_PAIR("0", "%%ymm4")
      TAIHU_O8_UPDATE("0", "%[c]", "%%ymm0", "%%ymm3")
      TAIHU_O8_Z_SECOND("%[c]", "%%ymm3")
      TAIHU_O8_X("32", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_PAIR("32", "%%ymm8")
      TAIHU_O8_UPDATE("32", "%[c]", "%%ymm0", "%%ymm3")
      TAIHU_O8_Z_FIRST("%[c1]", "%%ymm3")
      TAIHU_O8_X("0", "%[c1]", "%[cx1]", "%%ymm3")
      "vfmadd231ps %%ymm4, %%ymm15, %%ymm3\n\t"
      TAIHU_O8_UPDATE("0", "%[c1]", "%%ymm0", "%%ymm3")
      TAIHU_O8_Z_SECOND("%[c1]", "%%ymm3")
      TAIHU_O8_X("32", "%[c1]", "%[cx1]", "%%ymm3")
      "vfmadd231ps %%ymm8, %%ymm15, %%ymm3\n\t"
      TAIHU_O8_UPDATE("32", "%[c1]", "%%ymm0", "%%ymm3")
      "add $64, %[c]\n\t"
      "add $64, %[cx]\n\t"
      "add $64, %[cy]\n\t"
      "add $64, %[c1]\n\t"
      "add $64, %[cx1]\n\t"
      "cmp %[end], %[c]\n\t"
      "jb 1b\n\t"
      : [c] "+r"(c), [cx] "+r"(cx), [cy] "+r"(cy), [c1] "+r"(c1), [cx1] "+r"(cx1)
      : [sx] "r"(sx), [sx3] "r"(sx3), [sy] "r"(sy), [sy3] "r"(sy3), [dup] "r"(dup), [da] "r"(da), [end] "r"(end),
        TAIHU_O8_WEIGHT_OPERANDS
      : TAIHU_O8_CLOBBERS);
  return n2;
}

// The same with A as packed halves (for the acoustic K = 1 a plain half array in the
// layout's order, hp at line x of plane y; plane y + 1's at hp + s2): 14 bytes per point
// from DRAM instead of 16. The halves are widened in ymm6 (ymm4 holds a y part here).
#define TAIHU_O8_UPDATE_HALF6(OFF, HADDR, B, U, LAP)                                       \
  "vaddps " U ", " U ", " U "\n\t"                                                          \
  "vsubps " OFF "(" B ",%[dup],1), " U ", " U "\n\t"                                        \
  "vcvtph2ps " HADDR ", %%ymm6\n\t"                                                        \
  "vfmadd231ps %%ymm6, " LAP ", " U "\n\t"                                                 \
  "vmovups " U ", " OFF "(" B ",%[dup],1)\n\t"

__attribute__((noinline)) long line_pair_acoustic_o8_x86_half(const float* u, float* up, const unsigned short* hp,
                                                              long n0, long s1, long s2, const AcousticO8Weights& wt) {
  const long n2 = n0 / 16 * 16;
  if (n2 == 0) return 0;
  const char* c = reinterpret_cast<const char*>(u);
  const char* const end = c + n2 * long(sizeof(float));
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;
  const char* cy = c - 4 * sy;
  const char* c1 = c + sy;
  const char* cx1 = cx + sy;
  const unsigned short* hp1 = hp + s2;
  const long dup = reinterpret_cast<const char*>(up) - c;
  const float wv[7] = {wt.centre, wt.w[1], wt.w[2], wt.w[3], wt.w[4], wt.rx, wt.ry};
  asm volatile(TAIHU_O8_LOAD_WEIGHTS
      ".p2align 5\n\t"
      "1:\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[sy],4)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c1],%[sy],4)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[dup],1)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c1],%[dup],1)\n\t"
      "prefetcht0 2048(%[hp])\n\t"
      "prefetcht0 2048(%[hp1])\n\t"
      TAIHU_O8_Z_FIRST("%[c]", "%%ymm3")
      TAIHU_O8_X("0", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_PAIR("0", "%%ymm4")
      TAIHU_O8_UPDATE_HALF6("0", "(%[hp])", "%[c]", "%%ymm0", "%%ymm3")
      TAIHU_O8_Z_SECOND("%[c]", "%%ymm3")
      TAIHU_O8_X("32", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_PAIR("32", "%%ymm8")
      TAIHU_O8_UPDATE_HALF6("32", "16(%[hp])", "%[c]", "%%ymm0", "%%ymm3")
      TAIHU_O8_Z_FIRST("%[c1]", "%%ymm3")
      TAIHU_O8_X("0", "%[c1]", "%[cx1]", "%%ymm3")
      "vfmadd231ps %%ymm4, %%ymm15, %%ymm3\n\t"
      TAIHU_O8_UPDATE_HALF6("0", "(%[hp1])", "%[c1]", "%%ymm0", "%%ymm3")
      TAIHU_O8_Z_SECOND("%[c1]", "%%ymm3")
      TAIHU_O8_X("32", "%[c1]", "%[cx1]", "%%ymm3")
      "vfmadd231ps %%ymm8, %%ymm15, %%ymm3\n\t"
      TAIHU_O8_UPDATE_HALF6("32", "16(%[hp1])", "%[c1]", "%%ymm0", "%%ymm3")
      "add $64, %[c]\n\t"
      "add $64, %[cx]\n\t"
      "add $64, %[cy]\n\t"
      "add $64, %[c1]\n\t"
      "add $64, %[cx1]\n\t"
      "add $32, %[hp]\n\t"
      "add $32, %[hp1]\n\t"
      "cmp %[end], %[c]\n\t"
      "jb 1b\n\t"
      : [c] "+r"(c), [cx] "+r"(cx), [cy] "+r"(cy), [c1] "+r"(c1), [cx1] "+r"(cx1), [hp] "+r"(hp), [hp1] "+r"(hp1)
      : [sx] "r"(sx), [sx3] "r"(sx3), [sy] "r"(sy), [sy3] "r"(sy3), [dup] "r"(dup), [end] "r"(end),
        TAIHU_O8_WEIGHT_OPERANDS
      : TAIHU_O8_CLOBBERS);
  return n2;
}
#undef TAIHU_O8_UPDATE_HALF6
#undef TAIHU_O8_Y_PAIR

// The same with A as packed halves (kernel_api.hpp; for the acoustic K = 1 that is a
// plain half array in the layout's order, hp at the line's first point): 14 bytes per
// point from DRAM instead of 16, one vcvtph2ps per 8 points.
__attribute__((noinline)) long line_acoustic_o8_x86_half(const float* u, float* up, const unsigned short* hp,
                                                         long n0, long s1, long s2, const AcousticO8Weights& wt) {
  const long n2 = n0 / 16 * 16;
  if (n2 == 0) return 0;
  const char* c = reinterpret_cast<const char*>(u);
  const char* const end = c + n2 * long(sizeof(float));
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;
  const char* cy = c - 4 * sy;
  const long dup = reinterpret_cast<const char*>(up) - c;
  const float wv[7] = {wt.centre, wt.w[1], wt.w[2], wt.w[3], wt.w[4], wt.rx, wt.ry};
  asm volatile(TAIHU_O8_LOAD_WEIGHTS
      ".p2align 5\n\t"
      "1:\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[sy],4)\n\t"
      "prefetcht0 " TAIHU_O8_PF "(%[c],%[dup],1)\n\t"
      "prefetcht0 2048(%[hp])\n\t"
      TAIHU_O8_Z_FIRST("%[c]", "%%ymm3")
      TAIHU_O8_X("0", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_SINGLE_HALF("0", "0")
      TAIHU_O8_Z_SECOND("%[c]", "%%ymm3")
      TAIHU_O8_X("32", "%[c]", "%[cx]", "%%ymm3")
      TAIHU_O8_Y_SINGLE_HALF("32", "16")
      "add $64, %[c]\n\t"
      "add $64, %[cx]\n\t"
      "add $64, %[cy]\n\t"
      "add $32, %[hp]\n\t"
      "cmp %[end], %[c]\n\t"
      "jb 1b\n\t"
      : [c] "+r"(c), [cx] "+r"(cx), [cy] "+r"(cy), [hp] "+r"(hp)
      : [sx] "r"(sx), [sx3] "r"(sx3), [sy] "r"(sy), [sy3] "r"(sy3), [dup] "r"(dup), [end] "r"(end),
        TAIHU_O8_WEIGHT_OPERANDS
      : TAIHU_O8_CLOBBERS);
  return n2;
}

#undef TAIHU_O8_Z_FIRST
#undef TAIHU_O8_Z_SECOND
#undef TAIHU_O8_X
#undef TAIHU_O8_UPDATE
#undef TAIHU_O8_UPDATE_HALF
#undef TAIHU_O8_Y_PART
#undef TAIHU_O8_Y_SINGLE_HALF
#undef TAIHU_O8_Y_SINGLE
#undef TAIHU_O8_LOAD_WEIGHTS
#undef TAIHU_O8_WEIGHT_OPERANDS
#undef TAIHU_O8_CLOBBERS
#undef TAIHU_O8_PF
#endif

}  // namespace
}  // namespace taihu::stencil::kernels
