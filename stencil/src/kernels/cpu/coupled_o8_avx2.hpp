// The 3D variable-density acoustic and VTI line kernels of space order 8 (radius 4),
// hand-written with AVX2 + FMA intrinsics (8 floats per vector). Included by
// cpu_step_impl.hpp only inside a translation unit compiled with AVX2.
//
// Contract: like line_density<4, 3> and line_vti<4, 3> (kernel_api.hpp gives the
// updates): on the line's first multiple of 8 points, returning how many they did (the
// caller finishes the ragged end); they read the fields at +-4 along z (by rotation of
// the vectors at c - 8, c and c + 8 floats) and at +-1..4 lines / planes along x and y,
// and prefetch the stencil field's leading plane 4 KiB ahead (the other streams are
// sequential and left to the hardware).
//
// Why by hand: the template line code made GCC keep one address per neighbour and per
// coefficient array (16 + 7), spill them and reload them from the stack every vector
// (IPC near 1, 0.3 GPts/s per core, a third of the acoustic kernel). Here every
// neighbour is one x86 address [base + index * {1, 2, 4}] from the centre pointer c,
// c - 4s and the byte strides s and 3s per axis, the other arrays are [c + offset], and
// the per-axis weights are FMA memory operands from one broadcast table (L1), so the
// loop needs 14 general registers and no spills. Results match the template kernels
// within rounding (the terms are summed per axis in the same order as the reference).
//
// Coefficients (`CS`, cpu_step_impl.hpp): FloatCoefs (separate float arrays, each read at
// [c + its offset]) or HalfCoefs, the packed halves (kernel_api.hpp: one 16 K-byte block
// per 8 points, so one pointer walks every coefficient and each is one aligned 16-byte
// vcvtph2ps load; needs F16C, which every AVX2 CPU has).
#pragma once
#include <immintrin.h>

#include "kernels/half_float.hpp"

namespace taihu::stencil::kernels {
namespace {

inline __m256 o8_load(const char* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
inline void o8_store(const char* p, __m256 v) {
  _mm256_storeu_ps(reinterpret_cast<float*>(const_cast<char*>(p)), v);
}

// The z neighbours u[c + k] (p[k]) and u[c - k] (m[k]), k = 1..4, of the vector at c, by
// rotation of the vectors before, at and after it: 3 aligned-stride loads, 2 lane
// permutes and 6 byte aligns instead of 8 unaligned loads, half of them line-split.
struct O8ZNeighbours {
  __m256 p[5], m[5];
  O8ZNeighbours(const char* c, __m256 v0) {
    const __m256 vm = o8_load(c - 32), vp = o8_load(c + 32);
    p[4] = _mm256_permute2f128_ps(v0, vp, 0x21);  // (v0 high, vp low)
    m[4] = _mm256_permute2f128_ps(vm, v0, 0x21);  // (vm high, v0 low)
    p[1] = plus<1>(v0), p[2] = plus<2>(v0), p[3] = plus<3>(v0);
    m[1] = minus<1>(v0), m[2] = minus<2>(v0), m[3] = minus<3>(v0);
  }
  template <int K>
  __m256 plus(__m256 v0) const {
    return _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(p[4]), _mm256_castps_si256(v0), 4 * K));
  }
  template <int K>
  __m256 minus(__m256 v0) const {
    return _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(v0), _mm256_castps_si256(m[4]), 16 - 4 * K));
  }
};

// `Table` (VecWeights<4> of cpu_step_impl.hpp) holds the weights broadcast to whole
// vectors: d2[a][k], d1[a][k] per axis a (z, x, y) and k = 0..4, centre (laplacian) and
// centre_h (x and y only).
// The table as seen from inside the loop: the empty asm hides that it is loop-invariant,
// so each weight stays a memory operand instead of a register (there are 32 of them).
template <class Table>
inline const Table* o8_opaque(const Table* t) {
  asm("" : "+r"(t));
  return t;
}

