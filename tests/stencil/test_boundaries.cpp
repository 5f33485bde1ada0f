// Absorbing boundaries: CPML reflection against a reflection-free reference run,
// CPML below sponge below none, energy decay without a source, free surface sign.
#include <gtest/gtest.h>

#include <cmath>

#include "taihu/stencil/propagator.hpp"
#include "taihu/stencil/wavelet.hpp"

using namespace taihu::stencil;

namespace {

Grid grid2d(long nz, long nx, double h) {
  Grid g;
  g.dim = 2;
  g.n = {nz, nx, 1};
  g.h = {h, h, 1};
  return g;
}

// Reflected energy (dB) seen by a receiver near the right edge of a small model,
// relative to the direct wave, using a model 3x wider as reflection-free reference.
double reflection_db(BoundaryKind kind) {
  const double h = 10, dt = 1e-3, f0 = 15;
  const int nt = 450;
  Options o;
  o.dt = dt;
  o.nt = nt;
  o.f0 = f0;
  o.boundary.kind = kind;
  o.boundary.width = 20;
  const Position src{400, 300}, rec{400, 600};
  const auto w = ricker(f0, dt, nt);
  Options big = o;
  big.boundary.kind = BoundaryKind::none;
  const ShotRecord small = run_shot(homogeneous_model(grid2d(81, 81, h), 2000.f), Shot{src, {rec}, w}, o);
  // Reference: the same points inside a large model whose edges are too far to reflect in time.
  const Position off{1000, 1000};
  const ShotRecord ref = run_shot(homogeneous_model(grid2d(281, 281, h), 2000.f),
                                  Shot{{src.z + off.z, src.x + off.x}, {{rec.z + off.z, rec.x + off.x}}, w}, big);
  double err = 0, direct = 0;
  for (int it = 0; it < nt; ++it) {
    err += std::pow(small.trace(0)[it] - ref.trace(0)[it], 2);
    direct += std::pow(ref.trace(0)[it], 2);
  }
  return 10 * std::log10(err / direct);
}

}  // namespace

TEST(Boundaries, CpmlReflectionBelowMinus40dB) {
  const double cpml = reflection_db(BoundaryKind::cpml);
  const double sponge = reflection_db(BoundaryKind::sponge);
  const double none = reflection_db(BoundaryKind::none);
  EXPECT_LT(cpml, -40.0) << "sponge " << sponge << " none " << none;
  EXPECT_LT(cpml, sponge);
  EXPECT_LT(sponge, none);
}

TEST(Boundaries, EnergyNonIncreasingWithoutSource) {
  for (BoundaryKind kind : {BoundaryKind::cpml, BoundaryKind::sponge}) {
    Model m = homogeneous_model(grid2d(101, 101, 10), 2000.f);
    Options o;
    o.dt = 1e-3;
    o.boundary.kind = kind;
    Propagator p(m, o);
    for (int pass = 0; pass < 2; ++pass)
      for (long i1 = 0; i1 < 101; ++i1)
        for (long i0 = 0; i0 < 101; ++i0) {
          const double dz = double(i0) - 50.0, dx = double(i1) - 45.0, r2 = dz * dz + dx * dx;
          (pass ? p.previous() : p.current()).at(i0, i1) = float(std::exp(-r2 / 18.0));
        }
    const double e0 = p.energy();
    double prev = e0;
    for (int it = 0; it < 600; ++it) {
      p.step(nullptr, 0.f);
      const double e = p.energy();
      ASSERT_LE(e, prev * (1 + 1e-3) + 1e-12 * e0) << boundary_name(kind) << " step " << it;
      prev = e;
    }
    EXPECT_LT(prev, 0.05 * e0) << boundary_name(kind);
  }
}

TEST(Boundaries, EnergyConservedWithoutAbsorption) {
  Model m = homogeneous_model(grid2d(61, 61, 10), 2000.f);
  Options o;
  o.dt = 1e-3;
  o.boundary.kind = BoundaryKind::none;
  Propagator p(m, o);
  p.current().at(30, 30) = 1.f;
  p.step(nullptr, 0.f);
  const double e0 = p.energy();
  for (int it = 0; it < 300; ++it) p.step(nullptr, 0.f);
  EXPECT_NEAR(p.energy(), e0, 1e-3 * e0);
}

TEST(Boundaries, FreeSurfaceEqualsNegativeImageSource) {
  // A free surface at z = 0 is the method of images: the same shot in a model mirrored
  // about z = 0, with an image source of opposite sign, and no free surface.
  Options o;
  o.dt = 1e-3;
  o.nt = 300;
  o.boundary.width = 15;
  const auto w = ricker(15, o.dt, o.nt);
  auto neg = w;
  for (auto& v : neg) v = -v;
  Options fs = o;
  fs.boundary.free_surface = true;
  const ShotRecord a = run_shot(homogeneous_model(grid2d(61, 81, 10), 2000.f),
                                Shot{{100, 400}, {{0, 500}, {50, 600}}, w}, fs);
  const Model mirrored = homogeneous_model(grid2d(121, 81, 10), 2000.f);
  const ShotRecord b1 = run_shot(mirrored, Shot{{700, 400}, {{650, 600}}, w}, o);
  const ShotRecord b2 = run_shot(mirrored, Shot{{500, 400}, {{650, 600}}, neg}, o);
  double surface = 0, diff = 0, norm = 0;
  for (int it = 0; it < o.nt; ++it) {
    surface = std::max(surface, double(std::abs(a.trace(0)[it])));
    const double image = double(b1.trace(0)[it]) + b2.trace(0)[it];
    diff = std::max(diff, std::abs(a.trace(1)[it] - image));
    norm = std::max(norm, std::abs(image));
  }
  EXPECT_EQ(surface, 0.0);
  ASSERT_GT(norm, 0.0);
  EXPECT_LT(diff, 1e-4 * norm);
}
