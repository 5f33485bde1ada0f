// Earth models: P velocity (m/s) and, depending on the physics, density (kg/m^3)
// and Thomsen's epsilon and delta (VTI), all varying point by point on a Grid.
#pragma once
#include <string>
#include <vector>

#include "taihu/stencil/grid.hpp"

namespace taihu::stencil {

enum class Physics {
  acoustic,          // constant-density acoustic: u_tt = v^2 lap u
  acoustic_density,  // variable density: u_tt = rho v^2 div(1/rho grad u)
  vti,               // pseudo-acoustic VTI, Fletcher/Du/Fowler 2009 with vs = 0
  tti                // the same system with a tilted symmetry axis (theta, phi per point)
};

const char* physics_name(Physics physics);
Physics parse_physics(const std::string& text);  // "acoustic" | "density" | "vti" | "tti"

struct Model {
  Grid grid;
  Physics physics = Physics::acoustic;
  std::vector<float> vp;       // m/s, grid.points() values, z fastest
  std::vector<float> rho;      // kg/m^3 (acoustic_density), else empty
  std::vector<float> epsilon;  // (vti, tti), else empty
  std::vector<float> delta;    // (vti, tti), else empty
  std::vector<float> theta;    // tilt of the symmetry axis from vertical, radians (tti)
  std::vector<float> phi;      // azimuth of the tilt from x towards y, radians (tti, 3D; empty: 0)

  float vp_min() const;
  float vp_max() const;
  // Largest effective speed the CFL condition must honour (VTI: horizontal speed).
  double max_speed() const;
};

// Velocities above this (m/s) are no rock or fluid: a corrupt or mis-scaled model,
// whose stable dt would be vanishingly small.
inline constexpr double kMaxVelocity = 1e5;

// Throws taihu::Error when sizes disagree with the grid, values are non-positive or
// not finite, vp exceeds kMaxVelocity, or VTI has epsilon < delta (the pseudo-acoustic
// system is then unstable). Errors name the field, the value and the cell (z, x[, y]).
void validate(const Model& model);

Model homogeneous_model(const Grid& grid, float vp);
// Built-in layered model (no input files): flat layers 1500..4000 m/s with a dipping
// interface, so a demo shows reflections.
Model layered_model(const Grid& grid);

}  // namespace taihu::stencil
