// Reverse-time migration (issue 22): the adjoint propagation is the transpose of the
// forward map (dot-product test), checkpointing reproduces the stored source wavefield
// bit for bit, a too-small budget is refused, a flat reflector images at its depth and
// a point diffractor focuses at its position; the direct data sampled by the source
// wavefield pass (3 sweeps a step) gives the image of a separate direct run (4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/migration.hpp"
#include "taihu/stencil/wavelet.hpp"

namespace ts = taihu::stencil;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ts::Grid grid2d(long nz, long nx, double h) {
  ts::Grid g;
  g.dim = 2;
  g.n = {nz, nx, 1};
  g.h = {h, h, 1.0};
  return g;
}

ts::Options options(ts::BoundaryKind kind, int nt, double f0 = 15) {
  ts::Options o;
  o.space_order = 8;
  o.nt = nt;
  o.f0 = f0;
  o.boundary.kind = kind;
  o.boundary.width = 15;
  o.coefficients = ts::CoefficientPrecision::float32;
  o.boundary.design_speed = 3000;  // the same absorber in the true and the background model
  return o;
}

std::vector<ts::Position> receiver_line(double z, double x0, double x1, double dx) {
  std::vector<ts::Position> r;
  for (double x = x0; x <= x1 + 1e-9; x += dx) r.push_back({z, x, 0});
  return r;
}

// <F f, d> against <f, F^T d> for random f and d, F = run_shot's wavelet -> receivers.
double dot_test_mismatch(const ts::Model& m, ts::BoundaryKind kind) {
  const int nt = 300;
  ts::Options o = options(kind, nt);
  o = ts::resolved(m, o);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  ts::Shot shot;
  shot.source = {203.0, 317.0, 0};  // off the grid nodes: sinc stencils
  shot.receivers = receiver_line(97.0, 41.0, 560.0, 23.0);
  shot.wavelet.resize(nt);
  for (auto& v : shot.wavelet) v = normal(rng);
  std::vector<float> d(shot.receivers.size() * nt);
  for (auto& v : d) v = normal(rng);
  const ts::ShotRecord fwd = ts::run_shot(m, shot, o);
  const std::vector<double> adj = ts::adjoint_source_wavelet(m, shot.source, shot.receivers, d, o);
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < d.size(); ++i) lhs += double(fwd.data[i]) * d[i];
  for (int n = 0; n < nt; ++n) rhs += double(shot.wavelet[n]) * adj[n];
  EXPECT_NE(lhs, 0.0);
  const double mismatch = std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs));
  std::printf("dot-product test (%s): <F f, d> = %.9e, <f, F^T d> = %.9e, relative mismatch %.2e\n",
              ts::boundary_name(kind), lhs, rhs, mismatch);
  return mismatch;
}

ts::Model heterogeneous(const ts::Grid& g) {
  ts::Model m = ts::homogeneous_model(g, 2000.f);
  for (long x = 0; x < g.n[1]; ++x)
    for (long z = 0; z < g.n[0]; ++z) m.vp[x * g.n[0] + z] = float(1800 + 6 * z + 2 * x + (z > 40 ? 500 : 0));
  return m;
}

}  // namespace

// Float32 kernels, 300 steps: the rounding of both runs enters the two sides
// independently, about sqrt(steps) x 6e-8 relative per value, so 1e-5 leaves a margin
// while any wrong weight, scale or time shift gives O(1e-2) or worse (see WrongAdjointFails).
TEST(MigrationAdjoint, DotProductTestNoBoundary) {
  const ts::Model m = heterogeneous(grid2d(64, 72, 10.0));
  EXPECT_LT(dot_test_mismatch(m, ts::BoundaryKind::none), 1e-5);
}

TEST(MigrationAdjoint, DotProductTestSponge) {
  const ts::Model m = heterogeneous(grid2d(64, 72, 10.0));
  EXPECT_LT(dot_test_mismatch(m, ts::BoundaryKind::sponge), 1e-5);
}

