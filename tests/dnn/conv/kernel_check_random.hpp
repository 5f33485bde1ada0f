// Seeded uniform [-1, 1) inputs for the header-only kernel checks
// (pointwise_kernel_check.hpp, winograd_kernel_check.hpp), which are also compiled
// into the SIMDe-emulated tests and so keep to the standard library.
#pragma once
#include <cstddef>
#include <random>
#include <vector>

namespace kernel_check {

inline std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace kernel_check
