// Independent references for the stencil tests: homogeneous-medium Green's functions
// of u_tt - v^2 lap u = f(t) delta(x) convolved with a Ricker wavelet, in double.
#pragma once
#include <cmath>
#include <vector>

#include "taihu/stencil/wavelet.hpp"

namespace taihu::stencil::test {

// 3D: u(r, t) = f(t - r/v) / (4 pi v^2 r).
inline double green3d_ricker(double r, double t, double v, double f0, double t0) {
  return ricker_value(f0, t0, t - r / v) / (4 * M_PI * v * v * r);
}

// 2D: u(r, t) = 1/(2 pi v^2) int_0^{acosh(v t / r)} f(t - (r/v) cosh(th)) dth
// (the singular kernel H(t - r/v) / sqrt(t^2 - r^2/v^2) with s = (r/v) cosh th).
inline double green2d_ricker(double r, double t, double v, double f0, double t0) {
  const double tr = r / v;
  if (t <= tr) return 0.0;
  const double top = std::acosh(t / tr);
  const int n = 4000;
  const double h = top / n;
  double sum = 0;
  for (int i = 0; i <= n; ++i) {
    const double th = i * h;
    const double w = (i == 0 || i == n) ? 0.5 : 1.0;
    sum += w * ricker_value(f0, t0, t - tr * std::cosh(th));
  }
  return sum * h / (2 * M_PI * v * v);
}

inline double rel_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

}  // namespace taihu::stencil::test
