// MPI domain decomposition equals one rank exactly (run with 2 ranks under mpiexec):
// 2D and 3D, acoustic with CPML and a free surface, VTI, density with half coefficients,
// off-grid sources and receivers. A diverging run stops on every rank with an error.
#include <gtest/gtest.h>
#include <mpi.h>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/distributed.hpp"
#include "taihu/stencil/wavelet.hpp"

using namespace taihu::stencil;

namespace {

void expect_identical(const Model& m, const Shot& shot, const Options& o) {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size < 2) GTEST_SKIP() << "run under mpiexec -n 2";
  const ShotRecord dist = run_shot_distributed(MPI_COMM_WORLD, m, shot, o);
  if (rank != 0) return;
  const ShotRecord one = run_shot(m, shot, o);
  ASSERT_EQ(dist.data.size(), one.data.size());
  double energy = 0;
  for (std::size_t i = 0; i < one.data.size(); ++i) {
    energy += double(one.data[i]) * one.data[i];
    ASSERT_EQ(dist.data[i], one.data[i]) << "sample " << i;
  }
  EXPECT_GT(energy, 0);
}

}  // namespace

TEST(Mpi, Acoustic2DWithCpmlAndFreeSurfaceEqualsOneRank) {
  Grid g;
  g.dim = 2;
  g.n = {61, 90, 1};
  g.h = {10, 10, 1};
  Model m = layered_model(g);
  Options o;
  o.nt = 200;
  o.dt = 1e-3;
  o.boundary.width = 12;
  o.boundary.free_surface = true;
  Shot shot{{103.3, 441.7}, {{20, 30}, {20, 455.5}, {300.2, 870}}, ricker(15, o.dt, o.nt)};
  expect_identical(m, shot, o);
}

TEST(Mpi, Vti3DEqualsOneRank) {
  Grid g;
  g.dim = 3;
  g.n = {30, 24, 40};
  g.h = {10, 10, 10};
  Model m = layered_model(g);
  m.physics = Physics::vti;
  m.epsilon.assign(m.vp.size(), 0.2f);
  m.delta.assign(m.vp.size(), 0.05f);
  Options o;
  o.nt = 80;
  o.dt = 1e-3;
  o.boundary.width = 8;
  Shot shot{{150, 120, 195.5}, {{100, 60, 190}, {100, 200, 210.3}}, ricker(15, o.dt, o.nt)};
  expect_identical(m, shot, o);
}

// Variable density with half coefficients (the default for it) in a model whose velocity
// and density change along y, the decomposed axis: each rank's own coefficients span a
// different range, and the halves' scale must still be the same on every rank.
TEST(Mpi, DensityHalfCoefficients3DEqualsOneRank) {
  Grid g;
  g.dim = 3;
  g.n = {30, 24, 40};
  g.h = {10, 10, 10};
  Model m = layered_model(g);
  m.physics = Physics::acoustic_density;
  m.rho.assign(m.vp.size(), 1000.f);
  for (long y = 0; y < g.n[2]; ++y)
    for (long i = 0; i < g.n[0] * g.n[1]; ++i) {
      const auto k = static_cast<std::size_t>(y * g.n[0] * g.n[1] + i);
      m.vp[k] = y < 20 ? 1500.f : 3800.f;
      m.rho[k] = y < 20 ? 1000.f + 5.f * float(y) : 2400.f;
    }
  Options o;
  o.nt = 80;
  o.dt = 1e-3;
  o.boundary.width = 8;
  o.coefficients = CoefficientPrecision::half;
  Shot shot{{150, 120, 195.5}, {{100, 60, 190}, {100, 200, 210.3}, {100, 100, 330}}, ricker(15, o.dt, o.nt)};
  expect_identical(m, shot, o);
}

// Density alternating 1 and 1e4 kg/m^3 point by point diverges; the check is collective,
// so both ranks throw at the same step instead of one waiting on the other.
TEST(Mpi, DivergingRunThrowsOnEveryRank) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "run under mpiexec -n 2";
  Grid g;
  g.dim = 2;
  g.n = {30, 100, 1};
  g.h = {10, 10, 1};
  Model m = homogeneous_model(g, 2000.f);
  m.physics = Physics::acoustic_density;
  m.rho.resize(m.vp.size());
  for (long i1 = 0; i1 < 100; ++i1)
    for (long i0 = 0; i0 < 30; ++i0) m.rho[std::size_t(i1 * 30 + i0)] = (i0 + i1) % 2 ? 1e4f : 1.f;
  Options o;
  o.nt = 1000;
  o.boundary.width = 10;
  o = resolved(m, o);
  const Shot shot{{20, 500}, {{20, 300}, {20, 700}}, ricker(10, o.dt, o.nt)};
  try {
    run_shot_distributed(MPI_COMM_WORLD, m, shot, o);
    FAIL() << "no error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("diverged at step"), std::string::npos) << e.what();
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) ::testing::GTEST_FLAG(output) = "";
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