// Sum over k = 1..4 of d2[a][k] (u[+k s] + u[-k s]) into d2s and d1[a][k] (u[+k s] -
// u[-k s]) into d1s, from c, cm = c - 4s, s and s3 = 3s (bytes).
template <class Table>
inline void o8_strided_pairs(const Table* w, int a, const char* c, const char* cm, long s, long s3, __m256& d2s,
                             __m256& d1s) {
  __m256 p = o8_load(c + s), m = o8_load(cm + s3);
  d2s = _mm256_mul_ps(w->d2[a][1], _mm256_add_ps(p, m));
  d1s = _mm256_mul_ps(w->d1[a][1], _mm256_sub_ps(p, m));
  p = o8_load(c + 2 * s), m = o8_load(cm + 2 * s);
  d2s = _mm256_fmadd_ps(w->d2[a][2], _mm256_add_ps(p, m), d2s);
  d1s = _mm256_fmadd_ps(w->d1[a][2], _mm256_sub_ps(p, m), d1s);
  p = o8_load(c + s3), m = o8_load(cm + s);
  d2s = _mm256_fmadd_ps(w->d2[a][3], _mm256_add_ps(p, m), d2s);
  d1s = _mm256_fmadd_ps(w->d1[a][3], _mm256_sub_ps(p, m), d1s);
  p = o8_load(c + 4 * s), m = o8_load(cm);
  d2s = _mm256_fmadd_ps(w->d2[a][4], _mm256_add_ps(p, m), d2s);
  d1s = _mm256_fmadd_ps(w->d1[a][4], _mm256_sub_ps(p, m), d1s);
}

// The same, second derivative only.
template <class Table>
inline __m256 o8_strided_sum(const Table* w, int a, const char* c, const char* cm, long s, long s3) {
  __m256 d2s = _mm256_mul_ps(w->d2[a][1], _mm256_add_ps(o8_load(c + s), o8_load(cm + s3)));
  d2s = _mm256_fmadd_ps(w->d2[a][2], _mm256_add_ps(o8_load(c + 2 * s), o8_load(cm + 2 * s)), d2s);
  d2s = _mm256_fmadd_ps(w->d2[a][3], _mm256_add_ps(o8_load(c + s3), o8_load(cm + s)), d2s);
  return _mm256_fmadd_ps(w->d2[a][4], _mm256_add_ps(o8_load(c + 4 * s), o8_load(cm)), d2s);
}

// Coefficient k of the 8 points at c: from the float array at byte offset off[k] of c,
// or from the packed block at h.
template <class CS, int K>
struct O8Coefs {
  long off[K];
  const unsigned short* h = nullptr;
  O8Coefs(const CS& cf, const char* c) {
    if constexpr (CS::kHalf)
      h = cf.p;
    else
      for (int k = 0; k < K; ++k) off[k] = reinterpret_cast<const char*>(cf.a[k]) - c;
  }
  __m256 at(const char* c, int k) const {
    if constexpr (CS::kHalf) {
#if defined(__F16C__)
      return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h + 8 * k)));
#else
      float f[8];
      for (int l = 0; l < 8; ++l) f[l] = half_to_float(h[8 * k + l]);
      return _mm256_loadu_ps(f);
#endif
    } else
      return o8_load(c + off[k]);
  }
  void next() {
    if constexpr (CS::kHalf) h += 8 * K;
  }
};

