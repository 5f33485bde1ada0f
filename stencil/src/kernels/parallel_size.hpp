// How many threads a grid loop of `points` points should use (private): all of taihu's
// threads (arch::threads_for_call) for big grids, fewer for small ones, where the
// fork/join and barrier cost of OpenMP exceeds the work (and, on a shared or
// oversubscribed machine, a descheduled thread stalls every barrier).
#pragma once
#include <algorithm>

#include "taihu/arch/threads.hpp"

namespace taihu::stencil {

inline int threads_for_points(double points) {
  constexpr double kPointsPerThread = 65536;
  const int wanted = static_cast<int>(points / kPointsPerThread);
  return std::clamp(wanted, 1, arch::threads_for_call());
}

}  // namespace taihu::stencil
