// MmaTf32Pipelined: the block-level main loop of the tensor-core kernel. A 256-thread
// block (8 warps as 2 along M x 4 along N, each warp 64 x 32) computes a 128 x 128 tile
// of op(A) op(B) over K in steps of 16 (two m16n16k8 steps per tile), in the same
// double-buffered k loop as MmaSimtPipelined (double_buffered_k_loop.cuh). Shared
// memory: 2 operands x 2 buffers x 16 x 132 floats = 33 KiB, 128-byte aligned; every
// fragment pointer is a multiple of 32 bytes from the base (k offsets 8 * 132 floats,
// row offsets multiples of 16 floats, buffers 16 * 132 floats) and the pitch 132 is a
// multiple of 4, as wmma requires.
#pragma once
#include <cuda_runtime.h>

#include "kernel/params.hpp"
#include "threadblock/double_buffered_k_loop.cuh"
#include "threadblock/tile_loader.cuh"
#include "warp/mma_tf32_wmma.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace taihu::gemm_cuda::detail {

struct MmaTf32Pipelined {
  static constexpr int kThreads = 256;
  static constexpr int kTile = 128;
  static constexpr int kTileK = 16;
  static constexpr int kWarpsM = 2;  // warp tile 64 x 32: 2 x 4 warps cover 128 x 128
  using Loader = TileLoader<kTile, kTileK, kThreads>;
  static constexpr int kPitch = Loader::kPitch;
  static_assert(kPitch % 4 == 0 && kTileK % 8 == 0 && (kTileK * kPitch) % 8 == 0,
                "wmma needs 32-byte aligned fragment pointers and a pitch multiple of 4");

  struct SharedStorage {
    float a[2][kTileK][kPitch];
    float b[2][kTileK][kPitch];
  };

  // Origin of this warp's 64 x 32 tile inside the block tile.
  __device__ __forceinline__ static int warp_m0() {
    return static_cast<int>(threadIdx.x / 32) % kWarpsM * WarpMmaTf32::kFragsM * 16;
  }
  __device__ __forceinline__ static int warp_n0() {
    return static_cast<int>(threadIdx.x / 32) / kWarpsM * WarpMmaTf32::kFragsN * 16;
  }

  // Accumulates op(A)[m0 : m0+128, :] * op(B)[:, n0 : n0+128] into this warp's part of
  // mma (cleared here). Requires p.k >= 1. Ends with a __syncthreads().
  __device__ __forceinline__ static void run(const GemmParams& p, long long m0, long long n0,
                                             SharedStorage& s, WarpMmaTf32& mma) {
    const int wm0 = warp_m0();
    const int wn0 = warp_n0();
    mma.clear();
    double_buffered_k_loop<Loader, kTileK>(p, m0, n0, s, [&](const float (*a)[kPitch], const float (*b)[kPitch]) {
#pragma unroll
      for (int kk = 0; kk < kTileK; kk += WarpMmaTf32::kStepK) mma.step(&a[kk][wm0], &b[kk][wn0], kPitch);
    });
  }
};

}  // namespace taihu::gemm_cuda::detail
#endif
