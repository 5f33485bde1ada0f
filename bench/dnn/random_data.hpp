// Uniform [-1, 1) test data for the dnn benchmarks, reproducible from a seed.
#pragma once
#include <random>
#include <vector>

#include "taihu/dnn/conv.hpp"

namespace taihu::bench {

inline std::vector<float> random_data(taihu::dnn::index_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = dist(rng);
  return v;
}

}  // namespace taihu::bench
