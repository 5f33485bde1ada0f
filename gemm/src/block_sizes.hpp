// Cache block sizes for the five loops, derived from the cache hierarchy with the
// analytical model of Low et al., "Analytical Modeling Is Enough for High-Performance
// BLIS" (ACM TOMS 2016):
//   kc: a kc x nr micro-panel of B stays in L1 beside the streaming A micro-panels;
//   mc: the mc x kc block of A fills the L2 ways left after B's micro-panel and C;
//   nc: the kc x nc panel of B fills the (shared) L3 ways left after A's blocks.
#pragma once
#include <cstddef>

#include "taihu/arch/topology.hpp"

namespace taihu::gemm {

struct BlockSizes {
  long mc = 0, kc = 0, nc = 0;
};

struct CacheGeometry {
  std::size_t bytes = 0;
  int ways = 0;
  int line = 64;
  int sharers = 1;  // cores sharing one instance
};

// mr, nr: register tile; elem: bytes per element.
BlockSizes derive_block_sizes(int mr, int nr, int elem, const CacheGeometry& l1,
                              const CacheGeometry& l2, const CacheGeometry& l3);

// For this machine's caches (arch::topology()), computed once per (mr, nr, elem).
BlockSizes block_sizes_for(int mr, int nr, int elem);

}  // namespace taihu::gemm
