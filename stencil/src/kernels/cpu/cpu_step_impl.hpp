// The optimized CPU time step, written once and compiled once per ISA (cpu_step_generic.cpp
// with baseline flags, cpu_step_avx2.cpp with -mavx2 -mfma, cpu_step_avx512.cpp with
// AVX-512F): everything here lives in an
// anonymous namespace so each ISA's instantiations stay in their own translation unit.
//
// How it is fast:
//  - explicit SIMD through GCC vector types of the ISA's native width (16 B baseline,
//    32 B with AVX2): unaligned loads for the neighbours, one accumulator per axis so the
//    FMA chains are short, the stencil radius a template parameter (fully unrolled);
//  - merged per-point coefficients (kernel_api.hpp): 4 B (acoustic), 16 B (density: A and
//    the precomputed A grad(ln rho)), 12 B (vti), so the compulsory traffic is the fields
//    plus those bytes and the arithmetic per point is small; compressed to IEEE halves
//    packed per 8-point block when StepArgs::packed is set (2, 8, 6 B: every line function
//    takes its coefficients through FloatCoefs or HalfCoefs, the hand kernels decode
//    with F16C);
//  - 2.5D streaming: threads split the slow axis y into contiguous slabs; each sweeps its
//    slab plane by plane (every x line of a plane, z contiguous), so the 2H+1 planes of
//    the y window stay in the shared L3 and every array crosses DRAM once per step in
//    long sequential streams the hardware prefetchers follow (software prefetching a
//    few lines ahead measured no faster); fields sit on transparent huge pages (grid.cpp);
//  - 3D acoustic order 8 runs a hand-written x86 line kernel (acoustic_o8_x86.hpp: AVX2
//    inline assembly on each line's multiple of 16 points; AVX-512 intrinsics on the
//    whole line in 64-byte-aligned vectors with masked ends): one base + index * scale
//    address per neighbour, 5.5 instructions per point instead of 8.4
//    (TAIHU_STENCIL_HAND=0 turns it off for A/B comparisons); 3D density and VTI
//    of order 8 run hand-written AVX2 intrinsics line kernels (coupled_o8_avx2.hpp: the
//    same one-address-per-neighbour scheme, weights as FMA memory operands);
//  - the update is in place (u_prev <- u_next): the line being written was just read,
//    so there is no write-allocate traffic and non-temporal stores would not help.
// Temporal blocking (cpu_step_pair) fuses two steps in one sweep with point-to-point
// flags between neighbouring slabs instead of barriers (see step_pair_acoustic3d).
// TTI (step_tti3d) streams the same y slabs with a ring of first-derivative planes so
// its mixed derivatives cost O(H) per point instead of the reference's O(H^2).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "kernels/flush_denormals.hpp"
#include "kernels/half_float.hpp"
#include "kernels/kernel_api.hpp"
#include "kernels/parallel_size.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/topology.hpp"
#include "taihu/arch/threads.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>

#include "kernels/cpu/acoustic_o8_x86.hpp"
#include "kernels/cpu/coupled_o8_avx2.hpp"
#endif

namespace taihu::stencil::kernels {
namespace {

#ifdef _OPENMP
inline long team_thread_index() { return omp_get_thread_num(); }
inline long team_thread_count() { return omp_get_num_threads(); }
#else
inline long team_thread_index() { return 0; }
inline long team_thread_count() { return 1; }
#endif

#if defined(__AVX2__)
using vf = float __attribute__((vector_size(32)));
using vf_unaligned = float __attribute__((vector_size(32), aligned(4)));
#else
using vf = float __attribute__((vector_size(16)));
using vf_unaligned = float __attribute__((vector_size(16), aligned(4)));
#endif
constexpr long kW = sizeof(vf) / sizeof(float);

inline vf load(const float* p) { return *reinterpret_cast<const vf_unaligned*>(p); }
inline void store(float* p, vf v) { *reinterpret_cast<vf_unaligned*>(p) = v; }

template <int H>
struct Weights {
  float d2[3][H + 1];
  float d1[3][H + 1];
  float centre, centre_h;  // all axes; horizontal axes only (vti)
  // The second-derivative weights factorised per axis, d2[a][k] ~ d2[0][k] * ratio[a]
  // (Fornberg's weights over h_a^2): the laplacian needs H + 3 weights, not 3H + 1,
  // which keeps them in registers next to the accumulators.
  float ratio[3];
  float ratio1[3];  // the same for the first-derivative weights, d1[a][k] ~ d1[0][k] * ratio1[a]
};

template <int H>
Weights<H> load_weights(const FdWeights& fd, int dim) {
  Weights<H> w{};
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k <= H; ++k) {
      w.d2[a][k] = a < dim ? fd.d2[a][k] : 0.f;
      w.d1[a][k] = a < dim ? fd.d1[a][k] : 0.f;
    }
  w.centre = fd.centre;
  w.centre_h = fd.centre - fd.d2[0][0];
  for (int a = 0; a < 3; ++a) {
    w.ratio[a] = a < dim ? fd.d2[a][1] / fd.d2[0][1] : 0.f;
    w.ratio1[a] = a < dim ? fd.d1[a][1] / fd.d1[0][1] : 0.f;
  }
  return w;
}

// The weights broadcast to whole vectors and kept in memory (L1): the FMAs take them as
// memory operands, so kernels with more weights than free registers (density: 25, vti:
// 14) neither spill nor re-broadcast them (AVX2 has no embedded broadcast), and the
// per-axis weights are used as they are instead of factorised with an extra multiply.
template <int H>
struct VecWeights {
  vf d2[3][H + 1];
  vf d1[3][H + 1];
  vf centre, centre_h;
  explicit VecWeights(const Weights<H>& w) {
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k <= H; ++k) {
        d2[a][k] = vf{} + w.d2[a][k];
        d1[a][k] = vf{} + w.d1[a][k];
      }
    centre = vf{} + w.centre;
    centre_h = vf{} + w.centre_h;
  }
};

// The weights as seen from inside a loop iteration: the empty asm hides that the
// pointer is loop-invariant, so the compiler takes each weight as a memory operand of
// its FMA instead of hoisting them all into registers and spilling the accumulators.
template <int H>
inline const VecWeights<H>& in_memory(const VecWeights<H>& w) {
  const VecWeights<H>* p = &w;
  asm("" : "+r"(p));
  return *p;
}

// Each line function runs its body once per vector of kW points, then once per scalar
// point for the ragged end of the line (T = vf or float, same operation order).
template <class T>
inline T ld(const float* p) {
  if constexpr (sizeof(T) == sizeof(float))
    return *p;
  else
    return load(p);
}
template <class T>
inline void st(float* p, T v) {
  if constexpr (sizeof(T) == sizeof(float))
    *p = v;
  else
    store(p, v);
}

// kW halves from h as floats: one vcvtph2ps with F16C, else converted one by one (the
// portable build, where these kernels are the correctness path).
inline vf load_half(const std::uint16_t* h) {
#if defined(__AVX2__) && defined(__F16C__)
  return vf(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h))));
#else
  vf v;
  for (long l = 0; l < kW; ++l) v[l] = half_to_float(h[l]);
  return v;
#endif
}

// The per-point coefficients a line function reads, get<T>(j, k) = coefficient k of the
// line's point j (T = vf for the kW points from j, a multiple of kW, or float):
//  - FloatCoefs<K>: K float arrays, each already offset to the line's first point;
//  - HalfCoefs<K>: the packed halves (kernel_api.hpp, packed_index) from the block of
//    the line's first point (line starts are multiples of 8, so blocks line up).
template <int K>
struct FloatCoefs {
  static constexpr bool kHalf = false;
  const float* a[K];
  template <class T>
  T get(long j, int k) const {
    return ld<T>(a[k] + j);
  }
  const void* ahead(long j, int k) const { return a[k] + j; }
};
template <int K>
struct HalfCoefs {
  static constexpr bool kHalf = true;
  const std::uint16_t* p;
  template <class T>
  T get(long j, int k) const {
    const std::uint16_t* h = p + packed_index(j, K, k);
    if constexpr (sizeof(T) == sizeof(float))
      return half_to_float(*h);
    else
      return load_half(h);
  }
  const void* ahead(long j, int) const { return p + packed_index(j, K, 0); }
};
// The coefficient source of the line at layout index `off` (a line start).
template <int K>
inline HalfCoefs<K> half_coefs(const std::uint16_t* packed, long off) {
  return HalfCoefs<K>{packed + packed_index(off, K, 0)};
}

