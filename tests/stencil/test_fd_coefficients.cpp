// Fornberg weights against known closed forms and exactness on polynomials.
#include <gtest/gtest.h>

#include <cmath>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/fd_coefficients.hpp"

using namespace taihu::stencil;

TEST(FdCoefficients, SecondOrderIsClassicThreePoint) {
  const auto c = second_derivative_weights(2);
  EXPECT_DOUBLE_EQ(c[0], -2.0);
  EXPECT_DOUBLE_EQ(c[1], 1.0);
}

TEST(FdCoefficients, EighthOrderMatchesClosedForm) {
  // c_k = 2 (-1)^(k+1) (M!)^2 / (k^2 (M-k)! (M+k)!) for M = 4.
  const auto c = second_derivative_weights(8);
  const double fact[9] = {1, 1, 2, 6, 24, 120, 720, 5040, 40320};
  double centre = 0;
  for (int k = 1; k <= 4; ++k) {
    const double expect = 2.0 * (k % 2 ? 1 : -1) * fact[4] * fact[4] / (k * k * fact[4 - k] * fact[4 + k]);
    EXPECT_NEAR(c[k], expect, 1e-12) << "k=" << k;
    centre -= 2 * expect;
  }
  EXPECT_NEAR(c[0], centre, 1e-12);
}

// The centred second derivative is exact up to degree order + 1, the first up to order.
TEST(FdCoefficients, ExactOnPolynomialsUpToTheirDegree) {
  for (int order = 2; order <= 16; order += 2) {
    const auto c2 = second_derivative_weights(order);
    const auto c1 = first_derivative_weights(order);
    const int half = order / 2;
    // f(x) = (x + 0.3)^p at x = 0 for p <= order + 1.
    for (int p = 0; p <= order + 1; ++p) {
      double d2 = c2[0] * std::pow(0.3, p), d1 = 0;
      for (int k = 1; k <= half; ++k) {
        d2 += c2[k] * (std::pow(k + 0.3, p) + std::pow(-k + 0.3, p));
        d1 += c1[k] * (std::pow(k + 0.3, p) - std::pow(-k + 0.3, p));
      }
      const double e2 = p >= 2 ? p * (p - 1) * std::pow(0.3, p - 2) : 0.0;
      const double e1 = p >= 1 ? p * std::pow(0.3, p - 1) : 0.0;
      const double scale = std::pow(half + 1.0, p);
      EXPECT_NEAR(d2, e2, 1e-9 * scale) << "order " << order << " p " << p;
      if (p <= order) {
        EXPECT_NEAR(d1, e1, 1e-9 * scale) << "order " << order << " p " << p;
      }
    }
  }
}

TEST(FdCoefficients, BadOrdersAreRejected) {
  EXPECT_THROW(second_derivative_weights(3), taihu::Error);
  EXPECT_THROW(second_derivative_weights(18), taihu::Error);
  EXPECT_THROW(first_derivative_weights(0), taihu::Error);
  const double nodes[1] = {0.0};
  EXPECT_THROW(fornberg_weights(1, 0.0, nodes), taihu::Error);
}
