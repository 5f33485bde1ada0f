// Boundary conditions: absorbing layers on the model's sides and an optional free
// surface on top (z = 0: pressure zero, mirrored antisymmetrically).
//   none    rigid (zero) outside the grid: everything reflects
//   sponge  Cerjan et al. (1985) exponential damping of the wavefield in the layer
//   cpml    convolutional PML for the second-order wave equation (Komatitsch & Martin
//           2007 profiles, Pasalic & McGarry 2010 auxiliary fields)
#pragma once
#include <string>

namespace taihu::stencil {

enum class BoundaryKind { none, sponge, cpml };

const char* boundary_name(BoundaryKind kind);
BoundaryKind parse_boundary(const std::string& text);

struct BoundaryOptions {
  BoundaryKind kind = BoundaryKind::cpml;
  int width = 20;              // layer thickness in grid points (inside the model)
  bool free_surface = false;   // z = 0 is a free surface (no absorbing layer on top)
  double reflection = 1e-4;    // CPML's theoretical reflection coefficient R
};

}  // namespace taihu::stencil