// Elements R .. R + kW - 1 of the concatenation (a, b), 0 < R < kW (AVX2: one lane
// permute + one byte align, the permute shared by every R of the same pair).
template <int R>
inline vf rotate(vf a, vf b) {
#if defined(__AVX2__)
  return __builtin_shufflevector(a, b, R, R + 1, R + 2, R + 3, R + 4, R + 5, R + 6, R + 7);
#else
  return __builtin_shufflevector(a, b, R, R + 1, R + 2, R + 3);
#endif
}

// The z (unit-stride) neighbours u[c + K], -H <= K <= H, of the vector at c, built by
// register rotation from the aligned vectors around it: 2J + 1 loads (shared with the
// neighbouring vectors) instead of 2H unaligned loads, which are the kernel's limit.
template <int H>
struct ZRow {
  static constexpr int J = (H + int(kW) - 1) / int(kW);
  vf v[2 * J + 1];
  explicit ZRow(const float* c) {
    for (int j = -J; j <= J; ++j) v[j + J] = load(c + j * kW);
  }
  template <int K>
  vf at() const {
    constexpr int j = K >= 0 ? K / int(kW) : -((-K + int(kW) - 1) / int(kW));
    constexpr int r = K - j * int(kW);
    if constexpr (r == 0)
      return v[j + J];
    else
      return rotate<r>(v[j + J], v[j + J + 1]);
  }
};

// d2z(u) * h_z^2-weights from K = 2 on, added to acc in the order of the scalar code.
template <int H, int K = 2>
inline void add_z_terms(const ZRow<H>& row, const Weights<H>& w, vf& acc) {
  if constexpr (K <= H) {
    acc += w.d2[0][K] * (row.template at<K>() + row.template at<-K>());
    add_z_terms<H, K + 1>(row, w, acc);
  }
}

// The same for the first derivative along z (antisymmetric weights).
template <int H, int K = 2>
inline void add_dz_terms(const ZRow<H>& row, const Weights<H>& w, vf& acc) {
  if constexpr (K <= H) {
    acc += w.d1[0][K] * (row.template at<K>() - row.template at<-K>());
    add_dz_terms<H, K + 1>(row, w, acc);
  }
}

// Along z from K on: the second-derivative sum (weights d2) and the first-derivative
// difference (weights d1) of the same neighbour pair, from one rotation each.
template <int H, int K = 2>
inline void add_z_pairs(const ZRow<H>& row, const VecWeights<H>& w, vf& d2, vf& d1) {
  if constexpr (K <= H) {
    const vf a = row.template at<K>(), b = row.template at<-K>();
    d2 += w.d2[0][K] * (a + b);
    d1 += w.d1[0][K] * (a - b);
    add_z_pairs<H, K + 1>(row, w, d2, d1);
  }
}

// lap(u) at U consecutive vectors (or scalars) from c: one accumulator per axis and
// vector, so the FMA chains are short and each weight is loaded once for U vectors.
// Vectors and scalars add the same terms in the same order (bitwise-equal results).
template <int H, int DIM, int U, class T>
inline void laplacian(const float* c, long s1, long s2, const Weights<H>& w, T (&lap)[U]) {
  constexpr long step = sizeof(T) / sizeof(float);
  T lz[U], lx[U], ly[U];
  const float w1 = w.d2[0][1];
  for (int v = 0; v < U; ++v) {
    const float* p = c + v * step;
    if constexpr (std::is_same_v<T, vf>) {
      const ZRow<H> row(p);
      lz[v] = w.centre * row.template at<0>() + w1 * (row.template at<1>() + row.template at<-1>());
      add_z_terms<H>(row, w, lz[v]);
    } else {
      lz[v] = w.centre * ld<T>(p) + w1 * (ld<T>(p + 1) + ld<T>(p - 1));
      for (int k = 2; k <= H; ++k) lz[v] += w.d2[0][k] * (ld<T>(p + k) + ld<T>(p - k));
    }
    lx[v] = w1 * (ld<T>(p + s1) + ld<T>(p - s1));
    if constexpr (DIM == 3) ly[v] = w1 * (ld<T>(p + s2) + ld<T>(p - s2));
  }
#pragma GCC unroll 16
  for (int k = 2; k <= H; ++k) {
    const float wk = w.d2[0][k];
#pragma GCC unroll 4
    for (int v = 0; v < U; ++v) {
      const float* p = c + v * step;
      lx[v] += wk * (ld<T>(p + k * s1) + ld<T>(p - k * s1));
      if constexpr (DIM == 3) ly[v] += wk * (ld<T>(p + k * s2) + ld<T>(p - k * s2));
    }
  }
  for (int v = 0; v < U; ++v) {
    if constexpr (DIM == 3)
      lap[v] = lz[v] + (w.ratio[1] * lx[v] + w.ratio[2] * ly[v]);
    else
      lap[v] = lz[v] + w.ratio[1] * lx[v];
  }
}

// TAIHU_STENCIL_HAND=0 turns the hand-written x86 line kernels (acoustic_o8_x86.hpp) off,
// for A/B comparisons against the template kernels (read once per time step).
inline bool hand_kernels_enabled() {
  const char* v = std::getenv("TAIHU_STENCIL_HAND");
  return !(v && v[0] == '0');
}

// The hand-written density and VTI kernels (coupled_o8_avx2.hpp) beat the template
// kernels by 1.01-1.22x where they were written (2026-11-22), but run 5-14% slower than
// them on the AVX-512 Xeon (family 6 model 167, 2026-11-28, 256^3, 2 threads, quiet
// host; the same under TAIHU_ISA=avx2). Each kernel must beat the template it replaces,
// so they run by default only on CPUs without AVX-512F; TAIHU_STENCIL_HAND=1 forces
// them on, =0 turns every hand kernel off.
inline bool coupled_hand_kernels_enabled() {
  const char* v = std::getenv("TAIHU_STENCIL_HAND");
  if (v && v[0] == '0') return false;
  if (v && v[0] == '1') return true;
  return !arch::cpu_features().avx512f;
}

// Software prefetch of the streams that come from DRAM, `dist` floats ahead of the
// point being computed (0: none): the stencil array's leading plane (`lead` floats
// past the point) and the arrays read at the point. Issued once per 16 points.
struct Ahead {
  long lead = 0, dist = 0;
  bool hand_kernels = true;  // false under TAIHU_STENCIL_HAND=0: template kernels only (A/B)
  bool coupled_hand_kernels = true;  // density/VTI hand kernels: coupled_hand_kernels_enabled()
};
inline void prefetch(const float* p) { __builtin_prefetch(p, 0, 3); }

// Out of line on purpose: the single step and the temporal-blocking sweep must run the
// very same machine code (GCC contracts a * b + c into FMAs per inlined call site, which
// can differ in the last bit), so that two fused steps equal two single steps bitwise.
// Space order 8 in 3D runs the hand-written x86 kernel on the line's multiple of 16
// points, then the template code on the rest.
template <int H, int DIM, class CS>
__attribute__((noinline)) void line_acoustic(const float* __restrict u, float* __restrict up, CS cf, long n0,
                                             long s1, long s2, const Weights<H>& w, Ahead ah) {
  auto body = [&]<int U>(auto tag, long i, std::integral_constant<int, U>) {
    using T = decltype(tag);
    constexpr long step = sizeof(T) / sizeof(float);
    T lap[U];
    laplacian<H, DIM, U, T>(u + i, s1, s2, w, lap);
    for (int v = 0; v < U; ++v) {
      const long j = i + v * step;
      st<T>(up + j, 2.f * ld<T>(u + j) - ld<T>(up + j) + cf.template get<T>(j, 0) * lap[v]);
    }
  };
  long i = 0;
#if defined(__AVX2__)
  if constexpr (H == 4 && DIM == 3) {
    if (ah.hand_kernels) {
      const AcousticO8Weights wt{w.centre, {0.f, w.d2[0][1], w.d2[0][2], w.d2[0][3], w.d2[0][4]}, w.ratio[1],
                                 w.ratio[2]};
      if constexpr (CS::kHalf)
        i = line_acoustic_o8_x86_half(u, up, cf.p, n0, s1, s2, wt);
      else
        i = line_acoustic_o8_x86(u, up, cf.a[0], n0, s1, s2, wt);
    }
  }
#endif
  for (; i + 2 * kW <= n0; i += 2 * kW) {
    if (ah.dist) {
      prefetch(u + i + ah.lead + ah.dist);
      prefetch(up + i + ah.dist);
      prefetch(static_cast<const float*>(cf.ahead(i + ah.dist, 0)));
    }
    body(vf{}, i, std::integral_constant<int, 2>{});
  }
  for (; i + kW <= n0; i += kW) body(vf{}, i, std::integral_constant<int, 1>{});
  for (; i < n0; ++i) body(0.f, i, std::integral_constant<int, 1>{});
}

