// The CUDA kernels against the reference kernel (label cuda). Each GPU test reports
// SKIPPED without a device; the error path runs everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/cuda.hpp"
#include "taihu/stencil/propagator.hpp"
#include "taihu/stencil/wavelet.hpp"

using namespace taihu::stencil;

namespace {

Model test_model(int dim, Physics physics) {
  Grid g;
  g.dim = dim;
  g.n = dim == 3 ? std::array<long, 3>{45, 21, 70} : std::array<long, 3>{57, 43, 1};
  g.h = {10, 10, dim == 3 ? 10.0 : 1.0};
  Model m = layered_model(g);
  m.physics = physics;
  if (physics == Physics::acoustic_density) {
    m.rho.resize(m.vp.size());
    for (std::size_t i = 0; i < m.vp.size(); ++i) m.rho[i] = 1000.f + 0.4f * m.vp[i];
  }
  if (physics == Physics::vti) {
    m.epsilon.assign(m.vp.size(), 0.15f);
    m.delta.assign(m.vp.size(), 0.05f);
  }
  return m;
}

void compare_with_reference(int dim, Physics physics, int order) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const Model m = test_model(dim, physics);
  Options o;
  o.space_order = order;
  o.nt = 60;
  o.dt = 1e-3;
  o.boundary.width = 6;
  Options r = o;
  o.kernel = KernelKind::cuda;
  r.kernel = KernelKind::reference;
  const Shot shot{{200, 100, dim == 3 ? 350.0 : 0.0}, {{150, 150, dim == 3 ? 300.0 : 0.0}}, ricker(20, o.dt, o.nt)};
  const ShotRecord a = run_shot(m, shot, o), b = run_shot(m, shot, r);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    num += std::pow(double(a.data[i]) - b.data[i], 2);
    den += std::pow(double(b.data[i]), 2);
  }
  ASSERT_GT(den, 0);
  EXPECT_LT(std::sqrt(num / den), 1e-5);
}

}  // namespace

TEST(Cuda, Acoustic3DSlidingWindowMatchesReference) {
  for (int order : {2, 8, 16}) compare_with_reference(3, Physics::acoustic, order);
}
TEST(Cuda, Density3DMatchesReference) { compare_with_reference(3, Physics::acoustic_density, 8); }
TEST(Cuda, Vti3DMatchesReference) { compare_with_reference(3, Physics::vti, 8); }
TEST(Cuda, Acoustic2DMatchesReference) { compare_with_reference(2, Physics::acoustic, 8); }

TEST(Cuda, WithoutDeviceTheErrorIsClear) {
  if (cuda_device_available()) GTEST_SKIP() << "a device is present";
  const Model m = test_model(2, Physics::acoustic);
  Options o;
  o.kernel = KernelKind::cuda;
  EXPECT_THROW(Propagator(m, o), taihu::Error);
}
