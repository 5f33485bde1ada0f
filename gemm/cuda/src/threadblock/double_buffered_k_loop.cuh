// double_buffered_k_loop: the k loop that both block-level main loops (MmaSimtPipelined
// on CUDA cores, MmaTf32Pipelined on tensor cores) run around their own math. Each
// operand has two shared buffers: while the threads multiply out of buffer `cur`, the
// next k tile is already in flight from global memory into registers (TileLoader::load)
// and is written to buffer cur ^ 1 afterwards. One __syncthreads() per k tile:
//   - the writes to cur ^ 1 in iteration t come after the barrier that ended iteration
//     t - 1, i.e. after every thread finished reading cur ^ 1 (no write-after-read race);
//   - the reads of cur ^ 1 in iteration t + 1 come after the barrier ending iteration t,
//     i.e. after every thread wrote it (no read-after-write race).
// Requires p.k >= 1. Ends with a __syncthreads(), so shared memory may be reused.
#pragma once
#include <cuda_runtime.h>

#include "kernel/params.hpp"

namespace taihu::gemm_cuda::detail {

// Loader: TileLoader<kTile, kTileK, kThreads>. Storage: a[2][kTileK][pitch] and
// b[2][kTileK][pitch] floats. tile_math(a, b) consumes one k tile: a[kk][r] is
// op(A)(m0 + r, k0 + kk), b[kk][c] is op(B)(k0 + kk, n0 + c).
template <class Loader, int kTileK, class Storage, class TileMath>
__device__ __forceinline__ void double_buffered_k_loop(const GemmParams& p, long long m0, long long n0, Storage& s,
                                                       TileMath&& tile_math) {
  Loader la{p.a, p.lda, p.m, p.k, m0, /*k_contiguous=*/p.trans_a, p.vec_a, {}};
  Loader lb{p.b, p.ldb, p.n, p.k, n0, /*k_contiguous=*/!p.trans_b, p.vec_b, {}};
  const long long tiles = (p.k + kTileK - 1) / kTileK;
  la.load(0);
  lb.load(0);
  la.store(s.a[0]);
  lb.store(s.b[0]);
  __syncthreads();

  for (long long t = 0; t < tiles; ++t) {
    const int cur = static_cast<int>(t & 1);
    const bool more = t + 1 < tiles;
    if (more) {
      la.load((t + 1) * kTileK);
      lb.load((t + 1) * kTileK);
    }
    tile_math(s.a[cur], s.b[cur]);
    if (more) {
      la.store(s.a[cur ^ 1]);
      lb.store(s.b[cur ^ 1]);
    }
    __syncthreads();
  }
}

}  // namespace taihu::gemm_cuda::detail
