// Cache block sizes for the five loops, derived from the cache hierarchy with an
// analytical model in the manner of Low et al., "Analytical Modeling Is Enough for
// High-Performance BLIS" (ACM TOMS 2016), set-associativity counted in ways.
// The register tile is mr x nr with mr the wide (vector) side, so the micro-panel
// that stays in L1 is A's (BLIS keeps its wide micro-panel resident the same way):
//   kc: A's mr x kc micro-panel takes half of the L1 ways; B's narrow micro-panels
//       stream through the other half from L2 (nr / mr of the traffic A would need);
//       at least 256 (C's tile moves once per depth block: an AVX-512 tile in a
//       32 KiB L1 would get 128);
//   nc: B's kc x nc block takes half of the L2 ways (A's micro-panels and C's tiles
//       pass through the rest);
//   mc: A's mc x kc block takes half of this core's share of the L3, at most 4 MiB.
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

// The B-resident order (BLIS's): B's nr x kc micro-panel stays in L1 while A's
// micro-panels stream from L2:
//   kc: B's micro-panel takes half of the L1 ways (at least 256, as above);
//   mc: A's mc x kc block takes half of the L2 ways;
//   nc: B's kc x nc block takes half of this core's share of the L3, at most 4 MiB.
BlockSizes derive_b_resident_block_sizes(int mr, int nr, int elem, const CacheGeometry& l1,
                                         const CacheGeometry& l2, const CacheGeometry& l3);

// For this machine's caches (arch::topology()), computed once per (mr, nr, elem).
BlockSizes block_sizes_for(int mr, int nr, int elem);
BlockSizes b_resident_block_sizes_for(int mr, int nr, int elem);

// This machine's cache at `level` (1-3) as arch/ reports it, or a typical one
// (32 KiB/8-way, 512 KiB/8-way, 8 MiB/16-way) where it reports none.
CacheGeometry cache_geometry(int level);

}  // namespace taihu::gemm