// Variable density (rho from 1000 to 2600 kg/m^3 across the grid and a jump): the
// transpose adds A sum_a (D_a(g_a mu) + g_a D_a mu) to the kernel's step.
TEST(MigrationAdjoint, DotProductTestVariableDensity) {
  ts::Model m = heterogeneous(grid2d(64, 72, 10.0));
  m.physics = ts::Physics::acoustic_density;
  m.rho.resize(m.vp.size());
  for (long x = 0; x < 72; ++x)
    for (long z = 0; z < 64; ++z) m.rho[x * 64 + z] = float(1000 + 15 * z + 5 * x + (z > 30 ? 400 : 0));
  EXPECT_LT(dot_test_mismatch(m, ts::BoundaryKind::none), 1e-5);
  EXPECT_LT(dot_test_mismatch(m, ts::BoundaryKind::sponge), 1e-5);
}

// The test can fail: shifting the adjoint by one step (a classic off-by-one) is caught.
TEST(MigrationAdjoint, WrongAdjointFails) {
  const ts::Model m = heterogeneous(grid2d(64, 72, 10.0));
  const int nt = 300;
  ts::Options o = ts::resolved(m, options(ts::BoundaryKind::none, nt));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  ts::Shot shot{{203.0, 317.0, 0}, receiver_line(97.0, 41.0, 560.0, 23.0), std::vector<float>(nt)};
  for (auto& v : shot.wavelet) v = normal(rng);
  std::vector<float> d(shot.receivers.size() * nt);
  for (auto& v : d) v = normal(rng);
  const ts::ShotRecord fwd = ts::run_shot(m, shot, o);
  const std::vector<double> adj = ts::adjoint_source_wavelet(m, shot.source, shot.receivers, d, o);
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < d.size(); ++i) lhs += double(fwd.data[i]) * d[i];
  for (int n = 0; n + 1 < nt; ++n) rhs += double(shot.wavelet[n]) * adj[n + 1];
  EXPECT_GT(std::abs(lhs - rhs) / std::abs(lhs), 1e-3);
}

TEST(MigrationCheckpoints, PlanFitsBudgetAndRefusesTooSmall) {
  const double snap = 1e6, state = 2.5e6;
  const ts::CheckpointPlan all = ts::plan_checkpoints(1000, snap, state, kInf);
  EXPECT_TRUE(all.store_all);
  EXPECT_DOUBLE_EQ(all.recompute_factor(), 1.0);
  const ts::CheckpointPlan p = ts::plan_checkpoints(1000, snap, state, 200e6);
  EXPECT_FALSE(p.store_all);
  EXPECT_LE(p.memory_bytes, 200e6);
  EXPECT_GT(p.recompute_factor(), 1.0);
  EXPECT_LT(p.recompute_factor(), 2.0);
  // Below the single level's least memory (about 2 sqrt(nt snap state) = 100 MB here):
  // binomial checkpointing with as many slots as fit beside one snapshot.
  const ts::CheckpointPlan b = ts::plan_checkpoints(1000, snap, state, 50e6);
  EXPECT_TRUE(b.binomial);
  EXPECT_EQ(b.checkpoints, 19);  // (50 - 1) / 2.5
  EXPECT_LE(b.memory_bytes, 50e6);
  EXPECT_EQ(b.forward_steps, ts::revolve_forward_steps(1000, 19));
  EXPECT_NE(b.describe().find("binomial"), std::string::npos) << b.describe();
  // The least any plan needs: one checkpoint + one snapshot (3.5 MB).
  EXPECT_EQ(ts::plan_checkpoints(1000, snap, state, 3.5e6).checkpoints, 1);
  try {
    ts::plan_checkpoints(1000, snap, state, 3.4e6);
    FAIL() << "a 3.4 MB budget was accepted";
  } catch (const taihu::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("too small"), std::string::npos) << m;
    EXPECT_NE(m.find("one checkpoint (2.38 MiB)"), std::string::npos) << m;
    EXPECT_NE(m.find("one snapshot (0.95 MiB)"), std::string::npos) << m;
  }
}

