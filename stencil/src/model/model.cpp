// Model validation and the built-in models.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/model.hpp"

namespace taihu::stencil {

const char* physics_name(Physics physics) {
  switch (physics) {
    case Physics::acoustic: return "acoustic";
    case Physics::acoustic_density: return "density";
    case Physics::vti: return "vti";
    case Physics::tti: return "tti";
  }
  return "?";
}

Physics parse_physics(const std::string& text) {
  if (text == "acoustic") return Physics::acoustic;
  if (text == "density" || text == "acoustic_density") return Physics::acoustic_density;
  if (text == "vti") return Physics::vti;
  if (text == "tti") return Physics::tti;
  throw Error("taihu: unknown physics '" + text + "' (use acoustic, density, vti or tti)");
}

float Model::vp_min() const { return vp.empty() ? 0.f : *std::min_element(vp.begin(), vp.end()); }
float Model::vp_max() const { return vp.empty() ? 0.f : *std::max_element(vp.begin(), vp.end()); }

double Model::max_speed() const {
  double m = 0;
  for (std::size_t i = 0; i < vp.size(); ++i) {
    double v2 = double(vp[i]) * vp[i];
    if (physics == Physics::vti || physics == Physics::tti) v2 *= 1.0 + 2.0 * std::max(0.f, epsilon[i]);
    m = std::max(m, v2);
  }
  return std::sqrt(m);
}

namespace {
// "(z 3, x 7)" or "(z 3, x 7, y 1)" for a point index (z fastest).
std::string cell_name(const Grid& g, std::size_t i) {
  const auto n0 = static_cast<std::size_t>(g.n[0]), n1 = static_cast<std::size_t>(g.n[1]);
  std::string s = "(z " + std::to_string(i % n0) + ", x " + std::to_string(i / n0 % n1);
  if (g.dim == 3) s += ", y " + std::to_string(i / n0 / n1);
  return s + ")";
}

void check_field(const std::vector<float>& f, const Grid& g, const char* name, bool positive, double max = 0,
                 const char* unit = "") {
  const auto n = static_cast<std::size_t>(g.points());
  if (f.size() != n)
    throw Error(std::string("taihu: model field '") + name + "' has " + std::to_string(f.size()) +
                " values, the grid has " + std::to_string(n) + " points");
  for (std::size_t i = 0; i < n; ++i) {
    const bool bad = !std::isfinite(f[i]) || (positive && !(f[i] > 0)) || (max > 0 && f[i] > max);
    if (!bad) continue;
    char value[48], range[64] = "not finite";
    std::snprintf(value, sizeof value, "%g%s", double(f[i]), unit);
    if (max > 0)
      std::snprintf(range, sizeof range, "must be > 0 and <= %g%s", max, unit);
    else if (positive)
      std::snprintf(range, sizeof range, "must be positive");
    throw Error(std::string("taihu: model field '") + name + "' has value " + value + " at cell " + cell_name(g, i) +
                " (" + range + ")");
  }
}
}  // namespace

void validate(const Model& model) {
  validate(model.grid);
  const auto n = static_cast<std::size_t>(model.grid.points());
  const Grid& g = model.grid;
  check_field(model.vp, g, "vp", true, kMaxVelocity, " m/s");
  if (model.physics == Physics::acoustic_density) check_field(model.rho, g, "rho", true);
  if (model.physics == Physics::tti) {
    check_field(model.theta, g, "theta", false);
    if (!model.phi.empty()) check_field(model.phi, g, "phi", false);
  }
  if (model.physics == Physics::vti || model.physics == Physics::tti) {
    check_field(model.epsilon, g, "epsilon", false);
    check_field(model.delta, g, "delta", false);
    for (std::size_t i = 0; i < n; ++i) {
      if (model.epsilon[i] < model.delta[i])
        throw Error("taihu: VTI model has epsilon < delta at point " + std::to_string(i) +
                    " (the pseudo-acoustic system is unstable there)");
      if (model.delta[i] <= -0.5f) throw Error("taihu: VTI delta must be > -0.5");
    }
  }
}

Model homogeneous_model(const Grid& grid, float vp) {
  validate(grid);
  Model m;
  m.grid = grid;
  m.vp.assign(static_cast<std::size_t>(grid.points()), vp);
  return m;
}

Model layered_model(const Grid& grid) {
  validate(grid);
  Model m;
  m.grid = grid;
  m.vp.resize(static_cast<std::size_t>(grid.points()));
  const double depth = double(grid.n[0] - 1) * grid.h[0];
  const double width = double(grid.n[1] - 1) * grid.h[1];
  for (long i2 = 0; i2 < grid.n[2]; ++i2)
    for (long i1 = 0; i1 < grid.n[1]; ++i1)
      for (long i0 = 0; i0 < grid.n[0]; ++i0) {
        const double z = double(i0) * grid.h[0], x = double(i1) * grid.h[1];
        const double dip = 0.55 * depth + 0.15 * depth * (x / std::max(width, 1.0));
        float v = 1500.f;
        if (z > 0.2 * depth) v = 2000.f;
        if (z > 0.4 * depth) v = 2600.f;
        if (z > dip) v = 3200.f;
        if (z > 0.85 * depth) v = 4000.f;
        m.vp[static_cast<std::size_t>((i2 * grid.n[1] + i1) * grid.n[0] + i0)] = v;
      }
  return m;
}

}  // namespace taihu::stencil