// Variable density with the buoyancy terms merged ahead of time (make_density_terms):
// u_prev <- 2u - u_prev + A lap(u) - sum_a G_a d_a u,   G_a = A d_a(ln rho).
// Each neighbour pair is loaded (or rotated) once and feeds both its sum (laplacian)
// and its difference (gradient); the weights are per axis, from memory (VecWeights).
template <int H, int DIM, class CS>
inline void line_density(const float* __restrict u, float* __restrict up, CS cf, long n0, long s1, long s2,
                         const Weights<H>& ws, const VecWeights<H>& wv, Ahead ah) {
  // Second and first derivative along a strided axis, pairs shared.
  auto strided = [&](const VecWeights<H>& w, const float* c, long s, int axis, vf& d2, vf& d1) {
    vf a = load(c + s), b = load(c - s);
    d2 = w.d2[axis][1] * (a + b);
    d1 = w.d1[axis][1] * (a - b);
#pragma GCC unroll 16
    for (int k = 2; k <= H; ++k) {
      a = load(c + k * s);
      b = load(c - k * s);
      // (a - b as sum - 2b: GCC 12 spilled a to the stack when it fed both a + b and a - b)
      const vf sum = a + b;
      d1 += w.d1[axis][k] * (sum - (b + b));
      d2 += w.d2[axis][k] * sum;
    }
  };
  long i = 0;
#if defined(__AVX2__)
  if constexpr (H == 4 && DIM == 3 && kW == 8)
    if (ah.coupled_hand_kernels) i = line_density_o8_avx2(u, up, cf, n0, s1, s2, wv);
#endif
  for (; i + kW <= n0; i += kW) {
    if (ah.dist && i % 16 == 0) {
      prefetch(u + i + ah.lead + ah.dist);
      prefetch(up + i + ah.dist);
      for (int a = 0; a <= DIM; ++a) prefetch(static_cast<const float*>(cf.ahead(i + ah.dist, a)));
    }
    // Axis by axis into two running sums (lap, grad), so few vectors are live at once.
    const VecWeights<H>& w = in_memory(wv);
    const float* c = u + i;
    vf centre, lap, grad;
    {
      const ZRow<H> row(c);
      centre = row.template at<0>();
      const vf a = row.template at<1>(), b = row.template at<-1>();
      vf gz = w.d1[0][1] * (a - b);
      lap = w.centre * centre + w.d2[0][1] * (a + b);
      add_z_pairs<H>(row, w, lap, gz);
      grad = cf.template get<vf>(i, 1) * gz;
    }
    vf d2, d1;
    strided(w, c, s1, 1, d2, d1);
    lap += d2;
    grad += cf.template get<vf>(i, 2) * d1;
    if constexpr (DIM == 3) {
      strided(w, c, s2, 2, d2, d1);
      lap += d2;
      grad += cf.template get<vf>(i, 3) * d1;
    }
    store(up + i, 2.f * centre - load(up + i) + (cf.template get<vf>(i, 0) * lap - grad));
  }
  for (; i < n0; ++i) {  // the ragged end, plainly
    const float* c = u + i;
    float lap = ws.centre * c[0], grad = 0.f;
    const long strides[3] = {1, s1, s2};
    for (int a = 0; a < DIM; ++a) {
      float d2 = 0.f, d1 = 0.f;
      for (int k = 1; k <= H; ++k) {
        d2 += ws.d2[a][k] * (c[k * strides[a]] + c[-k * strides[a]]);
        d1 += ws.d1[a][k] * (c[k * strides[a]] - c[-k * strides[a]]);
      }
      lap += d2;
      grad += cf.template get<float>(i, 1 + a) * d1;
    }
    up[i] = 2.f * c[0] - up[i] + (cf.template get<float>(i, 0) * lap - grad);
  }
}

// VTI: q's second derivative along z (register rotation), p's along x and y, per-axis
// weights from memory (VecWeights); the centre loads of p and q serve the time update.
template <int H, int K = 2>
inline void add_z_sums(const ZRow<H>& row, const VecWeights<H>& w, vf& acc) {
  if constexpr (K <= H) {
    acc += w.d2[0][K] * (row.template at<K>() + row.template at<-K>());
    add_z_sums<H, K + 1>(row, w, acc);
  }
}

template <int H, int DIM, class CS>
inline void line_vti(const float* __restrict p, float* __restrict pp, const float* __restrict q,
                     float* __restrict qp, CS cf, long n0, long s1, long s2, const Weights<H>& ws,
                     const VecWeights<H>& wv, Ahead ah) {
  long i = 0;
#if defined(__AVX2__)
  if constexpr (H == 4 && DIM == 3 && kW == 8)
    if (ah.coupled_hand_kernels) i = line_vti_o8_avx2(p, pp, q, qp, cf, n0, s1, s2, wv);
#endif
  for (; i + kW <= n0; i += kW) {
    if (ah.dist && i % 16 == 0) {
      prefetch(p + i + ah.lead + ah.dist);
      for (const float* f : {static_cast<const float*>(pp), q, static_cast<const float*>(qp)}) prefetch(f + i + ah.dist);
      for (int k = 0; k < 3; ++k) prefetch(static_cast<const float*>(cf.ahead(i + ah.dist, k)));
    }
    const VecWeights<H>& w = wv;
    const float* cp = p + i;
    const ZRow<H> row(q + i);
    const vf q0 = row.template at<0>(), p0 = load(cp);
    vf vz = w.d2[0][0] * q0 + w.d2[0][1] * (row.template at<1>() + row.template at<-1>());
    add_z_sums<H>(row, w, vz);
    vf hx = w.centre_h * p0 + w.d2[1][1] * (load(cp + s1) + load(cp - s1)), hy{};
    if constexpr (DIM == 3) hy = w.d2[2][1] * (load(cp + s2) + load(cp - s2));
#pragma GCC unroll 16
    for (int k = 2; k <= H; ++k) {
      hx += w.d2[1][k] * (load(cp + k * s1) + load(cp - k * s1));
      if constexpr (DIM == 3) hy += w.d2[2][k] * (load(cp + k * s2) + load(cp - k * s2));
    }
    const vf h2 = hx + hy;
    const vf cz = cf.template get<vf>(i, 2) * vz;
    store(pp + i, 2.f * p0 - load(pp + i) + cf.template get<vf>(i, 0) * h2 + cz);
    store(qp + i, 2.f * q0 - load(qp + i) + cf.template get<vf>(i, 1) * h2 + cz);
  }
  for (; i < n0; ++i) {  // the ragged end, plainly
    const float* cp = p + i;
    const float* cq = q + i;
    float vz = ws.d2[0][0] * cq[0], h2 = ws.centre_h * cp[0];
    for (int k = 1; k <= H; ++k) {
      vz += ws.d2[0][k] * (cq[k] + cq[-k]);
      h2 += ws.d2[1][k] * (cp[k * s1] + cp[-k * s1]);
      if constexpr (DIM == 3) h2 += ws.d2[2][k] * (cp[k * s2] + cp[-k * s2]);
    }
    const float cz = cf.template get<float>(i, 2) * vz;
    pp[i] = 2.f * cp[0] - pp[i] + cf.template get<float>(i, 0) * h2 + cz;
    qp[i] = 2.f * cq[0] - qp[i] + cf.template get<float>(i, 1) * h2 + cz;
  }
}

