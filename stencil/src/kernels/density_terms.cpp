// Precomputes the merged buoyancy terms G_a = A d_a(ln rho) of the variable-density
// equation for the optimized CPU kernel (contract in kernel_api.hpp): they depend on the
// model only, so differentiating ln rho once here saves the kernel a second stencil
// (and the y window of a second array) on every step.
#include "kernels/kernel_api.hpp"
#include "kernels/parallel_size.hpp"

namespace taihu::stencil::kernels {

void make_density_terms(const Layout& L, int dim, const FdWeights& fd, const float* A, const float* B,
                        float* const G[3]) {
  const long strides[3] = {1, L.s1, L.s2};
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_for_points(double(L.n[0] * L.n[1] * L.n[2])))
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1)
      for (long i0 = 0; i0 < L.n[0]; ++i0) {
        const long i = L.index(i0, i1, i2);
        for (int a = 0; a < dim; ++a) {
          float d = 0.f;
          for (int k = 1; k <= fd.half; ++k) d += fd.d1[a][k] * (B[i + k * strides[a]] - B[i - k * strides[a]]);
          G[a][i] = A[i] * d;
        }
      }
}

}  // namespace taihu::stencil::kernels
