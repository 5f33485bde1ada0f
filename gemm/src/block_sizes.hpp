// Cache block sizes for the five loops, derived from the cache hierarchy with an
// analytical model in the manner of Low et al., "Analytical Modeling Is Enough for
// High-Performance BLIS" (ACM TOMS 2016), set-associativity counted in ways:
//   kc: a kc x nr micro-panel of B stays in L1 (half its ways less one), while A's
//       micro-panels stream through the rest from L2 under prefetch;
//   mc: the mc x kc block of A takes half of the L2 ways;
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
