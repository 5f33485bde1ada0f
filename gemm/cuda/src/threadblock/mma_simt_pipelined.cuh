// MmaSimtPipelined: the block-level main loop of the CUDA-core kernel. A 256-thread
// block computes a 128 x 128 tile of op(A) op(B) over K in steps of 8, double-buffered
// in shared memory with one barrier per k tile (double_buffered_k_loop.cuh: the loop
// and its race argument). Shared memory: 2 operands x 2 buffers x 8 x 132 floats =
// 16.5 KiB.
#pragma once
#include <cuda_runtime.h>

#include "kernel/params.hpp"
#include "thread/mma_simt_8x8.cuh"
#include "threadblock/double_buffered_k_loop.cuh"
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
    const int tm = thread_m();
    const int tn = thread_n();
    mma.clear();
    double_buffered_k_loop<Loader, kTileK>(p, m0, n0, s, [&](const float (*a)[kPitch], const float (*b)[kPitch]) {
#pragma unroll
      for (int kk = 0; kk < kTileK; ++kk) mma.step(a[kk], b[kk], tm, tn);
    });
  }
};

}  // namespace taihu::gemm_cuda::detail
