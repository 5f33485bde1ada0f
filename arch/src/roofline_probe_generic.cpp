// Portable FMA probe: 8 independent scalar chains per precision.
#include <cmath>

#include "roofline_fma_chains.hpp"
#include "roofline_probes.hpp"

namespace taihu::arch::probes {
namespace {

constexpr int kChains = 8;

template <class Scalar>
struct Scalar1 {
  using T = Scalar;
  using Reg = Scalar;
  static constexpr int kLanes = 1;
  static Reg set1(T x) { return x; }
  static Reg fma(Reg a, Reg b, Reg c) { return std::fma(a, b, c); }
  static void store(T* p, Reg v) { *p = v; }
};

}  // namespace

const FmaProbe kFmaGeneric = {&fma_chains<Scalar1<float>, kChains>, &fma_chains<Scalar1<double>, kChains>, kChains,
                              1, 1};

}  // namespace taihu::arch::probes
