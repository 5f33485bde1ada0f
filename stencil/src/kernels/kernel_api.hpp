// The contract every time-step kernel (reference, CPU per ISA, CUDA) implements.
//
// A kernel updates, for every interior point whose slow-axis index lies in [j0, j1),
//   acoustic: u_prev <- 2 u - u_prev + A * lap(u)
//   density:  u_prev <- 2 u - u_prev + A * (lap(u) - grad(B) . grad(u))   (B = ln rho)
//   vti:      p_prev <- 2 p - p_prev + A * H2(p) + C * d2z(q)
//             q_prev <- 2 q - q_prev + B * H2(p) + C * d2z(q)      (H2 = d2x + d2y)
//   tti:      the vti update with d2z -> H1 (second derivative along the tilted axis)
//             and H2 -> lap - H1 (reference and optimized CPU kernel; the CUDA kernel
//             does not cover it)
// in place (the previous level becomes the next one). Fields and coefficient arrays
// share one padded Layout; halo cells are read, never written. The per-point
// coefficients are merged so each point costs few bytes: A = v^2 dt^2 (acoustic,
// density), B = ln rho (density); A = vpx^2 dt^2, B = vpn^2 dt^2, C = vpz^2 dt^2 (vti).
// The optimized CPU density kernel reads G_a = A d_a(B) (make_density_terms, computed
// once per model) instead of differentiating B every step:
//   u_prev <- 2 u - u_prev + A lap(u) - sum_a G_a d_a(u).
// Compressed coefficients (Options::coefficients = half; optimized CPU kernel, acoustic,
// density and vti): StepArgs::packed holds the coefficients as IEEE halves, merged per
// block of 8 points (packed_index), scaled by a power of two that the propagator folds
// into StepArgs::fd's weights (so the kernels need no extra multiply).
#pragma once
#include <cstdint>

#include "taihu/stencil/grid.hpp"
#include "taihu/stencil/model.hpp"

namespace taihu::stencil::kernels {

inline constexpr int kMaxHalf = 8;

struct FdWeights {
  int half = 4;                  // space order / 2
  float d2[3][kMaxHalf + 1]{};   // second derivative / h_a^2: d2[a][0] centre, d2[a][k] for +-k
  float d1[3][kMaxHalf + 1]{};   // first derivative / h_a: d1[a][k] for +k (and -d1 for -k)
  float centre = 0;              // sum of d2[a][0] over the active axes
};

FdWeights make_weights(const Grid& grid, int space_order);

struct StepArgs {
  Physics physics = Physics::acoustic;
  int dim = 2;
  Layout layout;
  const FdWeights* fd = nullptr;
  const float* u = nullptr;  // p for vti
  float* u_prev = nullptr;
  const float* q = nullptr;  // vti only
  float* q_prev = nullptr;
  const float* A = nullptr;
  const float* B = nullptr;
  const float* C = nullptr;
  const float* G[3] = {nullptr, nullptr, nullptr};  // density, optimized CPU kernel: A d_a(ln rho)
  // tti: H1 = sum_ab R_ab d_a d_b with R = {zz, xx, yy, 2zx, 2xy, 2zy} of the symmetry
  // axis n; the vti equations hold with d2z -> H1 and H2 -> lap - H1.
  const float* R[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  // Compressed coefficients (nullptr: the float arrays above). K = packed_count(physics,
  // dim) per point: acoustic {A}; density {A, G_z, G_x(, G_y)}; vti {A, B, C}.
  const std::uint16_t* packed = nullptr;
  // Called by every thread of an enclosing OpenMP team (the propagator's one region per
  // 2D time step): the kernel shares the lines among that team (a work-shared loop that
  // ends in a barrier) instead of opening a region. Optimized CPU kernel, 2D only.
  bool team = false;
};

// Coefficients per point of the packed (half) form; 0 where it does not exist (tti).
constexpr int packed_count(Physics physics, int dim) {
  switch (physics) {
    case Physics::acoustic: return 1;
    case Physics::acoustic_density: return 1 + dim;
    case Physics::vti: return 3;
    case Physics::tti: return 0;
  }
  return 0;
}

// Where coefficient k of the point at layout index i lives in the packed array: blocks
// of 8 points, each holding its K coefficients as 8 consecutive halves apiece (64 bytes
// per block for density in 3D), so one stream feeds every coefficient and an 8-point
// vector of one coefficient is one 16-byte load (line starts are multiples of 8).
constexpr long packed_index(long i, int K, int k) { return (i >> 3) * 8 * K + k * 8 + (i & 7); }
// Halves in the packed array of a layout of `total` points.
constexpr long packed_size(long total, int K) { return (total + 7) / 8 * 8 * K; }

// G_a = A * d_a(B) at every interior point of `layout` (first-derivative weights of
// `fd`, B's halo holding edge values); G[a] for the grid's active axes, halos zero.
void make_density_terms(const Layout& layout, int dim, const FdWeights& fd, const float* A, const float* B,
                        float* const G[3]);

using StepFn = void (*)(const StepArgs& args, long j0, long j1);

// Portable, plainly written reference (OpenMP over the slow axis only).
void reference_step(const StepArgs& args, long j0, long j1);
// The optimized CPU kernel for the active ISA (TAIHU_ISA), chosen through arch/.
StepFn optimized_step();
const char* optimized_step_name();
// Per-ISA entry points (registry.cpp lists them).
void cpu_step_generic(const StepArgs& args, long j0, long j1);
void cpu_step_avx2(const StepArgs& args, long j0, long j1);
void cpu_step_avx512(const StepArgs& args, long j0, long j1);

// Two fused steps with temporal blocking over the whole grid, 3D constant-density
// acoustic only: afterwards u holds t+2 and u_prev t+1.
using PairFn = void (*)(const StepArgs& args);
PairFn optimized_step_pair();
void cpu_step_pair_generic(const StepArgs& args);
void cpu_step_pair_avx2(const StepArgs& args);
void cpu_step_pair_avx512(const StepArgs& args);

}  // namespace taihu::stencil::kernels
