// CPML, sponge and free surface (see absorbing.hpp).
#include "boundary/absorbing.hpp"

#include <algorithm>
#include <cmath>

#include "taihu/arch/error.hpp"

namespace taihu::stencil {

const char* boundary_name(BoundaryKind kind) {
  switch (kind) {
    case BoundaryKind::none: return "none";
    case BoundaryKind::sponge: return "sponge";
    case BoundaryKind::cpml: return "cpml";
  }
  return "?";
}

BoundaryKind parse_boundary(const std::string& text) {
  if (text == "none") return BoundaryKind::none;
  if (text == "sponge") return BoundaryKind::sponge;
  if (text == "cpml") return BoundaryKind::cpml;
  throw Error("taihu: unknown boundary '" + text + "' (use cpml, sponge or none)");
}

Absorber::Absorber(const LocalBox& box, const BoundaryOptions& opt, const kernels::FdWeights& fd,
                   double dt, double vmax, double f0)
    : box_(box), opt_(opt), fd_(fd) {
  if (opt.kind != BoundaryKind::none && opt.width < 1)
    throw Error("taihu: absorbing layer width must be >= 1 grid point");
  const Grid& g = box.global;
  for (int a = 0; a < 3; ++a) {
    const auto n = static_cast<std::size_t>(g.n[a]);
    a_[a].assign(n, 0.f);
    b_[a].assign(n, 1.f);
    sponge_[a].assign(n, 1.f);
    if (a >= g.dim || opt.kind == BoundaryKind::none) continue;
    const double L = opt.width * g.h[a];
    const double d0 = -3.0 * vmax * std::log(opt.reflection) / (2.0 * L);
    const double alpha_max = M_PI * f0;
    for (int side = 0; side < 2; ++side) {
      const auto r = side == 0 ? left_slab(a) : right_slab(a);
      for (long i = r[0]; i < r[1]; ++i) {
        const double dist = side == 0 ? double(r[1] - i) / opt.width : double(i - r[0] + 1) / opt.width;
        const double d = d0 * dist * dist, alpha = alpha_max * (1.0 - dist);
        const double b = std::exp(-(d + alpha) * dt);
        b_[a][i] = static_cast<float>(b);
        a_[a][i] = static_cast<float>(d > 0 ? d * (b - 1.0) / (d + alpha) : 0.0);
        // Cerjan et al. 1985: exp(-(0.015 (20 - i))^2) for 20 points, i.e. 0.3 at the edge.
        sponge_[a][i] = static_cast<float>(std::exp(-(0.3 * dist) * (0.3 * dist)));
      }
    }
    if (opt.kind == BoundaryKind::cpml) {
      psi_[a].assign(static_cast<std::size_t>(box.layout.total), 0.f);
      zeta_[a].assign(static_cast<std::size_t>(box.layout.total), 0.f);
    }
  }
}

std::array<long, 2> Absorber::left_slab(int a) const {
  if (a >= box_.global.dim || opt_.kind == BoundaryKind::none) return {0, 0};
  if (a == 0 && opt_.free_surface) return {0, 0};
  return {0, std::min<long>(opt_.width, box_.global.n[a])};
}

std::array<long, 2> Absorber::right_slab(int a) const {
  if (a >= box_.global.dim || opt_.kind == BoundaryKind::none) return {0, 0};
  const long n = box_.global.n[a];
  return {std::max(0L, n - opt_.width), n};
}

namespace {

// Calls body(index, global coordinate along `axis`) for the local points whose global
// coordinate along `axis` lies in [g0, g1).
template <class Body>
void for_slab(const LocalBox& box, int axis, long g0, long g1, Body&& body) {
  const Layout& L = box.layout;
  const int slow = box.global.slow_axis();
  long lo[3] = {0, 0, 0}, hi[3] = {L.n[0], L.n[1], L.n[2]};
  long shift = axis == slow ? box.slow_offset : 0;
  lo[axis] = std::max(lo[axis], g0 - shift);
  hi[axis] = std::min(hi[axis], g1 - shift);
  if (lo[axis] >= hi[axis]) return;
#pragma omp parallel for collapse(2) schedule(static)
  for (long i2 = lo[2]; i2 < hi[2]; ++i2)
    for (long i1 = lo[1]; i1 < hi[1]; ++i1)
      for (long i0 = lo[0]; i0 < hi[0]; ++i0) {
        const long local[3] = {i0, i1, i2};
        body(L.index(i0, i1, i2), local[axis] + shift);
      }
}

}  // namespace

void Absorber::apply_cpml(const std::array<const float*, 3>& src, const std::array<float*, 2>& targets,
                          const std::array<std::array<const float*, 3>, 2>& coef) {
  if (opt_.kind != BoundaryKind::cpml) return;
  const int half = fd_.half;
  const long strides[3] = {1, box_.layout.s1, box_.layout.s2};
  for (int a = 0; a < box_.global.dim; ++a) {
    const long st = strides[a];
    const float* f = src[a];
    float* psi = psi_[a].data();
    float* zeta = zeta_[a].data();
    const float* pa = a_[a].data();
    const float* pb = b_[a].data();
    const float* w1 = fd_.d1[a];
    const float* w2 = fd_.d2[a];
    const long n = box_.global.n[a];
    for (int side = 0; side < 2; ++side) {
      const auto r = side == 0 ? left_slab(a) : right_slab(a);
      if (r[0] >= r[1]) continue;
      for_slab(box_, a, r[0], r[1], [&](long i, long g) {
        float d1 = 0.f;
        for (int k = 1; k <= half; ++k) d1 += w1[k] * (f[i + k * st] - f[i - k * st]);
        psi[i] = pb[g] * psi[i] + pa[g] * d1;
      });
      const long c0 = side == 0 ? r[0] : std::max(0L, r[0] - half);
      const long c1 = side == 0 ? std::min(n, r[1] + half) : r[1];
      for_slab(box_, a, c0, c1, [&](long i, long g) {
        float dpsi = 0.f, d2 = w2[0] * f[i];
        for (int k = 1; k <= half; ++k) {
          dpsi += w1[k] * (psi[i + k * st] - psi[i - k * st]);
          d2 += w2[k] * (f[i + k * st] + f[i - k * st]);
        }
        zeta[i] = pb[g] * zeta[i] + pa[g] * (d2 + dpsi);
        const float corr = dpsi + zeta[i];
        for (int t = 0; t < 2; ++t)
          if (targets[t]) targets[t][i] += coef[t][a][i] * corr;
      });
    }
  }
}

void Absorber::apply_sponge(float* field) const {
  if (opt_.kind != BoundaryKind::sponge) return;
  const Layout& L = box_.layout;
  const int slow = box_.global.slow_axis();
  const float* g0 = sponge_[0].data();
  const float* g1 = sponge_[1].data();
  const float* g2 = sponge_[2].data();
  const long off1 = slow == 1 ? box_.slow_offset : 0, off2 = slow == 2 ? box_.slow_offset : 0;
#pragma omp parallel for collapse(2) schedule(static)
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1) {
      const float g12 = g1[i1 + off1] * g2[i2 + off2];
      float* line = field + L.index(0, i1, i2);
      for (long i0 = 0; i0 < L.n[0]; ++i0) line[i0] *= g12 * g0[i0];
    }
}

void Absorber::apply_free_surface(float* field) const {
  if (!opt_.free_surface) return;
  const Layout& L = box_.layout;
#pragma omp parallel for collapse(2) schedule(static)
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1) {
      float* line = field + L.index(0, i1, i2);
      line[0] = 0.f;
      for (long k = 1; k <= kPad && k < L.n[0]; ++k) line[-k] = -line[k];
    }
}

}  // namespace taihu::stencil