// Derivatives of one field at c (T = vf or float, the same terms in the same order):
// along z by register rotation (vectors) or plain loads (scalars), along a strided axis
// with the axis' own weights (wk = Weights::d1[a] or d2[a]).
template <int H, class T>
inline T d1z(const float* c, const Weights<H>& w) {
  if constexpr (std::is_same_v<T, vf>) {
    const ZRow<H> row(c);
    T g = w.d1[0][1] * (row.template at<1>() - row.template at<-1>());
    add_dz_terms<H>(row, w, g);
    return g;
  } else {
    T g = w.d1[0][1] * (c[1] - c[-1]);
    for (int k = 2; k <= H; ++k) g += w.d1[0][k] * (c[k] - c[-k]);
    return g;
  }
}
template <int H, class T>
inline T d2z(const float* c, const Weights<H>& w) {
  if constexpr (std::is_same_v<T, vf>) {
    const ZRow<H> row(c);
    T g = w.d2[0][0] * row.template at<0>() + w.d2[0][1] * (row.template at<1>() + row.template at<-1>());
    add_z_terms<H>(row, w, g);
    return g;
  } else {
    T g = w.d2[0][0] * c[0] + w.d2[0][1] * (c[1] + c[-1]);
    for (int k = 2; k <= H; ++k) g += w.d2[0][k] * (c[k] + c[-k]);
    return g;
  }
}
template <int H, class T>
inline T d1s(const float* c, long s, const float* wk) {
  T g = wk[1] * (ld<T>(c + s) - ld<T>(c - s));
#pragma GCC unroll 16
  for (int k = 2; k <= H; ++k) g += wk[k] * (ld<T>(c + k * s) - ld<T>(c - k * s));
  return g;
}
template <int H, class T>
inline T d2s(const float* c, long s, const float* wk) {
  T g = wk[0] * ld<T>(c) + wk[1] * (ld<T>(c + s) + ld<T>(c - s));
#pragma GCC unroll 16
  for (int k = 2; k <= H; ++k) g += wk[k] * (ld<T>(c + k * s) + ld<T>(c - k * s));
  return g;
}

// 2D TTI: the vti update with d2z -> H1 = R_zz d2z + R_xx d2x + R_zx d_z d_x and
// H2 -> lap - H1; the mixed term as nested first derivatives, sum_k wx[k] (D_z f(x + k) -
// D_z f(x - k)), D_z by register rotation on the 2H neighbour lines (3D: step_tti3d).
template <int H>
inline void line_tti2d(const float* __restrict p, float* __restrict pp, const float* __restrict q,
                       float* __restrict qp, const float* __restrict A, const float* __restrict B,
                       const float* __restrict C, const float* const* __restrict R, long n0, long s1,
                       const Weights<H>& w) {
  auto body = [&](auto tag, long i) {
    using T = decltype(tag);
    struct Parts {
      T lap, h1;
    };
    auto parts = [&](const float* c) {
      const T zz = d2z<H, T>(c, w), xx = d2s<H, T>(c, s1, w.d2[1]);
      T mzx = w.d1[1][1] * (d1z<H, T>(c + s1, w) - d1z<H, T>(c - s1, w));
#pragma GCC unroll 16
      for (int k = 2; k <= H; ++k) mzx += w.d1[1][k] * (d1z<H, T>(c + k * s1, w) - d1z<H, T>(c - k * s1, w));
      return Parts{zz + xx, ld<T>(R[0] + i) * zz + ld<T>(R[1] + i) * xx + ld<T>(R[3] + i) * mzx};
    };
    const Parts P = parts(p + i), Q = parts(q + i);
    const T h2 = P.lap - P.h1;
    const T cz = ld<T>(C + i) * Q.h1;
    st<T>(pp + i, 2.f * ld<T>(p + i) - ld<T>(pp + i) + ld<T>(A + i) * h2 + cz);
    st<T>(qp + i, 2.f * ld<T>(q + i) - ld<T>(qp + i) + ld<T>(B + i) * h2 + cz);
  };
  long i = 0;
  for (; i + kW <= n0; i += kW) body(vf{}, i);
  for (; i < n0; ++i) body(0.f, i);
}

// 3D TTI without the O(H^2) mixed sums: each thread streams its y slab, x tile by x tile
// (tti_tile_lines), and keeps, per field, the first derivatives D_z f (the tile's lines
// and H more on each side) and D_x f of the last 2H+1 planes in a ring of plane buffers
// sized to its share of the last-level cache; then
//   d_z d_x f = sum_k wx[k] (D_z f(x + k) - D_z f(x - k))   (same plane),
//   d_z d_y f, d_x d_y f = the same over the ring's planes y +- k,
// so every mixed term costs 2H loads, like a second derivative.
template <int H>
inline void tti_derivative_line(const float* __restrict c, float* __restrict dz, float* __restrict dx, long n0,
                                long s1, const Weights<H>& w) {
  long i = 0;
  for (; i + kW <= n0; i += kW) {
    st<vf>(dz + i, d1z<H, vf>(c + i, w));
    if (dx) st<vf>(dx + i, d1s<H, vf>(c + i, s1, w.d1[1]));
  }
  for (; i < n0; ++i) {
    dz[i] = d1z<H, float>(c + i, w);
    if (dx) dx[i] = d1s<H, float>(c + i, s1, w.d1[1]);
  }
}

// One x line of the 3D TTI update from the ring (dz[f][H + k], dx[f][H + k]: field f's
// derivative buffers of plane y + k at this line; ls: the buffers' line stride).
template <int H>
inline void line_tti3d(const float* __restrict p, float* __restrict pp, const float* __restrict q,
                       float* __restrict qp, const float* __restrict A, const float* __restrict B,
                       const float* __restrict C, const float* const* __restrict R, long n0, long s1, long s2,
                       const Weights<H>& w, const float* const (&dz)[2][2 * H + 1],
                       const float* const (&dx)[2][2 * H + 1], long ls) {
  auto body = [&](auto tag, long i) {
    using T = decltype(tag);
    struct Parts {
      T lap, h1;
    };
    auto parts = [&](const float* c, int f) {
      const T zz = d2z<H, T>(c, w), xx = d2s<H, T>(c, s1, w.d2[1]), yy = d2s<H, T>(c, s2, w.d2[2]);
      const float* z0 = dz[f][H] + i;
      T mzx = w.d1[1][1] * (ld<T>(z0 + ls) - ld<T>(z0 - ls));
      T mzy = w.d1[2][1] * (ld<T>(dz[f][H + 1] + i) - ld<T>(dz[f][H - 1] + i));
      T mxy = w.d1[2][1] * (ld<T>(dx[f][H + 1] + i) - ld<T>(dx[f][H - 1] + i));
#pragma GCC unroll 16
      for (int k = 2; k <= H; ++k) {
        mzx += w.d1[1][k] * (ld<T>(z0 + k * ls) - ld<T>(z0 - k * ls));
        mzy += w.d1[2][k] * (ld<T>(dz[f][H + k] + i) - ld<T>(dz[f][H - k] + i));
        mxy += w.d1[2][k] * (ld<T>(dx[f][H + k] + i) - ld<T>(dx[f][H - k] + i));
      }
      const T h1 = ld<T>(R[0] + i) * zz + ld<T>(R[1] + i) * xx + ld<T>(R[3] + i) * mzx + ld<T>(R[2] + i) * yy +
                   (ld<T>(R[4] + i) * mxy + ld<T>(R[5] + i) * mzy);
      return Parts{zz + xx + yy, h1};
    };
    const Parts P = parts(p + i, 0), Q = parts(q + i, 1);
    const T h2 = P.lap - P.h1;
    const T cz = ld<T>(C + i) * Q.h1;
    st<T>(pp + i, 2.f * ld<T>(p + i) - ld<T>(pp + i) + ld<T>(A + i) * h2 + cz);
    st<T>(qp + i, 2.f * ld<T>(q + i) - ld<T>(qp + i) + ld<T>(B + i) * h2 + cz);
  };
  long i = 0;
  for (; i + kW <= n0; i += kW) body(vf{}, i);  // (software prefetch of its 13 streams measured slower)
  for (; i < n0; ++i) body(0.f, i);
}

