// The CFL (von Neumann) bound of the leapfrog scheme with the computed stencils.
// For u_tt = v^2 sum_a d2_a u the largest eigenvalue of -d2_a is sum_k |c_k| / h_a^2,
// so dt <= 2 / (v sqrt(sum_a lambda_a)). VTI: the p/q system's largest eigenvalue is
// bounded by vpx^2 (lambda_x + lambda_y) + vpz^2 lambda_z (its trace, epsilon >= delta).
#include <cmath>
#include <cstdio>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/fd_coefficients.hpp"
#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

double stable_dt(const Model& model, int space_order) {
  const auto c = second_derivative_weights(space_order);
  double sum = std::abs(c[0]);
  for (std::size_t k = 1; k < c.size(); ++k) sum += 2 * std::abs(c[k]);
  const Grid& g = model.grid;
  double lam[3] = {0, 0, 0};
  for (int a = 0; a < g.dim; ++a) lam[a] = sum / (g.h[a] * g.h[a]);
  double worst = 0;
  for (std::size_t i = 0; i < model.vp.size(); ++i) {
    const double v2 = double(model.vp[i]) * model.vp[i];
    double w;
    if (model.physics == Physics::tti)  // rotated operators: bound each by the full Laplacian's
      w = v2 * (2 + 2.0 * model.epsilon[i]) * (lam[0] + lam[1] + lam[2]);
    else if (model.physics == Physics::vti)
      w = v2 * (1 + 2.0 * model.epsilon[i]) * (lam[1] + lam[2]) + v2 * lam[0];
    else
      w = v2 * (lam[0] + lam[1] + lam[2]);
    worst = std::max(worst, w);
  }
  return 2.0 / std::sqrt(worst);
}

void check_cfl(const Model& model, int space_order, double dt) {
  const double limit = stable_dt(model, space_order);
  if (!(dt > 0) || dt > limit) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "taihu: dt = %g s is unstable for this model (max speed %.1f m/s, space order %d, %s): "
                  "use dt <= %.6g s",
                  dt, model.max_speed(), space_order, model.grid.describe().c_str(), limit);
    throw Error(buf);
  }
}

Options resolved(const Model& model, const Options& options) {
  validate(model);
  check_space_order(options.space_order);
  Options o = options;
  if (!(o.dt >= 0) || !std::isfinite(o.dt)) {  // only 0 means automatic
    char buf[160];
    std::snprintf(buf, sizeof buf, "taihu: dt must be 0 (automatic) or a positive number of seconds, got %g", o.dt);
    throw Error(buf);
  }
  if (o.dt == 0) o.dt = 0.6 * stable_dt(model, o.space_order);
  check_cfl(model, o.space_order, o.dt);
  check_boundary_fits(model.grid, o.boundary);
  if (o.nt < 0) throw Error("taihu: the number of time steps must be >= 0");
  if (o.coefficients == CoefficientPrecision::automatic) {  // (propagator.hpp: where halves measured faster)
    const bool half = model.physics == Physics::acoustic_density || model.physics == Physics::vti ||
                      (model.physics == Physics::acoustic && model.grid.dim == 3);
    o.coefficients = half ? CoefficientPrecision::half : CoefficientPrecision::float32;
  }
  return o;
}

}  // namespace taihu::stencil