// Griewank's closed form against the recursion it solves, t(l, s) = min over m of
// m + t(l - m, s - 1) + t(m, s), t(1, s) = 0, t(l, 1) = l (l - 1) / 2, by dynamic programming.
TEST(MigrationCheckpoints, RevolveStepsMatchRecursion) {
  constexpr int L = 80, S = 7;
  std::vector<std::vector<long>> t(S + 1, std::vector<long>(L + 1, 0));
  for (int s = 1; s <= S; ++s)
    for (int l = 2; l <= L; ++l) {
      if (s == 1) {
        t[s][l] = long(l) * (l - 1) / 2;
        continue;
      }
      long best = std::numeric_limits<long>::max();
      for (int m = 1; m < l; ++m) best = std::min(best, m + t[s - 1][l - m] + t[s][m]);
      t[s][l] = best;
    }
  for (int s = 1; s <= S; ++s)
    for (int l = 1; l <= L; ++l) ASSERT_EQ(ts::revolve_forward_steps(l, s), t[s][l]) << "l " << l << ", s " << s;
  for (int s = 2; s <= S; ++s)
    for (int l = 2; l <= L; ++l) {
      const long m = ts::revolve_split(l, s);
      EXPECT_EQ(m + t[s - 1][l - m] + t[s][m], t[s][l]) << "l " << l << ", s " << s;
    }
}

// A checkpoint is both time levels and the CPML fields on their slabs only.
TEST(MigrationCheckpoints, CheckpointHoldsCpmlSlabsOnly) {
  const ts::Grid g = grid2d(60, 70, 10.0);
  const ts::Model m = heterogeneous(g);
  const ts::Options o = ts::resolved(m, options(ts::BoundaryKind::cpml, 10));
  ts::Propagator prop(m, o);
  const long w = o.boundary.width;
  const long slabs = 2 * w * g.n[1] + 2 * w * g.n[0];  // z slabs over every x line, x slabs over every z
  EXPECT_EQ(long(prop.state_floats()), 2 * long(prop.current().layout().total) + 2 * slabs);  // psi and zeta
}

ts::ShotRecord reflections(const ts::Model& truth, const ts::Model& background, const ts::Shot& shot,
                           const ts::Options& o) {
  ts::ShotRecord d = ts::run_shot(truth, shot, o);
  const ts::ShotRecord direct = ts::run_shot(background, shot, o);
  for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] -= direct.data[i];
  return d;
}

// Checkpointed (tight budget, CPML state included) == stored, bit for bit.
TEST(MigrationCheckpoints, CheckpointedImageEqualsStoredImage) {
  const ts::Grid g = grid2d(60, 70, 10.0);
  const ts::Model truth = heterogeneous(g);
  const ts::Model bg = ts::smoothed_model(truth, 60.0);
  ts::Options o = ts::resolved(bg, options(ts::BoundaryKind::cpml, 400));
  ts::Shot shot{{20.0, 350.0, 0}, receiver_line(20.0, 0.0, 690.0, 10.0), {}};
  shot.wavelet = ts::ricker(o.f0, o.dt, o.nt);
  const ts::ShotRecord d = reflections(truth, bg, shot, o);
  const ts::ShotImage stored = ts::migrate_shot(bg, shot, d, o, kInf);
  const double snap = double(g.points()) * 4;
  const ts::ShotImage ckpt = ts::migrate_shot(bg, shot, d, o, 0.6 * o.nt * snap);
  ASSERT_FALSE(ckpt.plan.store_all);
  EXPECT_GT(ckpt.plan.recompute_factor(), 1.0);
  EXPECT_LE(ckpt.plan.memory_bytes, 0.6 * o.nt * snap);
  EXPECT_EQ(stored.image, ckpt.image);
  EXPECT_EQ(stored.illumination, ckpt.illumination);
}

