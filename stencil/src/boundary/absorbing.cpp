// CPML, sponge and free surface (see absorbing.hpp).
#include "boundary/absorbing.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/flush_denormals.hpp"
#include "kernels/parallel_size.hpp"
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

namespace {
constexpr const char* kAxisName[3] = {"z", "x", "y"};
// Layers along axis a: 2, or 1 on z under a free surface, 0 without absorption.
int layers_on(const BoundaryOptions& o, int a) {
  if (o.kind == BoundaryKind::none) return 0;
  return a == 0 && o.free_surface ? 1 : 2;
}

// The local index box [lo, hi) of the points whose global coordinate along `axis` lies
// in [g0, g1); false if empty.
bool slab_box(const LocalBox& box, int axis, long g0, long g1, long (&lo)[3], long (&hi)[3]) {
  const Layout& L = box.layout;
  const long shift = axis == box.global.slow_axis() ? box.slow_offset : 0;
  for (int d = 0; d < 3; ++d) {
    lo[d] = 0;
    hi[d] = L.n[d];
  }
  lo[axis] = std::max(lo[axis], g0 - shift);
  hi[axis] = std::min(hi[axis], g1 - shift);
  return lo[axis] < hi[axis];
}

// Calls segment(index, length) for the contiguous z runs of those points, in order.
template <class Segment>
void for_slab_segments(const LocalBox& box, int axis, long g0, long g1, Segment&& segment) {
  long lo[3], hi[3];
  if (!slab_box(box, axis, g0, g1, lo, hi)) return;
  for (long i2 = lo[2]; i2 < hi[2]; ++i2)
    for (long i1 = lo[1]; i1 < hi[1]; ++i1) segment(box.layout.index(lo[0], i1, i2), hi[0] - lo[0]);
}

}  // namespace

std::string describe_layers(const Grid& grid, const BoundaryOptions& options) {
  std::string s = std::string(boundary_name(options.kind));
  if (options.kind == BoundaryKind::none) return s;
  s += ' ';
  s += std::to_string(options.width);
  s += options.free_surface ? " pts (free surface on top), interior" : " pts, interior";
  for (int a = 0; a < grid.dim; ++a) {
    s += a ? " x " : " ";
    s += std::to_string(grid.n[a] - long(layers_on(options, a)) * options.width);
  }
  return s + (grid.dim == 3 ? " (z,x,y)" : " (z,x)");
}

void check_boundary_fits(const Grid& grid, const BoundaryOptions& options) {
  if (options.kind == BoundaryKind::none) return;
  if (options.width < 1)
    throw Error("taihu: absorbing layer width must be >= 1 grid point, got " + std::to_string(options.width));
  for (int a = 0; a < grid.dim; ++a) {
    const int layers = layers_on(options, a);
    if (long(layers) * options.width <= grid.n[a]) continue;
    long fits = grid.n[a];
    for (int b = 0; b < grid.dim; ++b) fits = std::min(fits, grid.n[b] / layers_on(options, b));
    throw Error("taihu: the " + std::string(boundary_name(options.kind)) + " absorbing layers (width " +
                std::to_string(options.width) + " points) do not fit the grid " + grid.describe() + ": along " +
                kAxisName[a] + " (" + std::to_string(grid.n[a]) + " points) " +
                (layers == 2 ? "the two layers need " + std::to_string(2L * options.width) + " points and overlap"
                             : "the layer needs " + std::to_string(options.width) + " points") +
                "; use a width <= " + std::to_string(fits) + " (simulation.width, --width) or a larger grid");
  }
}

Absorber::Absorber(const LocalBox& box, const BoundaryOptions& opt, const kernels::FdWeights& fd,
                   double dt, double vmax, double f0)
    : box_(box), opt_(opt), fd_(fd) {
  check_boundary_fits(box.global, opt);
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
      std::size_t slab_points = 0;
      for (const auto& r : {left_slab(a), right_slab(a)})
        for_slab_segments(box_, a, r[0], r[1], [&](long, long len) { slab_points += std::size_t(len); });
      psi_slabs_[a].assign(slab_points, 0.f);
      zeta_slabs_[a].assign(slab_points, 0.f);
    }
  }
  // The z range where the sponge factor is exactly 1 (sponge_line skips it); empty
  // unless it is one contiguous run.
  const std::vector<float>& s0 = sponge_[0];
  const long n0 = long(s0.size());
  long lo = 0;
  while (lo < n0 && s0[std::size_t(lo)] != 1.f) ++lo;
  long hi = lo;
  while (hi < n0 && s0[std::size_t(hi)] == 1.f) ++hi;
  bool contiguous = true;
  for (long i = hi; i < n0; ++i) contiguous = contiguous && s0[std::size_t(i)] != 1.f;
  unit_z_ = contiguous ? std::array<long, 2>{lo, hi} : std::array<long, 2>{0, 0};
}