// A non-negative integer from the environment (read on every call: cheap next to a
// time step, and tests may change it), or `fallback` when unset.
inline long env_count(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0)
    throw Error(std::string("taihu: ") + name + " must be an integer >= 0, got '" + v + "'");
  return n;
}

// Prefetch distance: TAIHU_STENCIL_PREFETCH=bytes (0 = off), default 4 KiB.
inline long prefetch_floats() {
  return env_count("TAIHU_STENCIL_PREFETCH", 4096) / long(sizeof(float));
}

// Bytes of the last-level cache one of `threads` threads may fill with its sweep's
// window: half of its share, at most 4 MiB.
inline double window_budget(int threads) {
  static const double llc = [] {
    const auto& caches = arch::topology().caches;
    return caches.empty() ? 0.0 : double(caches.back().size_bytes);
  }();
  return std::min(4.0 * 1024 * 1024, llc > 0 ? llc / (2.0 * threads) : 4.0 * 1024 * 1024);
}

// x lines per tile of the 3D TTI sweep: TAIHU_STENCIL_TILE=n when set, else the widest
// equal tiles whose derivative ring (4 (2H+1) planes of (tile + 2H) lines) fits
// kTtiL2Share of the per-core L2 (and a thread's share of the last-level cache, at most
// 4 MiB), at least 2H lines. Each output line reads 4(2H+1) ring lines besides its own
// streams: from L2 they cost little. On the Xeon (2 MiB L2, 256^3, order 8, 2 threads)
// this gives 13 lines (0.7 MiB); tiles of 12-16 lines ran 0.18-0.19 GPts/s, 24 0.18,
// 32 0.145, 8 0.14 (the halo lines' derivatives: (tile + 2H) / tile as many D_z lines),
// and the former ring sized to the last-level cache (86 lines, 3.3 MiB) 0.065
// (bench/results/2026-11-28-xeon-stencil-vti-tti.md).
inline constexpr double kTtiL2Share = 0.375;
inline long tti_tile_lines(const Layout& L, int half, int threads) {
  const long requested = env_count("TAIHU_STENCIL_TILE", 0);
  if (requested > 0) return std::min(requested, L.n[1]);
  static const double l2 = [] {
    const arch::CacheLevel* c = arch::topology().cache(2);
    return c ? double(c->size_bytes) : 0.0;
  }();
  const double budget = l2 > 0 ? std::min(window_budget(threads), kTtiL2Share * l2) : window_budget(threads);
  const double line = double(L.n[0]) * sizeof(float) * 4 * (2 * half + 1);
  const long fit = std::max(static_cast<long>(budget / line) - 2 * half, 2L * half);
  const long tiles = (L.n[1] + fit - 1) / fit;
  return (L.n[1] + tiles - 1) / tiles;
}

template <int H>
void step_tti3d(const StepArgs& a, long j0, long j1) {
  const Weights<H> w = load_weights<H>(*a.fd, 3);
  const Layout& L = a.layout;
  const long n0 = L.n[0], n1 = L.n[1];
  constexpr long slots = 2 * H + 1;
  const int threads = threads_for_points(double(j1 - j0) * double(n0) * double(n1));
  const long tile = tti_tile_lines(L, H, threads);
  const long ls = (n0 + kW - 1) / kW * kW;  // buffer line stride
  const long plane = (tile + 2 * H) * ls;   // lines xa - H .. xa + tile + H - 1
  static bool logged = false;
  if (!logged) {
    logged = true;
    arch::log_verbose("stencil: tti radius %d, %d y slabs in tiles of %ld x lines, derivative ring %.1f MiB/thread", H,
                      threads, tile, 4.0 * slots * double(plane) * sizeof(float) / (1 << 20));
  }
#pragma omp parallel num_threads(threads)
  {
    FlushDenormals ftz;
    const long t = team_thread_index(), nt = team_thread_count();
    const long ny = j1 - j0, ya = j0 + ny * t / nt, yb = j0 + ny * (t + 1) / nt;
    // Per thread (OpenMP keeps its workers), reused from step to step.
    thread_local std::vector<float> ring;
    ring.resize(std::size_t(4 * slots * plane));
    // Ring slot of plane y (y >= j0 - H, so the offset keeps the operand positive).
    auto zbuf = [&](int f, long y) { return ring.data() + (f * slots + (y - j0 + H) % slots) * plane; };
    auto xbuf = [&](int f, long y) { return zbuf(f, y) + 2 * slots * plane; };
    const float* const field[2] = {a.u, a.q};
    for (long xa = 0; xa < n1 && ya < yb; xa += tile) {
      const long xb = std::min(n1, xa + tile);
      for (long y = ya - H; y < yb + H; ++y) {
        for (int f = 0; f < 2; ++f) {
          float* const zb = zbuf(f, y);
          float* const xbf = xbuf(f, y);
          for (long x = xa - H; x < xb + H; ++x) {
            const bool inner = x >= xa && x < xb;
            tti_derivative_line<H>(field[f] + L.index(0, x, y), zb + (x - xa + H) * ls,
                                   inner ? xbf + (x - xa + H) * ls : nullptr, n0, L.s1, w);
          }
        }
        const long yo = y - H;
        if (yo < ya) continue;
        const float* dz0[2][2 * H + 1];  // line xa - H of each plane in the window
        const float* dx0[2][2 * H + 1];
        for (int f = 0; f < 2; ++f)
          for (long k = -H; k <= H; ++k) {
            dz0[f][k + H] = zbuf(f, yo + k);
            dx0[f][k + H] = xbuf(f, yo + k);
          }
        for (long x = xa; x < xb; ++x) {
          const float* dz[2][2 * H + 1];
          const float* dx[2][2 * H + 1];
          for (int f = 0; f < 2; ++f)
            for (int k = 0; k <= 2 * H; ++k) {
              dz[f][k] = dz0[f][k] + (x - xa + H) * ls;
              dx[f][k] = dx0[f][k] + (x - xa + H) * ls;
            }
          const long off = L.index(0, x, yo);
          const float* R[6];
          for (int r = 0; r < 6; ++r) R[r] = a.R[r] + off;
          line_tti3d<H>(a.u + off, a.u_prev + off, a.q + off, a.q_prev + off, a.A + off, a.B + off, a.C + off, R,
                        n0, L.s1, L.s2, w, dz, dx, ls);
        }
      }
    }
  }
}

template <int H, int DIM>
inline void do_line(const StepArgs& a, const Weights<H>& w, const VecWeights<H>& vw, long off, Ahead ah) {
  const Layout& L = a.layout;
  switch (a.physics) {
    case Physics::acoustic:
      if (a.packed)
        line_acoustic<H, DIM>(a.u + off, a.u_prev + off, half_coefs<1>(a.packed, off), L.n[0], L.s1, L.s2, w, ah);
      else
        line_acoustic<H, DIM>(a.u + off, a.u_prev + off, FloatCoefs<1>{{a.A + off}}, L.n[0], L.s1, L.s2, w, ah);
      break;
    case Physics::acoustic_density:
      if (a.packed) {
        line_density<H, DIM>(a.u + off, a.u_prev + off, half_coefs<1 + DIM>(a.packed, off), L.n[0], L.s1, L.s2, w,
                             vw, ah);
      } else {
        FloatCoefs<1 + DIM> cf{{a.A + off, a.G[0] + off, a.G[1] + off}};
        if constexpr (DIM == 3) cf.a[3] = a.G[2] + off;
        line_density<H, DIM>(a.u + off, a.u_prev + off, cf, L.n[0], L.s1, L.s2, w, vw, ah);
      }
      break;
    case Physics::tti:
      if constexpr (DIM == 2) {  // 3D tti runs step_tti3d
        const float* R[6];
        for (int r = 0; r < 6; ++r) R[r] = a.R[r] ? a.R[r] + off : nullptr;
        line_tti2d<H>(a.u + off, a.u_prev + off, a.q + off, a.q_prev + off, a.A + off, a.B + off, a.C + off, R,
                      L.n[0], L.s1, w);
      }
      break;
    case Physics::vti:
      if (a.packed)
        line_vti<H, DIM>(a.u + off, a.u_prev + off, a.q + off, a.q_prev + off, half_coefs<3>(a.packed, off), L.n[0],
                         L.s1, L.s2, w, vw, ah);
      else
        line_vti<H, DIM>(a.u + off, a.u_prev + off, a.q + off, a.q_prev + off,
                         FloatCoefs<3>{{a.A + off, a.B + off, a.C + off}}, L.n[0], L.s1, L.s2, w, vw, ah);
      break;
  }
}


