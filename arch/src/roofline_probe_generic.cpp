// Portable FMA probe: 8 independent scalar chains per precision.
#include <cmath>

#include "roofline_probes.hpp"

namespace taihu::arch::probes {
namespace {

template <class T>
double fma_chains(long iterations, T m, T a) {
  constexpr int kChains = 8;
  T acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = static_cast<T>(i + 1);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = std::fma(acc[i], m, a);
  double sum = 0;
  for (int i = 0; i < kChains; ++i) sum += static_cast<double>(acc[i]);
  return sum;
}

}  // namespace

const FmaProbe kFmaGeneric = {&fma_chains<float>, &fma_chains<double>, 8, 1, 1};

}  // namespace taihu::arch::probes
