// Scales the computed Fornberg weights by the grid spacing for the kernels.
#include "kernels/kernel_api.hpp"
#include "taihu/stencil/fd_coefficients.hpp"

namespace taihu::stencil::kernels {

FdWeights make_weights(const Grid& grid, int space_order) {
  const auto c2 = second_derivative_weights(space_order);
  const auto c1 = first_derivative_weights(space_order);
  FdWeights w;
  w.half = space_order / 2;
  for (int a = 0; a < grid.dim; ++a) {
    const double h = grid.h[a];
    for (int k = 0; k <= w.half; ++k) {
      w.d2[a][k] = static_cast<float>(c2[k] / (h * h));
      w.d1[a][k] = static_cast<float>(c1[k] / h);
    }
    w.centre += w.d2[a][0];
  }
  return w;
}

}  // namespace taihu::stencil::kernels
