// Fornberg's recursion (Math. Comp. 51, 1988) for finite-difference weights, and the
// centred stencils built from it.
#include <cmath>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/fd_coefficients.hpp"

namespace taihu::stencil {

std::vector<double> fornberg_weights(int m, double x0, std::span<const double> nodes) {
  const int n = static_cast<int>(nodes.size());
  if (m < 0 || n <= m)
    throw Error("taihu: fornberg_weights: derivative order " + std::to_string(m) + " needs more than " +
                std::to_string(m) + " nodes, got " + std::to_string(n));
  // c[j][k]: weight of node j for the k-th derivative.
  std::vector<std::vector<double>> c(n, std::vector<double>(m + 1, 0.0));
  double c1 = 1.0, c4 = nodes[0] - x0;
  c[0][0] = 1.0;
  for (int i = 1; i < n; ++i) {
    const int mn = std::min(i, m);
    double c2 = 1.0;
    const double c5 = c4;
    c4 = nodes[i] - x0;
    for (int j = 0; j < i; ++j) {
      const double c3 = nodes[i] - nodes[j];
      c2 *= c3;
      if (j == i - 1) {
        for (int k = mn; k >= 1; --k) c[i][k] = c1 * (k * c[i - 1][k - 1] - c5 * c[i - 1][k]) / c2;
        c[i][0] = -c1 * c5 * c[i - 1][0] / c2;
      }
      for (int k = mn; k >= 1; --k) c[j][k] = (c4 * c[j][k] - k * c[j][k - 1]) / c3;
      c[j][0] = c4 * c[j][0] / c3;
    }
    c1 = c2;
  }
  std::vector<double> w(n);
  for (int j = 0; j < n; ++j) w[j] = c[j][m];
  return w;
}

void check_space_order(int order) {
  if (order < 2 || order > 16 || order % 2 != 0)
    throw Error("taihu: space order must be even and within 2..16, got " + std::to_string(order));
}

namespace {
std::vector<double> centred_nodes(int half) {
  std::vector<double> x;
  for (int k = -half; k <= half; ++k) x.push_back(k);
  return x;
}
}  // namespace

std::vector<double> second_derivative_weights(int order) {
  check_space_order(order);
  const int half = order / 2;
  const auto w = fornberg_weights(2, 0.0, centred_nodes(half));
  std::vector<double> c(half + 1);
  for (int k = 0; k <= half; ++k) c[k] = w[half + k];
  return c;
}

std::vector<double> first_derivative_weights(int order) {
  check_space_order(order);
  const int half = order / 2;
  const auto w = fornberg_weights(1, 0.0, centred_nodes(half));
  std::vector<double> a(half + 1);
  for (int k = 0; k <= half; ++k) a[k] = w[half + k];
  a[0] = 0.0;
  return a;
}

}  // namespace taihu::stencil