// Binomial checkpointing with 1, 2, 3 and 6 slots: the same image bit for bit, in
// revolve's number of forward steps.
TEST(MigrationCheckpoints, BinomialImageEqualsStoredImage) {
  const ts::Grid g = grid2d(60, 70, 10.0);
  const ts::Model truth = heterogeneous(g);
  const ts::Model bg = ts::smoothed_model(truth, 60.0);
  ts::Options o = ts::resolved(bg, options(ts::BoundaryKind::cpml, 240));
  ts::Shot shot{{20.0, 350.0, 0}, receiver_line(20.0, 0.0, 690.0, 10.0), {}};
  shot.wavelet = ts::ricker(o.f0, o.dt, o.nt);
  const ts::ShotRecord d = reflections(truth, bg, shot, o);
  const ts::ShotImage stored = ts::migrate_shot(bg, shot, d, o, kInf);
  const double snap = stored.plan.snapshot_bytes, state = stored.plan.state_bytes;
  for (int slots : {1, 2, 3, 6}) {
    const double budget = slots * state + snap;
    const ts::ShotImage ckpt = ts::migrate_shot(bg, shot, d, o, budget);
    ASSERT_TRUE(ckpt.plan.binomial) << ckpt.plan.describe();
    EXPECT_EQ(ckpt.plan.checkpoints, slots);
    EXPECT_LE(ckpt.plan.memory_bytes, budget);
    EXPECT_EQ(ckpt.plan.forward_steps, ts::revolve_forward_steps(o.nt, slots)) << slots << " slots";
    EXPECT_EQ(stored.image, ckpt.image) << slots << " slots";
    EXPECT_EQ(stored.illumination, ckpt.illumination) << slots << " slots";
    std::printf("%s\n", ckpt.plan.describe().c_str());
  }
  try {
    ts::migrate_shot(bg, shot, d, o, state + snap - 1);
    FAIL() << "a budget below one checkpoint + one snapshot was accepted";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("one checkpoint ("), std::string::npos) << e.what();
  }
}

// migrate_scattered (the direct data sampled by the source wavefield's pass: 3 sweeps a
// step) == migrate_shot on run_shot(truth) - run_shot(background) (4 sweeps), bit for bit,
// with every snapshot stored, with segment checkpoints and binomial (revolve's first
// advance samples the receivers), in the same number of forward steps.
TEST(MigrationFused, ScatteredEqualsSeparateDirectRun) {
  const ts::Grid g = grid2d(60, 70, 10.0);
  const ts::Model truth = heterogeneous(g);
  const ts::Model bg = ts::smoothed_model(truth, 60.0);
  ts::Options o = ts::resolved(bg, options(ts::BoundaryKind::cpml, 300));
  ts::Shot shot{{20.0, 350.0, 0}, receiver_line(20.0, 5.0, 685.0, 15.0), {}};
  shot.wavelet = ts::ricker(o.f0, o.dt, o.nt);
  const ts::ShotRecord recorded = ts::run_shot(truth, shot, o);
  const ts::ShotRecord d = reflections(truth, bg, shot, o);
  const double snap = double(g.points()) * 4;
  const ts::ShotImage stored = ts::migrate_shot(bg, shot, d, o, kInf);
  const double state = stored.plan.state_bytes;
  struct Budget {
    const char* name;
    double bytes;
  };
  for (const Budget& b : {Budget{"store all", kInf}, Budget{"segments", 0.6 * o.nt * snap},
                          Budget{"binomial", 3 * state + snap}}) {
    const ts::ShotImage sep = ts::migrate_shot(bg, shot, d, o, b.bytes);
    const ts::ShotImage fused = ts::migrate_scattered(bg, shot, recorded, o, b.bytes);
    EXPECT_EQ(fused.plan.forward_steps, sep.plan.forward_steps) << b.name;
    EXPECT_EQ(fused.image, sep.image) << b.name;
    EXPECT_EQ(fused.illumination, sep.illumination) << b.name;
    EXPECT_EQ(fused.image, stored.image) << b.name;
  }
  // The image is not trivially equal: without subtracting the direct data it differs.
  const ts::ShotImage raw = ts::migrate_shot(bg, shot, recorded, o, kInf);
  EXPECT_NE(raw.image, stored.image);
  // A gather of the wrong length is refused as by migrate_shot.
  ts::ShotRecord short_record = recorded;
  short_record.nt = o.nt - 1;
  EXPECT_THROW(ts::migrate_scattered(bg, shot, short_record, o, kInf), taihu::Error);
}

