// Boundary conditions: absorbing layers on the model's sides and an optional free
// surface on top (z = 0: pressure zero, mirrored antisymmetrically).
//   none    rigid (zero) outside the grid: everything reflects
//   sponge  Cerjan et al. (1985) exponential damping of the wavefield in the layer
//   cpml    convolutional PML for the second-order wave equation (Komatitsch & Martin
//           2007 profiles, Pasalic & McGarry 2010 auxiliary fields)
#pragma once
#include <string>

#include "taihu/stencil/grid.hpp"

namespace taihu::stencil {

enum class BoundaryKind { none, sponge, cpml };

const char* boundary_name(BoundaryKind kind);
BoundaryKind parse_boundary(const std::string& text);

struct BoundaryOptions {
  BoundaryKind kind = BoundaryKind::cpml;
  int width = 20;              // layer thickness in grid points (inside the model)
  bool free_surface = false;   // z = 0 is a free surface (no absorbing layer on top)
  double reflection = 1e-4;    // CPML's theoretical reflection coefficient R
  // Speed (m/s) the CPML damping profile is designed for; 0: the model's largest. Runs
  // whose difference is taken (observed minus direct wave in two models) must share it.
  double design_speed = 0;
};

// Throws taihu::Error when the absorbing layers do not fit `grid`: a width < 1, or the
// two layers of an axis overlapping (2 x width > points along that axis; with a free
// surface z has one layer, so width > nz). The message names the kind, the width, the
// grid, the axis and the largest width that fits. Layers that just meet (no interior
// between them) are stable; overlapping ones would share profile cells and auxiliary
// fields, so they are refused rather than shrunk: a CLI that silently changed the
// absorber would change the physics the user asked for. resolved() calls it.
void check_boundary_fits(const Grid& grid, const BoundaryOptions& options);
// "cpml 20 pts, interior 60 x -10 (z,x)": the layers and the points they leave, for messages.
std::string describe_layers(const Grid& grid, const BoundaryOptions& options);

}  // namespace taihu::stencil
