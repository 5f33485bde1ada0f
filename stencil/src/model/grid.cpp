// Grid validation and the padded field layout (see grid.hpp for the axis convention).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/grid.hpp"
#include "model/huge_page_storage.hpp"

namespace taihu::stencil {

std::string Grid::describe() const {
  char buf[160];
  if (dim == 3)
    std::snprintf(buf, sizeof buf, "%ldx%ldx%ld (z,x,y) at %g x %g x %g m", n[0], n[1], n[2], h[0],
                  h[1], h[2]);
  else
    std::snprintf(buf, sizeof buf, "%ldx%ld (z,x) at %g x %g m", n[0], n[1], h[0], h[1]);
  return buf;
}

void validate(const Grid& grid) {
  if (grid.dim != 2 && grid.dim != 3)
    throw Error("taihu: grid dimension must be 2 or 3, got " + std::to_string(grid.dim));
  static const char* names[3] = {"z", "x", "y"};
  for (int a = 0; a < grid.dim; ++a) {
    if (grid.n[a] < 1)
      throw Error(std::string("taihu: grid size along ") + names[a] + " must be >= 1, got " +
                  std::to_string(grid.n[a]));
    if (!(grid.h[a] > 0) || !std::isfinite(grid.h[a]))
      throw Error(std::string("taihu: grid spacing along ") + names[a] +
                  " must be a positive number of metres, got " + std::to_string(grid.h[a]));
  }
  if (grid.dim == 2 && grid.n[2] != 1) throw Error("taihu: a 2D grid has n[2] = 1");
}

Layout Layout::for_grid(int dim, const std::array<long, 3>& n) {
  Layout l;
  l.n = n;
  l.pad = {kPad, kPad, dim == 3 ? kPad : 0};
  const long row = n[0] + 2 * kPad;
  l.s1 = (row + 15) / 16 * 16;
  l.s2 = l.s1 * (n[1] + 2 * kPad);
  l.total = l.s2 * (n[2] + 2 * l.pad[2]);
  return l;
}

Field::Field(const Layout& layout) : layout_(layout), buf_(huge_page_storage<float>(layout.total)) { fill(0.f); }

void Field::fill(float value) {
  for (auto& v : buf_) v = value;
}

}  // namespace taihu::stencil
