// Finite-difference weights computed with Fornberg's algorithm (Math. Comp. 1988),
// never tabulated: any derivative order on any stencil nodes, and the centred
// second- and first-derivative stencils the kernels use for space orders 2..16.
#pragma once
#include <span>
#include <vector>

namespace taihu::stencil {

// Weights w[j] so that f^(m)(x0) ~ sum_j w[j] f(nodes[j]). Throws taihu::Error if
// there are not more nodes than m.
std::vector<double> fornberg_weights(int m, double x0, std::span<const double> nodes);

// Centred second derivative of even `order` (2..16) on unit spacing: c[0] is the
// centre weight, c[k] (k = 1..order/2) the weight of f(+-k). Throws for bad orders.
std::vector<double> second_derivative_weights(int order);

// Centred first derivative of even `order` on unit spacing: a[k] (k = 1..order/2) is
// the weight of f(+k); f(-k) gets -a[k]; a[0] = 0.
std::vector<double> first_derivative_weights(int order);

// Throws taihu::Error unless order is even and within 2..16.
void check_space_order(int order);

}  // namespace taihu::stencil
