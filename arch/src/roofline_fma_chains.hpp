// Private: the FMA-chain probe body shared by the vector ISAs. `Vec` is a traits struct
// (Reg, T, kLanes, set1, fma, store) for one register width and precision; the body
// runs `kChains` independent chains acc = acc * m + a, enough to cover every FMA pipe's
// latency, and sums all lanes so the compiler cannot drop the work. Each chain starts
// from a different value, so the compiler cannot fold the chains into one.
#pragma once

namespace taihu::arch::probes {

template <class Vec, int kChains>
double fma_chains(long iterations, typename Vec::T m, typename Vec::T a) {
  using T = typename Vec::T;
  typename Vec::Reg acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = Vec::set1(static_cast<T>(i + 1));
  const typename Vec::Reg vm = Vec::set1(m), va = Vec::set1(a);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = Vec::fma(acc[i], vm, va);
  double sum = 0;
  // Lanes summed through memory: GCC 12's 512-bit reduce intrinsics trip -Wuninitialized.
  alignas(64) T lanes[Vec::kLanes];
  for (int i = 0; i < kChains; ++i) {
    Vec::store(lanes, acc[i]);
    for (T v : lanes) sum += static_cast<double>(v);
  }
  return sum;
}

}  // namespace taihu::arch::probes