// Variable density: up <- 2u - up + (A lap u - sum_a G_a d_a u); coefficients {A, G_z, G_x, G_y}.
template <class CS, class Table>
__attribute__((noinline)) long line_density_o8_avx2(const float* u, float* up, const CS& cf, long n0, long s1,
                                                    long s2, const Table& table) {
  const long nv = n0 / 8 * 8;
  if (nv == 0) return 0;
  const char* c = reinterpret_cast<const char*>(u);
  const char* const end = c + nv * long(sizeof(float));
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;
  const char* cy = c - 4 * sy;
  const long dup = reinterpret_cast<const char*>(up) - c;
  O8Coefs<CS, 4> co(cf, c);
  const long lead = 4 * sy + 4096;
  for (; c < end; c += 32, cx += 32, cy += 32, co.next()) {
    asm("" : "+r"(c), "+r"(cx), "+r"(cy));
    const Table* w = o8_opaque(&table);
    if ((reinterpret_cast<unsigned long>(c) & 63) == 0) _mm_prefetch(c + lead, _MM_HINT_T0);
    const __m256 u0 = o8_load(c);
    __m256 lap = _mm256_mul_ps(w->centre, u0);
    const O8ZNeighbours z(c, u0);
    __m256 dz2 = _mm256_mul_ps(w->d2[0][1], _mm256_add_ps(z.p[1], z.m[1]));
    __m256 dz1 = _mm256_mul_ps(w->d1[0][1], _mm256_sub_ps(z.p[1], z.m[1]));
    for (int k = 2; k <= 4; ++k) {
      dz2 = _mm256_fmadd_ps(w->d2[0][k], _mm256_add_ps(z.p[k], z.m[k]), dz2);
      dz1 = _mm256_fmadd_ps(w->d1[0][k], _mm256_sub_ps(z.p[k], z.m[k]), dz1);
    }
    lap = _mm256_add_ps(lap, dz2);
    __m256 grad = _mm256_mul_ps(co.at(c, 1), dz1);
    __m256 d2s, d1s;
    o8_strided_pairs(w, 1, c, cx, sx, sx3, d2s, d1s);
    lap = _mm256_add_ps(lap, d2s);
    grad = _mm256_fmadd_ps(co.at(c, 2), d1s, grad);
    o8_strided_pairs(w, 2, c, cy, sy, sy3, d2s, d1s);
    lap = _mm256_add_ps(lap, d2s);
    grad = _mm256_fmadd_ps(co.at(c, 3), d1s, grad);
    const __m256 prev = _mm256_sub_ps(_mm256_add_ps(u0, u0), o8_load(c + dup));
    o8_store(c + dup, _mm256_add_ps(prev, _mm256_fmsub_ps(co.at(c, 0), lap, grad)));
  }
  return nv;
}

// VTI: pp <- 2p - pp + A H2(p) + C d2z(q), qp <- 2q - qp + B H2(p) + C d2z(q);
// coefficients {A, B, C}.
template <class CS, class Table>
__attribute__((noinline)) long line_vti_o8_avx2(const float* p, float* pp, const float* q, float* qp, const CS& cf,
                                                long n0, long s1, long s2, const Table& table) {
  const long nv = n0 / 8 * 8;
  if (nv == 0) return 0;
  const char* c = reinterpret_cast<const char*>(p);
  const char* const end = c + nv * long(sizeof(float));
  const long sx = s1 * long(sizeof(float)), sx3 = 3 * sx, sy = s2 * long(sizeof(float)), sy3 = 3 * sy;
  const char* cx = c - 4 * sx;
  const char* cy = c - 4 * sy;
  auto offset = [c](const void* f) { return reinterpret_cast<const char*>(f) - c; };
  const long dq = offset(q), dpp = offset(pp), dqp = offset(qp);
  O8Coefs<CS, 3> co(cf, c);
  const long lead = 4 * sy + 4096;
  for (; c < end; c += 32, cx += 32, cy += 32, co.next()) {
    asm("" : "+r"(c), "+r"(cx), "+r"(cy));
    const Table* w = o8_opaque(&table);
    if ((reinterpret_cast<unsigned long>(c) & 63) == 0) _mm_prefetch(c + lead, _MM_HINT_T0);
    const __m256 p0 = o8_load(c);
    const __m256 hx = o8_strided_sum(w, 1, c, cx, sx, sx3);
    const __m256 hy = o8_strided_sum(w, 2, c, cy, sy, sy3);
    const __m256 h2 = _mm256_add_ps(_mm256_fmadd_ps(w->centre_h, p0, hx), hy);
    const char* cq = c + dq;
    const __m256 q0 = o8_load(cq);
    const O8ZNeighbours z(cq, q0);
    __m256 vz = _mm256_mul_ps(w->d2[0][0], q0);
    for (int k = 1; k <= 4; ++k) vz = _mm256_fmadd_ps(w->d2[0][k], _mm256_add_ps(z.p[k], z.m[k]), vz);
    const __m256 cz = _mm256_mul_ps(co.at(c, 2), vz);
    const __m256 pprev = _mm256_sub_ps(_mm256_add_ps(p0, p0), o8_load(c + dpp));
    o8_store(c + dpp, _mm256_add_ps(_mm256_fmadd_ps(co.at(c, 0), h2, pprev), cz));
    const __m256 qprev = _mm256_sub_ps(_mm256_add_ps(q0, q0), o8_load(c + dqp));
    o8_store(c + dqp, _mm256_add_ps(_mm256_fmadd_ps(co.at(c, 1), h2, qprev), cz));
  }
  return nv;
}

}  // namespace
}  // namespace taihu::stencil::kernels
