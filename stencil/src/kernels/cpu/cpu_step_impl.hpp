// The optimized CPU time step, written once and compiled once per ISA (cpu_step_generic.cpp
// with baseline flags, cpu_step_avx2.cpp with -mavx2 -mfma): everything here lives in an
// anonymous namespace so each ISA's instantiations stay in their own translation unit.
//
// How it is fast:
//  - the stencil radius and dimension are template parameters: the neighbour loop is
//    fully unrolled and the weights live in registers; the contiguous z loop is
//    vectorized (#pragma omp simd) to the ISA's width;
//  - coefficients are merged per point (kernel_api.hpp): 4 bytes (acoustic), 8 (density),
//    12 (vti), so the compulsory traffic is fields + those bytes;
//  - 3D cache blocking: threads split y into contiguous chunks; each walks x blocks of
//    `bx` lines and streams y inside a block, so the 2H+1 planes of a block stay in L2
//    and every u value comes from DRAM once;
//  - the update is in place (u_prev <- u_next): the line being written was just read,
//    so there is no write-allocate traffic and non-temporal stores would not help.
#pragma once
#include <algorithm>

#include "kernels/flush_denormals.hpp"
#include "kernels/kernel_api.hpp"
#include "kernels/parallel_size.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::stencil::kernels {
namespace {

template <int H>
struct Weights {
  float d2[3][H + 1];
  float d1[3][H + 1];
  float centre, centre_h;  // all axes; horizontal axes only (vti)
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
  return w;
}

template <int H, int DIM>
inline void line_acoustic(const float* __restrict u, float* __restrict up, const float* __restrict A,
                          long n0, long s1, long s2, const Weights<H>& w) {
#pragma omp simd
  for (long i = 0; i < n0; ++i) {
    float lap = w.centre * u[i];
#pragma GCC unroll 16
    for (int k = 1; k <= H; ++k) {
      lap += w.d2[0][k] * (u[i + k] + u[i - k]);
      lap += w.d2[1][k] * (u[i + k * s1] + u[i - k * s1]);
      if constexpr (DIM == 3) lap += w.d2[2][k] * (u[i + k * s2] + u[i - k * s2]);
    }
    up[i] = 2.f * u[i] - up[i] + A[i] * lap;
  }
}

template <int H, int DIM>
inline void line_density(const float* __restrict u, float* __restrict up, const float* __restrict A,
                         const float* __restrict B, long n0, long s1, long s2, const Weights<H>& w) {
#pragma omp simd
  for (long i = 0; i < n0; ++i) {
    float lap = w.centre * u[i];
    float gu0 = 0.f, gu1 = 0.f, gu2 = 0.f, gb0 = 0.f, gb1 = 0.f, gb2 = 0.f;
#pragma GCC unroll 16
    for (int k = 1; k <= H; ++k) {
      lap += w.d2[0][k] * (u[i + k] + u[i - k]);
      lap += w.d2[1][k] * (u[i + k * s1] + u[i - k * s1]);
      gu0 += w.d1[0][k] * (u[i + k] - u[i - k]);
      gu1 += w.d1[1][k] * (u[i + k * s1] - u[i - k * s1]);
      gb0 += w.d1[0][k] * (B[i + k] - B[i - k]);
      gb1 += w.d1[1][k] * (B[i + k * s1] - B[i - k * s1]);
      if constexpr (DIM == 3) {
        lap += w.d2[2][k] * (u[i + k * s2] + u[i - k * s2]);
        gu2 += w.d1[2][k] * (u[i + k * s2] - u[i - k * s2]);
        gb2 += w.d1[2][k] * (B[i + k * s2] - B[i - k * s2]);
      }
    }
    lap -= gb0 * gu0 + gb1 * gu1 + gb2 * gu2;
    up[i] = 2.f * u[i] - up[i] + A[i] * lap;
  }
}

template <int H, int DIM>
inline void line_vti(const float* __restrict p, float* __restrict pp, const float* __restrict q,
                     float* __restrict qp, const float* __restrict A, const float* __restrict B,
                     const float* __restrict C, long n0, long s1, long s2, const Weights<H>& w) {
#pragma omp simd
  for (long i = 0; i < n0; ++i) {
    float h2 = w.centre_h * p[i];
    float vz = w.d2[0][0] * q[i];
#pragma GCC unroll 16
    for (int k = 1; k <= H; ++k) {
      vz += w.d2[0][k] * (q[i + k] + q[i - k]);
      h2 += w.d2[1][k] * (p[i + k * s1] + p[i - k * s1]);
      if constexpr (DIM == 3) h2 += w.d2[2][k] * (p[i + k * s2] + p[i - k * s2]);
    }
    const float cz = C[i] * vz;
    pp[i] = 2.f * p[i] - pp[i] + A[i] * h2 + cz;
    qp[i] = 2.f * q[i] - qp[i] + B[i] * h2 + cz;
  }
}

template <int H, int DIM>
inline void do_line(const StepArgs& a, const Weights<H>& w, long off) {
  const Layout& L = a.layout;
  switch (a.physics) {
    case Physics::acoustic:
      line_acoustic<H, DIM>(a.u + off, a.u_prev + off, a.A + off, L.n[0], L.s1, L.s2, w);
      break;
    case Physics::acoustic_density:
      line_density<H, DIM>(a.u + off, a.u_prev + off, a.A + off, a.B + off, L.n[0], L.s1, L.s2, w);
      break;
    case Physics::tti:  // handled by cpu_step
    case Physics::vti:
      line_vti<H, DIM>(a.u + off, a.u_prev + off, a.q + off, a.q_prev + off, a.A + off, a.B + off,
                       a.C + off, L.n[0], L.s1, L.s2, w);
      break;
  }
}

// x-block width: the 2H+1 planes of bx + 2H lines (of every streamed array) fit in
// about 256 KiB of L2.
inline long block_lines(const Layout& L, int half, int arrays) {
  const double line_bytes = double(L.s1) * 4.0 * arrays;
  const long bx = static_cast<long>(256.0 * 1024.0 / ((2 * half + 1) * line_bytes)) - 2 * half;
  return std::clamp(bx, 4L, std::max(4L, L.n[1]));
}

template <int H, int DIM>
void step_blocked(const StepArgs& a, long j0, long j1) {
  const Weights<H> w = load_weights<H>(*a.fd, a.dim);
  const Layout& L = a.layout;
  const int threads = threads_for_points(double(j1 - j0) * double(L.n[0]) * double(a.dim == 3 ? L.n[1] : 1));
  if constexpr (DIM == 2) {
#pragma omp parallel num_threads(threads)
    {
      FlushDenormals ftz;
#pragma omp for schedule(static)
      for (long j = j0; j < j1; ++j) do_line<H, 2>(a, w, L.index(0, j, 0));
    }
  } else {
    const int arrays = a.physics == Physics::vti ? 2 : a.physics == Physics::acoustic_density ? 2 : 1;
    const long bx = block_lines(L, H, arrays);
    const long nbx = (L.n[1] + bx - 1) / bx;
    const long ny = j1 - j0;
    const long chunks = std::min<long>(threads, std::max(1L, ny));
    static bool logged = false;
    if (!logged) {
      logged = true;
      arch::log_verbose("stencil: cpu kernel radius %d, x block %ld lines, %ld y chunks", H, bx, chunks);
    }
#pragma omp parallel num_threads(threads)
    {
      FlushDenormals ftz;
#pragma omp for collapse(2) schedule(static)
      for (long c = 0; c < chunks; ++c)
        for (long b = 0; b < nbx; ++b) {
          const long ya = j0 + ny * c / chunks, yb = j0 + ny * (c + 1) / chunks;
          const long xa = b * bx, xb = std::min(L.n[1], xa + bx);
          for (long y = ya; y < yb; ++y)
            for (long x = xa; x < xb; ++x) do_line<H, 3>(a, w, L.index(0, x, y));
        }
    }
  }
}

template <int H>
void step_radius(const StepArgs& a, long j0, long j1) {
  if (a.dim == 3)
    step_blocked<H, 3>(a, j0, j1);
  else
    step_blocked<H, 2>(a, j0, j1);
}

inline void cpu_step(const StepArgs& a, long j0, long j1) {
  if (j1 <= j0) return;
  if (a.physics == Physics::tti) return reference_step(a, j0, j1);  // no specialised tti kernel yet
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

// Temporal blocking, two steps per sweep (3D constant-density acoustic): a wavefront
// along y updates plane y to t+1 (U0 <- 2 U1 - U0 + A lap U1) and, H planes behind it,
// plane y - H to t+2 (U1 <- 2 U0 - U1 + A lap U0). Both updates stay in place: step t+2
// of plane y' reads t+1 planes up to y' + H (done) and overwrites U1 plane y', which
// step t+1 no longer needs. The ~4H+2 planes in flight stay in the last-level cache, so
// each array crosses DRAM about once per two steps. Threads split each plane's x lines.
template <int H>
void step_pair_acoustic3d(const StepArgs& a) {
  const Weights<H> w = load_weights<H>(*a.fd, 3);
  const Layout& L = a.layout;
  const long n1 = L.n[1], n2 = L.n[2];
  float* U0 = a.u_prev;
  float* U1 = const_cast<float*>(a.u);
  const int threads = threads_for_points(double(L.n[0]) * double(n1) * double(n2));
#pragma omp parallel num_threads(threads)
  {
    FlushDenormals ftz;
    // K planes per phase: 2 barriers per K planes instead of per plane.
    constexpr long K = 4;
    for (long y = 0; y < n2 + H; y += K) {
      const long ya = y, yb = std::min(n2, y + K);
      if (ya < yb) {
#pragma omp for collapse(2) schedule(static)
        for (long yy = ya; yy < yb; ++yy)
          for (long x = 0; x < n1; ++x) {
            const long off = L.index(0, x, yy);
            line_acoustic<H, 3>(U1 + off, U0 + off, a.A + off, L.n[0], L.s1, L.s2, w);
          }
      }
      const long ba = std::max(0L, y - H), bb = std::min(n2, y - H + K);
      if (ba < bb) {
#pragma omp for collapse(2) schedule(static)
        for (long yy = ba; yy < bb; ++yy)
          for (long x = 0; x < n1; ++x) {
            const long off = L.index(0, x, yy);
            line_acoustic<H, 3>(U0 + off, U1 + off, a.A + off, L.n[0], L.s1, L.s2, w);
          }
      }
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