// A flat reflector between depth indices 59 and 60 (vp 2000 above, 2600 from index 60
// on). The image approximates the velocity perturbation band-limited in depth (a step
// across the interface: one lobe above, one of the other sign below, the zero crossing
// at the interface); its vertical derivative, the reflectivity, peaks at the interface
// within one cell in every column of the well-illuminated middle.
TEST(MigrationImaging, FlatReflectorAtItsDepth) {
  const ts::Grid g = grid2d(100, 120, 10.0);
  const long zr = 60;
  ts::Model truth = ts::homogeneous_model(g, 2000.f);
  for (long x = 0; x < g.n[1]; ++x)
    for (long z = zr; z < g.n[0]; ++z) truth.vp[x * g.n[0] + z] = 2600.f;
  const ts::Model bg = ts::homogeneous_model(g, 2000.f);
  ts::Options o = ts::resolved(truth, options(ts::BoundaryKind::cpml, 0, 15));
  o.nt = int(0.9 / o.dt);
  ts::Shot shot{{160.0, 600.0, 0}, receiver_line(160.0, 0.0, 1190.0, 10.0), ts::ricker(o.f0, o.dt, o.nt)};
  const ts::ShotRecord d = reflections(truth, bg, shot, o);
  const ts::ShotImage im = ts::migrate_shot(bg, shot, d, o, kInf);
  const auto filtered = ts::laplacian_filtered(g, ts::illumination_compensated(im.image, im.illumination));
  for (long x = 45; x <= 75; x += 5) {
    const float* col = filtered.data() + x * g.n[0];
    long best = 25;  // reflectivity between z and z + 1, below the acquisition
    for (long z = 25; z + 1 < g.n[0] - 16; ++z)
      if (std::abs(col[z + 1] - col[z]) > std::abs(col[best + 1] - col[best])) best = z;
    EXPECT_NEAR(double(best) + 0.5, double(zr) - 0.5, 1.0) << "column " << x;
    // The two lobes: the largest |value| above and below the interface have opposite signs.
    long up = zr - 6, down = zr;
    for (long z = zr - 6; z < zr; ++z) up = std::abs(col[z]) > std::abs(col[up]) ? z : up;
    for (long z = zr; z < zr + 6; ++z) down = std::abs(col[z]) > std::abs(col[down]) ? z : down;
    EXPECT_LT(col[up] * col[down], 0.f) << "column " << x;
  }
}

// A small fast square (2x2 cells at z 49-50, x 59-60) seen by three shots: the image's
// largest |value| below the acquisition (z = 16) lies within two cells of it.
TEST(MigrationImaging, PointDiffractorFocuses) {
  const ts::Grid g = grid2d(90, 120, 10.0);
  ts::Model truth = ts::homogeneous_model(g, 2000.f);
  for (long x = 59; x <= 60; ++x)
    for (long z = 49; z <= 50; ++z) truth.vp[x * g.n[0] + z] = 3000.f;
  const ts::Model bg = ts::homogeneous_model(g, 2000.f);
  ts::Options o = ts::resolved(truth, options(ts::BoundaryKind::cpml, 0, 20));
  o.nt = int(0.8 / o.dt);
  std::vector<float> image(g.points(), 0.f), illum(g.points(), 0.f);
  for (double sx : {300.0, 600.0, 900.0}) {
    ts::Shot shot{{160.0, sx, 0}, receiver_line(160.0, 0.0, 1190.0, 10.0), ts::ricker(o.f0, o.dt, o.nt)};
    const ts::ShotImage im = ts::migrate_shot(bg, shot, reflections(truth, bg, shot, o), o, kInf);
    for (std::size_t i = 0; i < image.size(); ++i) {
      image[i] += im.image[i];
      illum[i] += im.illumination[i];
    }
  }
  const auto filtered = ts::laplacian_filtered(g, ts::illumination_compensated(image, illum));
  long bz = 25, bx = 16;
  for (long x = 16; x < g.n[1] - 16; ++x)
    for (long z = 25; z < g.n[0] - 16; ++z)
      if (std::abs(filtered[x * g.n[0] + z]) > std::abs(filtered[bx * g.n[0] + bz])) bz = z, bx = x;
  EXPECT_NEAR(double(bz), 49.5, 2.0);
  EXPECT_NEAR(double(bx), 59.5, 2.0);
}
