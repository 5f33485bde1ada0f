// The reference kernel: the equations of kernel_api.hpp written as plainly as possible
// (one point at a time, runtime stencil radius, each axis summed separately). It is the
// anchor the optimized kernels are tested and benchmarked against.
#include "kernels/flush_denormals.hpp"
#include "kernels/kernel_api.hpp"
#include "kernels/parallel_size.hpp"

namespace taihu::stencil::kernels {
namespace {

float d2_axis(const float* f, long i, long stride, const float* w, int half) {
  float s = w[0] * f[i];
  for (int k = 1; k <= half; ++k) s += w[k] * (f[i + k * stride] + f[i - k * stride]);
  return s;
}

// d_a d_b f for a != b: the product of two centred first derivatives.
float mixed(const float* f, long i, long sa, long sb, const float* wa, const float* wb, int half) {
  float s = 0.f;
  for (int k = 1; k <= half; ++k)
    for (int l = 1; l <= half; ++l)
      s += wa[k] * wb[l] *
           (f[i + k * sa + l * sb] - f[i + k * sa - l * sb] - f[i - k * sa + l * sb] + f[i - k * sa - l * sb]);
  return s;
}

float d1_axis(const float* f, long i, long stride, const float* w, int half) {
  float s = 0.f;
  for (int k = 1; k <= half; ++k) s += w[k] * (f[i + k * stride] - f[i - k * stride]);
  return s;
}

}  // namespace

void reference_step(const StepArgs& a, long j0, long j1) {
  const Layout& L = a.layout;
  const FdWeights& fd = *a.fd;
  const long strides[3] = {1, L.s1, L.s2};
  const int slow = a.dim == 3 ? 2 : 1;
  const long n_other = a.dim == 3 ? L.n[1] : 1;
#pragma omp parallel num_threads(threads_for_points(double(j1 - j0) * double(n_other) * double(L.n[0])))
  {
  FlushDenormals ftz;
#pragma omp for schedule(static)
  for (long j = j0; j < j1; ++j)
    for (long o = 0; o < n_other; ++o)
      for (long i0 = 0; i0 < L.n[0]; ++i0) {
        const long i = slow == 2 ? L.index(i0, o, j) : L.index(i0, j, 0);
        if (a.physics == Physics::tti) {
          auto h1 = [&](const float* f) {
            float s = 0.f;
            for (int ax = 0; ax < a.dim; ++ax) s += a.R[ax][i] * d2_axis(f, i, strides[ax], fd.d2[ax], fd.half);
            const int pa[3] = {0, 1, 0}, pb[3] = {1, 2, 2};
            for (int m = 0; m < (a.dim == 3 ? 3 : 1); ++m)
              s += a.R[3 + m][i] * mixed(f, i, strides[pa[m]], strides[pb[m]], fd.d1[pa[m]], fd.d1[pb[m]], fd.half);
            return s;
          };
          float lap = 0.f;
          for (int ax = 0; ax < a.dim; ++ax) lap += d2_axis(a.u, i, strides[ax], fd.d2[ax], fd.half);
          const float h2 = lap - h1(a.u);
          const float vz = h1(a.q);
          a.u_prev[i] = 2.f * a.u[i] - a.u_prev[i] + a.A[i] * h2 + a.C[i] * vz;
          a.q_prev[i] = 2.f * a.q[i] - a.q_prev[i] + a.B[i] * h2 + a.C[i] * vz;
          continue;
        }
        if (a.physics == Physics::vti) {
          float h2 = 0.f;
          for (int ax = 1; ax < a.dim; ++ax) h2 += d2_axis(a.u, i, strides[ax], fd.d2[ax], fd.half);
          const float vz = d2_axis(a.q, i, 1, fd.d2[0], fd.half);
          a.u_prev[i] = 2.f * a.u[i] - a.u_prev[i] + a.A[i] * h2 + a.C[i] * vz;
          a.q_prev[i] = 2.f * a.q[i] - a.q_prev[i] + a.B[i] * h2 + a.C[i] * vz;
          continue;
        }
        float lap = 0.f;
        for (int ax = 0; ax < a.dim; ++ax) lap += d2_axis(a.u, i, strides[ax], fd.d2[ax], fd.half);
        if (a.physics == Physics::acoustic_density)
          for (int ax = 0; ax < a.dim; ++ax)
            lap -= d1_axis(a.B, i, strides[ax], fd.d1[ax], fd.half) *
                   d1_axis(a.u, i, strides[ax], fd.d1[ax], fd.half);
        a.u_prev[i] = 2.f * a.u[i] - a.u_prev[i] + a.A[i] * lap;
      }
  }
}

}  // namespace taihu::stencil::kernels