std::vector<std::vector<float>*> Absorber::state_arrays() {
  copy_slabs(true);
  state_exported_ = true;
  std::vector<std::vector<float>*> out;
  for (int a = 0; a < 3; ++a)
    for (auto* v : {&psi_slabs_[a], &zeta_slabs_[a]})
      if (!v->empty()) out.push_back(v);
  return out;
}

// psi and zeta stay zero outside their axis's slabs: psi is only written there, and
// zeta's update in the stencil radius around them has a = 0, b = 1 (zeta <- zeta).
void Absorber::copy_slabs(bool pack) {
  for (int a = 0; a < 3; ++a) {
    if (psi_slabs_[a].empty()) continue;
    std::size_t k = 0;
    for (const auto& r : {left_slab(a), right_slab(a)})
      for_slab_segments(box_, a, r[0], r[1], [&](long index, long len) {
        for (auto [full, slabs] : {std::pair{&psi_[a], &psi_slabs_[a]}, std::pair{&zeta_[a], &zeta_slabs_[a]}}) {
          float* f = full->data() + index;
          float* c = slabs->data() + k;
          if (pack)
            std::copy(f, f + len, c);
          else
            std::copy(c, c + len, f);
        }
        k += std::size_t(len);
      });
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

// Calls line(base, z0, z1, g) for every z line of the local points whose global
// coordinate along `axis` lies in [g0, g1): base is the index of (z = 0) on that line,
// [z0, z1) the z range to update, g the line's global coordinate along `axis` (axis 0:
// unused, the coordinate is z itself). Lines run in parallel.
// In a team (every thread of an enclosing region calls it alike), the lines are shared
// among that team without a barrier at the end: the caller places the barriers.
template <class Line>
void for_slab_lines(const LocalBox& box, int axis, long g0, long g1, bool team, Line&& line) {
  const Layout& L = box.layout;
  const long shift = axis == box.global.slow_axis() ? box.slow_offset : 0;
  long lo[3], hi[3];
  if (!slab_box(box, axis, g0, g1, lo, hi)) return;
  if (team) {
#pragma omp for collapse(2) schedule(static) nowait
    for (long i2 = lo[2]; i2 < hi[2]; ++i2)
      for (long i1 = lo[1]; i1 < hi[1]; ++i1) {
        const long g = axis == 1 ? i1 + shift : axis == 2 ? i2 + shift : 0;
        line(L.index(0, i1, i2), lo[0], hi[0], g);
      }
    return;
  }
  const double points = double(hi[0] - lo[0]) * double(hi[1] - lo[1]) * double(hi[2] - lo[2]);
#pragma omp parallel num_threads(threads_for_points(points))
  {
    FlushDenormals ftz;
#pragma omp for collapse(2) schedule(static)
    for (long i2 = lo[2]; i2 < hi[2]; ++i2)
      for (long i1 = lo[1]; i1 < hi[1]; ++i1) {
        const long g = axis == 1 ? i1 + shift : axis == 2 ? i2 + shift : 0;
        line(L.index(0, i1, i2), lo[0], hi[0], g);
      }
  }
}

}  // namespace

void Absorber::apply_cpml(const std::array<const float*, 3>& src, const std::array<float*, 2>& targets,
                          const std::array<std::array<const float*, 3>, 2>& coef, bool team) {
  if (opt_.kind != BoundaryKind::cpml) return;
  if (!team) unpack_loaded_state();  // a team's caller did it before its region
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
    const std::array<std::array<long, 2>, 2> slabs = {left_slab(a), right_slab(a)};
    // psi <- b psi + a d1(f), over both slabs (the constructor rejects overlapping ones).
    for (const auto& r : slabs) {
      if (r[0] >= r[1]) continue;
      for_slab_lines(box_, a, r[0], r[1], team, [&](long base, long z0, long z1, long g) {
        float d1[1024];
        for (long zc = z0; zc < z1; zc += 1024) {
          const long len = std::min(1024L, z1 - zc);
          const long i0 = base + zc;
          for (long j = 0; j < len; ++j) d1[j] = 0.f;
          for (int k = 1; k <= half; ++k) {
            const float w = w1[k];
            const float* fp = f + i0 + k * st;
            const float* fm = f + i0 - k * st;
#pragma omp simd
            for (long j = 0; j < len; ++j) d1[j] += w * (fp[j] - fm[j]);
          }
          float* ps = psi + i0;
          if (a == 0) {
            const float *bb = pb + zc, *aa = pa + zc;
#pragma omp simd
            for (long j = 0; j < len; ++j) ps[j] = bb[j] * ps[j] + aa[j] * d1[j];
          } else {
            const float bb = pb[g], aa = pa[g];
#pragma omp simd
            for (long j = 0; j < len; ++j) ps[j] = bb * ps[j] + aa * d1[j];
          }
        }
      });
    }
    // Every psi of this axis is updated before zeta reads it (a team's loops have no barrier).
    if (team) {
#pragma omp barrier
    }
    // zeta <- b zeta + a (d2(f) + d1(psi)); next += coef (d1(psi) + zeta), a stencil
    // radius wider than each slab (d1(psi) is non-zero there). Once every psi is
    // updated, and once per point: where the two widened ranges meet (an interior
    // narrower than 2 radii) they are merged. Done per side, the points they share
    // were advanced and corrected twice a step, which grows without bound
    // (60x30, width 15: 2e-7 to 2e4 in 1 s).
    std::array<std::array<long, 2>, 2> ranges{};
    int count = 0;
    for (const auto& r : slabs) {
      if (r[0] >= r[1]) continue;
      const long c0 = std::max(0L, r[0] - half), c1 = std::min(n, r[1] + half);
      if (count > 0 && c0 <= ranges[count - 1][1])
        ranges[count - 1][1] = std::max(ranges[count - 1][1], c1);
      else
        ranges[count++] = {c0, c1};
    }
    for (int m = 0; m < count; ++m) {
      const long c0 = ranges[m][0], c1 = ranges[m][1];
      for_slab_lines(box_, a, c0, c1, team, [&](long base, long z0, long z1, long g) {
        float dpsi[1024], d2[1024];
        for (long zc = z0; zc < z1; zc += 1024) {
          const long len = std::min(1024L, z1 - zc);
          const long i0 = base + zc;
          for (long j = 0; j < len; ++j) {
            dpsi[j] = 0.f;
            d2[j] = w2[0] * f[i0 + j];
          }
          for (int k = 1; k <= half; ++k) {
            const float wa = w1[k], wb = w2[k];
            const float *pp = psi + i0 + k * st, *pm = psi + i0 - k * st;
            const float *fp = f + i0 + k * st, *fm = f + i0 - k * st;
#pragma omp simd
            for (long j = 0; j < len; ++j) {
              dpsi[j] += wa * (pp[j] - pm[j]);
              d2[j] += wb * (fp[j] + fm[j]);
            }
          }
          float* zt = zeta + i0;
          if (a == 0) {
            const float *bb = pb + zc, *aa = pa + zc;
#pragma omp simd
            for (long j = 0; j < len; ++j) {
              zt[j] = bb[j] * zt[j] + aa[j] * (d2[j] + dpsi[j]);
              dpsi[j] += zt[j];  // now the correction
            }
          } else {
            const float bb = pb[g], aa = pa[g];
#pragma omp simd
            for (long j = 0; j < len; ++j) {
              zt[j] = bb * zt[j] + aa * (d2[j] + dpsi[j]);
              dpsi[j] += zt[j];
            }
          }
          for (int t = 0; t < 2; ++t) {
            if (!targets[t]) continue;
            float* out = targets[t] + i0;
            const float* cf = coef[t][a] + i0;
#pragma omp simd
            for (long j = 0; j < len; ++j) out[j] += cf[j] * dpsi[j];
          }
        }
      });
    }
    // The next axis corrects the same target points at the corners, after this one.
    if (team) {
#pragma omp barrier
    }
  }
}