// x lines per tile of the 3D sweep: TAIHU_STENCIL_TILE=n (n lines, 0 = automatic).
// Automatic: whole planes while the 2H+1-plane y window of a thread fits its share of
// the last-level cache (at most 4 MiB), else the widest tile that does (a tile narrower
// than the plane re-reads 2H halo lines of u per tile).
inline long tile_lines(const Layout& L, int half, int threads) {
  const long requested = env_count("TAIHU_STENCIL_TILE", 0);
  if (requested > 0) return std::min(requested, L.n[1]);
  const double budget = window_budget(threads);
  const double line = double(L.s1) * sizeof(float) * (2 * half + 1);
  const long fit = static_cast<long>(budget / line) - 2 * half;
  if (fit >= L.n[1]) return L.n[1];
  const long tiles = (L.n[1] + std::max(fit, 2L * half) - 1) / std::max(fit, 2L * half);
  return (L.n[1] + tiles - 1) / tiles;  // equal tiles
}


// x lines per tile of the single-step 3D sweep (acoustic, density, VTI): tile_lines, and
// (unless TAIHU_STENCIL_TILE is set) no wider than the tile whose y window (2H+2 planes:
// a plane pair's) fits 3/8 of the per-core L2 (the rest for the DRAM streams and what
// the prefetchers bring), so each line of the field differentiated along x and y (u; p
// for VTI, whose q is differentiated along z only) comes from DRAM once and its 2H other
// uses hit L2 rather than the shared L3. On the AVX-512 Xeon (2 MiB L2, 256^2 planes of
// 1088 B lines: a 2.8 MiB window) this gives tiles of 64 lines, 1/8 more reads of that
// field for the halos (bench/results/2026-11-27-xeon-stencil.md: acoustic, 64 lines beat
// whole planes and 128 lines; 2026-11-28-xeon-stencil-vti-tti.md: VTI 78 -> 98% of the
// triad roofline).
inline long l2_tile_lines(const Layout& L, int half, int threads) {
  const long tile = tile_lines(L, half, threads);
  if (env_count("TAIHU_STENCIL_TILE", 0) > 0) return tile;
  static const double l2 = [] {
    const arch::CacheLevel* c = arch::topology().cache(2);
    return c ? double(c->size_bytes) : 0.0;
  }();
  if (l2 <= 0) return tile;
  const double line = double(L.s1) * sizeof(float) * (2 * half + 2);
  const long fit = std::max(2L * half, static_cast<long>(0.375 * l2 / line) - 2 * half);
  if (fit >= tile) return tile;
  const long tiles = (L.n[1] + fit - 1) / fit;
  return (L.n[1] + tiles - 1) / tiles;  // equal tiles
}

// x lines per tile of the temporally blocked pair (step_pair_acoustic3d): TAIHU_STENCIL_TILE
// or TAIHU_STENCIL_PAIR_TILE=n when set, else the widest equal tiles whose working set fits
// `kPairL2Share` of the per-core L2 (and tile_lines' last-level-cache share). A tile row
// keeps both steps' y windows in flight: u (t) planes y-H .. y+H+1 for step 1 and u_prev
// (t+1) planes y-2H .. y+1 for step 2 (4H+4 planes with plane pairs), plus A's planes y,
// y+1 and y-H, y-H+1, each over the tile and its 2H halo lines. With them in L2 each u
// line comes from DRAM once per two steps; on the Xeon (2 MiB L2, 256^2 planes of 1088 B
// lines, order 8) that gives 4 tiles of 64 lines, where tile_lines' 2 tiles of 128 spilled
// the windows to L3 and ran 0.74-0.86x two single steps.
inline constexpr double kPairL2Share = 0.75;
inline long pair_tile_lines(const Layout& L, int half, int threads) {
  long requested = env_count("TAIHU_STENCIL_PAIR_TILE", 0);
  if (requested <= 0) requested = env_count("TAIHU_STENCIL_TILE", 0);
  if (requested > 0) return std::min(requested, L.n[1]);
  const long tile = tile_lines(L, 2 * half, threads);
  static const double l2 = [] {
    const arch::CacheLevel* c = arch::topology().cache(2);
    return c ? double(c->size_bytes) : 0.0;
  }();
  if (l2 <= 0) return tile;
  const double line = double(L.s1) * sizeof(float) * (4 * half + 4 + 4);
  const long fit = std::max(2L * half, static_cast<long>(kPairL2Share * l2 / line) - 2 * half);
  if (fit >= tile) return tile;
  const long tiles = (L.n[1] + fit - 1) / fit;
  return (L.n[1] + tiles - 1) / tiles;  // equal tiles
}

// How step_pair_acoustic3d splits the grid over threads: y slabs (default, (a)) or x tiles
// pipelined along y (TAIHU_STENCIL_PAIR_SPLIT=x, (b)).
inline bool pair_split_x_tiles() {
  const char* v = std::getenv("TAIHU_STENCIL_PAIR_SPLIT");
  return v && v[0] == 'x';
}

// TAIHU_VERBOSE=1: how the temporal pair splits and tiles the grid (once per process).
inline void log_pair_tiling(const char* split, int threads, long tile) {
  static bool logged = false;
  if (logged) return;
  logged = true;
  arch::log_verbose("stencil: temporal pair, %d %s, tiles of %ld x lines (TAIHU_STENCIL_PAIR_TILE, "
                    "TAIHU_STENCIL_PAIR_SPLIT=y|x)", threads, split, tile);
}

// TAIHU_STENCIL_PAIR=0 turns the plane-pair order-8 acoustic kernel off (A/B): the sweep
// then runs one line at a time (read once per time step).
inline bool plane_pair_enabled() {
  const char* v = std::getenv("TAIHU_STENCIL_PAIR");
  return !(v && v[0] == '0');
}

// Whether sweep_planes takes the 3D order-8 constant-density acoustic update two planes at
// a time (line_pair_acoustic_o8_x86[_half]: y neighbours loaded once for both): AVX2 hand
// kernel, float or half coefficients; AVX-512 hand kernel, float coefficients.
template <int H>
inline bool use_plane_pairs(const StepArgs& a, Ahead ah) {
#if defined(__AVX2__)
  if constexpr (H == 4)
    return kO8PlanePairKernel && ah.hand_kernels && a.physics == Physics::acoustic && plane_pair_enabled() &&
           (a.packed == nullptr || kO8HalfHandKernel);  // (AVX-512 has no half line kernel: single lines)
#endif
  (void)a;
  (void)ah;
  return false;
}

// Line x of planes y and y + 1 (off = its index in plane y: up <- 2u - up + A lap u, A
// the float array or, when `packed` is set, its packed halves) by the plane-pair kernel;
// the ragged ends by line_acoustic, so every point gets the single-line arithmetic.
template <int H>
inline void pair_lines(const float* u, float* up, const float* A, const std::uint16_t* packed, const Layout& L,
                       const Weights<H>& w, long off, Ahead ah) {
  long done = 0;
#if defined(__AVX2__)
  if constexpr (H == 4) {
    const AcousticO8Weights wt{w.centre, {0.f, w.d2[0][1], w.d2[0][2], w.d2[0][3], w.d2[0][4]}, w.ratio[1],
                               w.ratio[2]};
    done = packed ? line_pair_acoustic_o8_x86_half(u + off, up + off, half_coefs<1>(packed, off).p, L.n[0], L.s1,
                                                   L.s2, wt)
                  : line_pair_acoustic_o8_x86(u + off, up + off, A + off, L.n[0], L.s1, L.s2, wt);
  }
#endif
  for (const long o : {off + done, off + L.s2 + done}) {
    if (packed)
      line_acoustic<H, 3>(u + o, up + o, half_coefs<1>(packed, o), L.n[0] - done, L.s1, L.s2, w, ah);
    else
      line_acoustic<H, 3>(u + o, up + o, FloatCoefs<1>{{A + o}}, L.n[0] - done, L.s1, L.s2, w, ah);
  }
}

