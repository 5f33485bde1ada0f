// Simulated traces against the analytic Green's functions, spatial convergence order,
// the CFL error, reciprocity and off-grid sources.
#include <gtest/gtest.h>

#include <cmath>

#include "analytic.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/propagator.hpp"
#include "taihu/stencil/wavelet.hpp"

using namespace taihu::stencil;
using namespace taihu::stencil::test;

namespace {

Grid grid2d(long n, double h) {
  Grid g;
  g.dim = 2;
  g.n = {n, n, 1};
  g.h = {h, h, 1};
  return g;
}

// Runs a 2D homogeneous shot and returns the relative L2 misfit against the analytic trace.
double misfit_2d(long n, double h, int order, double dt, const Position& src, const Position& rec,
                 double tmax, double f0, KernelKind kernel = KernelKind::optimized) {
  const double v = 2000;
  Model m = homogeneous_model(grid2d(n, h), float(v));
  Options o;
  o.space_order = order;
  o.dt = dt;
  o.nt = int(std::lround(tmax / dt));
  o.f0 = f0;
  o.kernel = kernel;
  o.boundary.kind = BoundaryKind::cpml;
  Shot shot{src, {rec}, ricker(f0, dt, o.nt)};
  const ShotRecord r = run_shot(m, shot, o);
  const double dist = std::hypot(src.z - rec.z, src.x - rec.x);
  std::vector<double> sim(o.nt), ref(o.nt);
  for (int it = 0; it < o.nt; ++it) {
    sim[it] = r.trace(0)[it];
    ref[it] = green2d_ricker(dist, it * dt, v, f0, 1.2 / f0);
  }
  return rel_l2(sim, ref);
}

}  // namespace

TEST(Analytic, Homogeneous2DMatchesGreensFunction) {
  // 15 Hz Ricker (energy up to ~40 Hz) at 5 m spacing: > 10 points per shortest wavelength.
  const double err = misfit_2d(161, 5.0, 8, 0.25e-3, {400, 400}, {400, 650}, 0.3, 15);
  EXPECT_LT(err, 0.01);
}

TEST(Analytic, OffGridSourceAndReceiverMatch2D) {
  const double err = misfit_2d(161, 5.0, 8, 0.25e-3, {401.7, 398.2}, {407.3, 641.9}, 0.3, 15);
  EXPECT_LT(err, 0.01);
}

// The 3D homogeneous shot's relative L2 misfit against the analytic trace.
static double misfit_3d(CoefficientPrecision coefficients) {
  const double v = 2000, f0 = 10, h = 10;
  Grid g;
  g.dim = 3;
  g.n = {51, 51, 51};
  g.h = {h, h, h};
  Model m = homogeneous_model(g, float(v));
  Options o;
  o.space_order = 8;
  o.dt = 1e-3;
  o.nt = 230;
  o.f0 = f0;
  o.boundary.width = 10;
  o.coefficients = coefficients;
  const Position src{250, 250, 250}, rec{250, 400, 250};
  Shot shot{src, {rec}, ricker(f0, o.dt, o.nt)};
  const ShotRecord r = run_shot(m, shot, o);
  std::vector<double> sim(o.nt), ref(o.nt);
  for (int it = 0; it < o.nt; ++it) {
    sim[it] = r.trace(0)[it];
    ref[it] = green3d_ricker(150.0, it * o.dt, v, f0, 1.2 / f0);
  }
  return rel_l2(sim, ref);
}

TEST(Analytic, Homogeneous3DMatchesGreensFunction) { EXPECT_LT(misfit_3d(CoefficientPrecision::float32), 0.01); }

// Coefficients compressed to halves (2 B per point) keep the misfit below 1%.
TEST(Analytic, Homogeneous3DWithHalfCoefficientsMatchesGreensFunction) {
  EXPECT_LT(misfit_3d(CoefficientPrecision::half), 0.01);
}

TEST(Analytic, SpatialConvergenceOrder) {
  // Coarse grids, tiny dt: the spatial error dominates; halving h must divide the
  // error by about 2^order.
  for (int order : {2, 4}) {
    const double f0 = 10, dt = 0.1e-3;
    const double e1 = misfit_2d(61, 20.0, order, dt, {600, 600}, {600, 840}, 0.3, f0);
    const double e2 = misfit_2d(121, 10.0, order, dt, {600, 600}, {600, 840}, 0.3, f0);
    const double measured = std::log2(e1 / e2);
    EXPECT_NEAR(measured, order, 0.6) << "order " << order << " errors " << e1 << " " << e2;
  }
}

