// MmaSimtPipelined: the block-level main loop of the CUDA-core kernel. A 256-thread
// block computes a 128 x 128 tile of op(A) op(B) over K in steps of 8, with two shared
// buffers per operand: while the threads multiply out of buffer `cur`, the next k tile
// is already in flight from global memory into registers, and is written to buffer
// cur ^ 1 afterwards. One __syncthreads() per k tile:
//   - the writes to cur ^ 1 in iteration t come after the barrier that ended iteration
//     t - 1, i.e. after every thread finished reading cur ^ 1 (no write-after-read race);
//   - the reads of cur ^ 1 in iteration t + 1 come after the barrier ending iteration t,
//     i.e. after every thread wrote it (no read-after-write race).
// Shared memory: 2 operands x 2 buffers x 8 x 132 floats = 16.5 KiB.
#pragma once
#include <cuda_runtime.h>

#include "kernel/params.hpp"
#include "thread/mma_simt_8x8.cuh"
#include "threadblock/tile_loader.cuh"

namespace taihu::gemm_cuda::detail {

struct MmaSimtPipelined {
  static constexpr int kThreads = 256;
  static constexpr int kTile = 128;
  static constexpr int kTileK = 8;
  using Loader = TileLoader<kTile, kTileK, kThreads>;
  static constexpr int kPitch = Loader::kPitch;

  struct SharedStorage {
    float a[2][kTileK][kPitch];
    float b[2][kTileK][kPitch];
  };

  // This thread's place in the 16 x 16 thread grid (ThreadMma8x8's tm, tn).
  __device__ __forceinline__ static int thread_m() { return static_cast<int>(threadIdx.x) % 16; }
  __device__ __forceinline__ static int thread_n() { return static_cast<int>(threadIdx.x) / 16; }

  // Accumulates op(A)[m0 : m0+128, :] * op(B)[:, n0 : n0+128] into mma (cleared here).
  // Requires p.k >= 1. Ends with a __syncthreads(), so shared memory may be reused.
  __device__ __forceinline__ static void run(const GemmParams& p, long long m0, long long n0,
                                             SharedStorage& s, ThreadMma8x8& mma) {
    Loader la{p.a, p.lda, p.m, p.k, m0, /*k_contiguous=*/p.trans_a, p.vec_a, {}};
    Loader lb{p.b, p.ldb, p.n, p.k, n0, /*k_contiguous=*/!p.trans_b, p.vec_b, {}};
    const int tm = thread_m();
    const int tn = thread_n();
    mma.clear();

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
#pragma unroll
      for (int kk = 0; kk < kTileK; ++kk) mma.step(s.a[cur][kk], s.b[cur][kk], tm, tn);
      if (more) {
        la.store(s.a[cur ^ 1]);
        lb.store(s.b[cur ^ 1]);
      }
      __syncthreads();
    }
  }
};

}  // namespace taihu::gemm_cuda::detail