// One thread's sweep over planes [ya, yb) of x lines [xa, xb) of a 3D grid (two planes at
// a time where use_plane_pairs says so).
template <int H>
inline void sweep_tile(const StepArgs& a, const Weights<H>& w, const VecWeights<H>& vw, long ya, long yb, long xa,
                       long xb, bool pairs, Ahead ah) {
  const Layout& L = a.layout;
  long y = ya;
  if (pairs)
    for (; y + 1 < yb; y += 2)
      for (long x = xa; x < xb; ++x) pair_lines<H>(a.u, a.u_prev, a.A, a.packed, L, w, L.index(0, x, y), ah);
  for (; y < yb; ++y)
    for (long x = xa; x < xb; ++x) do_line<H, 3>(a, w, vw, L.index(0, x, y), ah);
}

// One thread's sweep over planes [ya, yb) of a 3D grid, tile by tile of x lines.
template <int H>
inline void sweep_planes(const StepArgs& a, const Weights<H>& w, long ya, long yb, long tile, Ahead ah) {
  const VecWeights<H> vw(w);
  const bool pairs = use_plane_pairs<H>(a, ah);
  for (long xa = 0; xa < a.layout.n[1]; xa += tile)
    sweep_tile<H>(a, w, vw, ya, yb, xa, std::min(a.layout.n[1], xa + tile), pairs, ah);
}

// The 3D single step hands out (x tile, y chunk) blocks to whichever thread is free
// (default; TAIHU_STENCIL_SCHEDULE=static: one y slab per thread, for A/B): on a shared
// host a descheduled thread's slab sets the step time (about 15% of the kernel's samples
// were the end-of-step wait at load 14), at the cost of re-reading 2H planes of u per
// chunk; 1.17-1.41x the slabs in-process at 256^3, 2 threads
// (bench/results/2026-11-28-xeon-stencil-roofline.md). Read once per time step.
inline bool dynamic_schedule() {
  const char* v = std::getenv("TAIHU_STENCIL_SCHEDULE");
  return !(v && v[0] == 's');
}
// y planes per chunk of the dynamic schedule: four chunks per thread, at least 8H, even.
inline long dynamic_chunk_planes(long ny, int half, int threads) {
  const long chunk = std::max(8L * half, ny / (4L * threads));
  return (chunk + 1) / 2 * 2;
}

template <int H, int DIM>
void step_streamed(const StepArgs& a, long j0, long j1) {
  const Weights<H> w = load_weights<H>(*a.fd, a.dim);
  const Layout& L = a.layout;
  const int threads = threads_for_points(double(j1 - j0) * double(L.n[0]) * double(a.dim == 3 ? L.n[1] : 1));
  if constexpr (DIM == 2) {
    if (a.team) {  // inside the caller's region: the same lines, shared by its team
      const VecWeights<H> vw(w);
#pragma omp for schedule(static)
      for (long j = j0; j < j1; ++j) do_line<H, 2>(a, w, vw, L.index(0, j, 0), Ahead{});
      return;
    }
#pragma omp parallel num_threads(threads)
    {
      FlushDenormals ftz;
      const VecWeights<H> vw(w);
#pragma omp for schedule(static)
      for (long j = j0; j < j1; ++j) do_line<H, 2>(a, w, vw, L.index(0, j, 0), Ahead{});
    }
  } else {
    const long tile = l2_tile_lines(L, H, threads);
    const Ahead ah{H * L.s2, prefetch_floats(), hand_kernels_enabled(), coupled_hand_kernels_enabled()};
    static bool logged = false;
    if (!logged) {
      logged = true;
      arch::log_verbose(
          "stencil: cpu kernel radius %d, %ld-wide vectors, %d y slabs streamed in tiles of %ld x lines%s%s", H, kW,
          threads, tile, use_plane_pairs<H>(a, ah) ? ", two planes per pass (TAIHU_STENCIL_PAIR=0: one)" : "",
          a.physics == Physics::acoustic_density || a.physics == Physics::vti
              ? (ah.coupled_hand_kernels ? ", hand-written density/VTI line kernels" : ", template density/VTI line kernels")
              : "");
    }
    if (threads > 1 && dynamic_schedule()) {
      const long ny = j1 - j0, chunk = dynamic_chunk_planes(ny, H, threads);
      const long chunks = (ny + chunk - 1) / chunk, tiles = (L.n[1] + tile - 1) / tile;
      const bool pairs = use_plane_pairs<H>(a, ah);
#pragma omp parallel num_threads(threads)
      {
        FlushDenormals ftz;
        const VecWeights<H> vw(w);
#pragma omp for schedule(dynamic, 1)
        for (long b = 0; b < tiles * chunks; ++b) {
          const long xa = b / chunks * tile, ya = j0 + b % chunks * chunk;
          sweep_tile<H>(a, w, vw, ya, std::min(j1, ya + chunk), xa, std::min(L.n[1], xa + tile), pairs, ah);
        }
      }
      return;
    }
#pragma omp parallel num_threads(threads)
    {
      FlushDenormals ftz;
      const long t = team_thread_index(), nt = team_thread_count();
      const long ny = j1 - j0;
      sweep_planes<H>(a, w, j0 + ny * t / nt, j0 + ny * (t + 1) / nt, tile, ah);
    }
  }
}

template <int H>
void step_radius(const StepArgs& a, long j0, long j1) {
  if (a.dim == 3 && a.physics == Physics::tti) return step_tti3d<H>(a, j0, j1);
  if (a.dim == 3)
    step_streamed<H, 3>(a, j0, j1);
  else
    step_streamed<H, 2>(a, j0, j1);
}

inline void cpu_step(const StepArgs& a, long j0, long j1) {
  if (j1 <= j0) return;
  switch (a.fd->half) {
    case 1: return step_radius<1>(a, j0, j1);
    case 2: return step_radius<2>(a, j0, j1);
    case 3: return step_radius<3>(a, j0, j1);
    case 4: return step_radius<4>(a, j0, j1);
    case 5: return step_radius<5>(a, j0, j1);
    case 6: return step_radius<6>(a, j0, j1);
    case 7: return step_radius<7>(a, j0, j1);
    default: return step_radius<8>(a, j0, j1);
  }
}

// A flag one thread raises (a plane count, monotone) and a neighbour waits on.
struct alignas(64) Progress {
  std::atomic<long> value{-1};
  void publish(long v) { value.store(v, std::memory_order_release); }
  void wait_for(long v) const {
    for (int spin = 0; value.load(std::memory_order_acquire) < v; ++spin)
      if (spin > 64) std::this_thread::yield();  // the neighbour may be descheduled
  }
};