TEST(Analytic, ReciprocityInHeterogeneousModel) {
  Grid g = grid2d(81, 10.0);
  Model m = layered_model(g);
  Options o;
  o.nt = 300;
  o.dt = 1e-3;
  o.boundary.kind = BoundaryKind::none;  // the discrete operator is then exactly symmetric
  o.coefficients = CoefficientPrecision::float32;  // v_a, v_b below are the model's, unrounded
  const Position a{120, 200}, b{530, 610};
  // u_tt = v^2 L u + s delta_a is (1/v^2) u_tt - L u = s delta_a / v_a^2 with a symmetric
  // operator, so trace(a -> b) v_a^2 = trace(b -> a) v_b^2.
  const double va = m.vp[(20 * 81) + 12], vb = m.vp[(61 * 81) + 53];
  const auto w = ricker(10, o.dt, o.nt);
  const ShotRecord ab = run_shot(m, Shot{a, {b}, w}, o);
  const ShotRecord ba = run_shot(m, Shot{b, {a}, w}, o);
  double num = 0, den = 0;
  for (int it = 0; it < o.nt; ++it) {
    const double x = ab.trace(0)[it] * va * va, y = ba.trace(0)[it] * vb * vb;
    num += (x - y) * (x - y);
    den += x * x;
  }
  EXPECT_GT(den, 0);
  EXPECT_LT(std::sqrt(num / den), 1e-4);
}

TEST(Analytic, CflViolationNamesTheStableDt) {
  Model m = homogeneous_model(grid2d(21, 10.0), 3000.f);
  const double limit = stable_dt(m, 8);
  EXPECT_NO_THROW(check_cfl(m, 8, limit * 0.99));
  try {
    check_cfl(m, 8, limit * 1.5);
    FAIL() << "no error";
  } catch (const taihu::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("use dt <="), std::string::npos) << msg;
  }
  // The bound is sharp: just above it the scheme blows up.
  Options o;
  o.nt = 400;
  o.boundary.kind = BoundaryKind::none;
  Propagator ok(m, [&] { Options x = o; x.dt = limit * 0.999; return x; }());
  ok.current().at(10, 10) = 1.f;
  for (int i = 0; i < o.nt; ++i) ok.step(nullptr, 0.f);
  EXPECT_LT(std::abs(ok.current().at(10, 10)), 10.f);
}

namespace {
Model anisotropic(Physics physics, long nz, long nx) {
  Model m = homogeneous_model(grid2d(nz, 10.0), 2000.f);
  m.grid.n = {nz, nx, 1};
  m.vp.assign(static_cast<std::size_t>(nz * nx), 2000.f);
  m.physics = physics;
  m.epsilon.assign(m.vp.size(), 0.25f);
  m.delta.assign(m.vp.size(), 0.1f);
  if (physics == Physics::tti) m.theta.assign(m.vp.size(), 0.f);
  return m;
}
}  // namespace

TEST(Anisotropy, TtiWithZeroTiltEqualsVti) {
  Model vti = anisotropic(Physics::vti, 61, 71), tti = anisotropic(Physics::tti, 61, 71);
  Options o;
  o.nt = 150;
  o.dt = 1e-3;
  o.boundary.kind = BoundaryKind::sponge;
  // Halves for both (auto would pick them for vti only): tti rounds its float arrays to
  // the same values vti packs.
  o.coefficients = CoefficientPrecision::half;
  const Shot shot{{300, 350}, {{200, 500}, {450, 150}}, ricker(15, o.dt, o.nt)};
  const ShotRecord a = run_shot(vti, shot, o), b = run_shot(tti, shot, o);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    num += std::pow(double(a.data[i]) - b.data[i], 2);
    den += std::pow(double(a.data[i]), 2);
  }
  ASSERT_GT(den, 0);
  EXPECT_LT(std::sqrt(num / den), 1e-5);
}

TEST(Anisotropy, TtiTiltedNinetyDegreesEqualsTransposedVti) {
  // Symmetry axis along x: the field equals VTI on the grid with x and z swapped.
  Model tti = anisotropic(Physics::tti, 61, 71);
  tti.theta.assign(tti.vp.size(), float(M_PI / 2));
  Model vti = anisotropic(Physics::vti, 71, 61);
  Options o;
  o.nt = 150;
  o.dt = 1e-3;
  o.boundary.kind = BoundaryKind::none;
  const auto w = ricker(15, o.dt, o.nt);
  const ShotRecord a = run_shot(tti, Shot{{300, 350}, {{200, 500}}, w}, o);
  const ShotRecord b = run_shot(vti, Shot{{350, 300}, {{500, 200}}, w}, o);
  double num = 0, den = 0;
  for (int it = 0; it < o.nt; ++it) {
    num += std::pow(double(a.data[it]) - b.data[it], 2);
    den += std::pow(double(b.data[it]), 2);
  }
  ASSERT_GT(den, 0);
  EXPECT_LT(std::sqrt(num / den), 1e-4);
  // And the anisotropy is real: an isotropic run differs.
  Model iso = homogeneous_model(grid2d(61, 10.0), 2000.f);
  iso.grid.n = {61, 71, 1};
  iso.vp.assign(61 * 71, 2000.f);
  const ShotRecord c = run_shot(iso, Shot{{300, 350}, {{200, 500}}, w}, o);
  double diff = 0;
  for (int it = 0; it < o.nt; ++it) diff += std::pow(double(a.data[it]) - c.data[it], 2);
  EXPECT_GT(std::sqrt(diff / den), 0.1);
}