void Absorber::unpack_loaded_state() {
  if (!state_exported_) return;  // a state may have been loaded into the slab arrays
  copy_slabs(false);
  state_exported_ = false;
}

void Absorber::apply_sponge(float* field) const {
  if (opt_.kind != BoundaryKind::sponge) return;
  const Layout& L = box_.layout;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_for_points(double(L.n[0] * L.n[1] * L.n[2])))
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1) sponge_line(field, i1, i2);
}

// Only the points whose factor differs from 1: multiplying by 1.0f changes no float, so
// skipping the interior keeps every result bit for bit and leaves ~(2 width / n) of the work.
void Absorber::sponge_line(float* field, long i1, long i2) const {
  if (opt_.kind != BoundaryKind::sponge) return;
  const Layout& L = box_.layout;
  const int slow = box_.global.slow_axis();
  const long off1 = slow == 1 ? box_.slow_offset : 0, off2 = slow == 2 ? box_.slow_offset : 0;
  const float* g0 = sponge_[0].data();
  const float g12 = sponge_[1][std::size_t(i1 + off1)] * sponge_[2][std::size_t(i2 + off2)];
  float* line = field + L.index(0, i1, i2);
  const long n0 = L.n[0];
  const long lo = g12 == 1.f ? std::min(unit_z_[0], n0) : n0;  // [lo, hi): g0 == 1 and g12 == 1
  const long hi = g12 == 1.f ? std::min(unit_z_[1], n0) : n0;
  for (long i0 = 0; i0 < lo; ++i0) line[i0] *= g12 * g0[i0];
  for (long i0 = std::max(lo, hi); i0 < n0; ++i0) line[i0] *= g12 * g0[i0];
}

void Absorber::apply_free_surface(float* field) const {
  if (!opt_.free_surface) return;
  const Layout& L = box_.layout;
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1) free_surface_line(field, i1, i2);
}

void Absorber::free_surface_line(float* field, long i1, long i2) const {
  if (!opt_.free_surface) return;
  const Layout& L = box_.layout;
  float* line = field + L.index(0, i1, i2);
  line[0] = 0.f;
  for (long k = 1; k <= kPad && k < L.n[0]; ++k) line[-k] = -line[k];
}

}  // namespace taihu::stencil