// Temporal blocking, two steps per sweep (3D constant-density acoustic), in place:
// step 1 takes plane y to t+1 (U0 <- 2 U1 - U0 + A lap U1) and step 2, H planes behind,
// plane y - H to t+2 (U1 <- 2 U0 - U1 + A lap U0), a tile row of step 1 then a tile row
// of step 2. Step 2 of plane y' reads t+1 planes up to y' + H (done) and overwrites U1
// plane y', which step 1 no longer needs.
// The ~4H planes in flight per thread (over one x tile) stay in L2, so each array crosses
// DRAM about once per two steps.
// Planes are swept in tiles of x lines whose windows of both steps fit the per-core L2
// (pair_tile_lines), step 2 skewed H lines behind step 1 so the update stays in place.
// Threads own contiguous y slabs [ya, yb) (at least 2H planes) and meet only at slab
// edges, through two flags per slab instead of barriers:
//  - `head` counts the tiles whose first H planes step 1 has done: the slab below may
//    then overwrite its last H planes of U1 (step 2) in that tile, which this slab's
//    step 1 read;
//  - `done` rises once step 1 has done every plane: the slab above then runs its
//    deferred step 2 of its first H planes, which needs these t+1 planes and whose U1
//    planes this slab's step 1 read.
template <int H>
void step_pair_acoustic3d(const StepArgs& a) {
  const Weights<H> w = load_weights<H>(*a.fd, 3);
  const Layout& L = a.layout;
  const long n0 = L.n[0], n1 = L.n[1], n2 = L.n[2];
  float* U0 = a.u_prev;
  float* U1 = const_cast<float*>(a.u);
  const long slabs_max = std::max(1L, n2 / (2 * H));
  const int threads = static_cast<int>(std::min<long>(threads_for_points(double(n0) * double(n1) * double(n2)), slabs_max));
  const std::unique_ptr<Progress[]> head(new Progress[threads]), done(new Progress[threads]);
  const Ahead ah{H * L.s2, prefetch_floats(), hand_kernels_enabled(), coupled_hand_kernels_enabled()};
  const Ahead none{0, 0, ah.hand_kernels, ah.coupled_hand_kernels};
  auto line = [&](const float* u, float* up, long x, long y, Ahead pf) {
    const long off = L.index(0, x, y);
    if (a.packed)
      line_acoustic<H, 3>(u + off, up + off, half_coefs<1>(a.packed, off), n0, L.s1, L.s2, w, pf);
    else
      line_acoustic<H, 3>(u + off, up + off, FloatCoefs<1>{{a.A + off}}, n0, L.s1, L.s2, w, pf);
  };
  auto plane = [&](const float* u, float* up, long y) {
    for (long x = 0; x < n1; ++x) line(u, up, x, y, none);
  };
  const bool pairs = use_plane_pairs<H>(a, ah);
  if (pair_split_x_tiles()) {
    // (b) Threads own x tiles (round robin, a multiple of the thread count) and each tile
    // sweeps every plane; tile j runs a row once tile j - 1's step 1 is done through the
    // row's last plane, because its step 2 reads tile j - 1's t+1 halo lines
    // [xa - 2H, xa) and overwrites u lines from xa - H on, which tile j - 1's step 1 reads
    // (up to xa + H) H planes ahead. No deferred planes, no slab halos; the ordering is
    // transitive, so tiles narrower than 2H are safe too.
    const long fit = pair_tile_lines(L, H, threads), tiles0 = (n1 + fit - 1) / fit;
    const int workers = static_cast<int>(std::min<long>(threads_for_points(double(n0) * double(n1) * double(n2)), tiles0));
    const long tiles = (tiles0 + workers - 1) / workers * workers;
    const long tile = (n1 + tiles - 1) / tiles;
    const std::unique_ptr<Progress[]> step1_through(new Progress[tiles]);
    const long per = pairs ? 2 : 1;
    log_pair_tiling("threads on x tiles pipelined along y", workers, tile);
#pragma omp parallel num_threads(workers)
    {
      FlushDenormals ftz;
      const long t = team_thread_index(), nt = team_thread_count();
      for (long j = t; j < tiles; j += nt) {
        const long xa = std::min(n1, j * tile), xb = std::min(n1, xa + tile);
        const long x2a = std::max(0L, xa - H), x2b = j + 1 == tiles ? n1 : std::max(x2a, xb - H);
        for (long y = 0; y < n2 + H; y += per) {
          const long ylast = std::min(y + per, n2 + H) - 1, y2 = y - H, y2last = ylast - H;
          if (j > 0) step1_through[j - 1].wait_for(std::min(ylast, n2 - 1));
          auto inside = [&](long p) { return p >= 0 && p < n2; };
          if (per == 2 && inside(y) && inside(y + 1)) {
            for (long x = xa; x < xb; ++x) pair_lines<H>(U1, U0, a.A, a.packed, L, w, L.index(0, x, y), ah);
          } else {
            for (long p = y; p <= ylast; ++p)
              if (inside(p))
                for (long x = xa; x < xb; ++x) line(U1, U0, x, p, ah);
          }
          if (per == 2 && inside(y2) && inside(y2 + 1)) {
            for (long x = x2a; x < x2b; ++x) pair_lines<H>(U0, U1, a.A, a.packed, L, w, L.index(0, x, y2), none);
          } else {
            for (long p = y2; p <= y2last; ++p)
              if (inside(p))
                for (long x = x2a; x < x2b; ++x) line(U0, U1, x, p, none);
          }
          step1_through[j].publish(std::min(ylast, n2 - 1));
        }
      }
    }
    return;
  }
  const long tile = pair_tile_lines(L, H, threads), tiles = (n1 + tile - 1) / tile;
  log_pair_tiling("threads on y slabs", threads, tile);
#pragma omp parallel num_threads(threads)
  {
    FlushDenormals ftz;
    const long t = team_thread_index(), nt = team_thread_count();
    const long ya = n2 * t / nt, yb = n2 * (t + 1) / nt;
    const long deferred = t > 0 ? std::min(yb, ya + H) : ya;  // step 2 of [ya, deferred) runs last
    for (long j = 0; j < tiles; ++j) {
      // Tile j: step 1 on x lines [xa, xb), step 2 on [x2a, x2b), H lines to the left
      // (the last tile finishes the plane): step 2 never writes a U1 line that step 1 of
      // a later tile reads (those are >= xb - H), and reads only t+1 lines that this or an
      // earlier tile has done.
      const long xa = j * tile, xb = std::min(n1, xa + tile);
      const long x2a = std::max(0L, xa - H), x2b = j + 1 == tiles ? n1 : xb - H;
      // Two planes per round where the plane-pair kernel applies (each step's pair only
      // when both of its planes are in range, else plane by plane): step 2 of planes
      // y - H, y - H + 1 needs t+1 planes up to y + 1, done by step 1 just before.
      const long per = pairs ? 2 : 1;
      for (long y = ya; y < yb + H; y += per) {
        const long y2 = y - H, ylast = std::min(y + per, yb + H) - 1, y2last = ylast - H;
        auto first = [&](long p) { return p < yb; };
        auto second = [&](long p) { return p >= deferred && p < yb; };
        // Only once step 1 is over: the slab above has done tile j of its first H planes.
        if (t + 1 < nt && second(std::min(y2last, yb - 1)) && y2last + H >= yb) head[t + 1].wait_for(j + 1);
        // Step 1 on the tile's lines of plane y, then step 2 on plane y - H: its lines need
        // t+1 lines of planes <= y (done) and their U1 lines are no longer read by step 1
        // (which reads planes > y - H from here on, and U1 lines >= xb - H of plane y - H
        // in the next tile). A row per step, not alternating lines: the two steps' windows
        // (2 x (2H+1) lines, ~40 KiB at 256-point lines) thrash a 32 KiB L1 when alternated,
        // which measured 0.85-0.9x two single steps against 1.05-1.12x for whole rows.
        if (per == 2 && first(y) && first(y + 1)) {
          for (long x = xa; x < xb; ++x) pair_lines<H>(U1, U0, a.A, a.packed, L, w, L.index(0, x, y), ah);
        } else {
          for (long p = y; p <= ylast; ++p)
            if (first(p))
              for (long x = xa; x < xb; ++x) line(U1, U0, x, p, ah);
        }
        if (per == 2 && second(y2) && second(y2 + 1)) {
          for (long x = x2a; x < x2b; ++x) pair_lines<H>(U0, U1, a.A, a.packed, L, w, L.index(0, x, y2), none);
        } else {
          for (long p = y2; p <= y2last; ++p)
            if (second(p))
              for (long x = x2a; x < x2b; ++x) line(U0, U1, x, p, none);
        }
        const long head_plane = std::min(yb, ya + H) - 1;
        if (y <= head_plane && head_plane <= ylast) head[t].publish(j + 1);
        if (j + 1 == tiles && y <= yb - 1 && yb - 1 <= ylast) done[t].publish(1);
      }
    }
    if (t > 0) {
      done[t - 1].wait_for(1);
      for (long y2 = ya; y2 < deferred; ++y2) plane(U0, U1, y2);
    }
  }
}

inline void cpu_step_pair(const StepArgs& a) {
  switch (a.fd->half) {
    case 1: return step_pair_acoustic3d<1>(a);
    case 2: return step_pair_acoustic3d<2>(a);
    case 3: return step_pair_acoustic3d<3>(a);
    case 4: return step_pair_acoustic3d<4>(a);
    case 5: return step_pair_acoustic3d<5>(a);
    case 6: return step_pair_acoustic3d<6>(a);
    case 7: return step_pair_acoustic3d<7>(a);
    default: return step_pair_acoustic3d<8>(a);
  }
}

}  // namespace
}  // namespace taihu::stencil::kernels
