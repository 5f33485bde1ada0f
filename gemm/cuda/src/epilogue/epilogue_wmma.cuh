// EpilogueWmma: writes a warp's 64 x 32 tile of wmma accumulators (WarpMmaTf32) into C
// as alpha * acc + beta * C. wmma accumulators have no documented element-to-lane
// mapping, so each fragment is staged through `stage`, 16 x 16 floats of shared memory
// private to the warp (32-byte aligned), then lane l writes row l % 16 of columns
// l / 16, l / 16 + 2, ..., so each store instruction writes two 64-byte column pieces
// and the shared reads are conflict-free. Bounds checked per element (store1).
#pragma once
#include <cuda_runtime.h>

#include "epilogue/linear_combination.cuh"
#include "kernel/params.hpp"
#include "warp/mma_tf32_wmma.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace taihu::gemm_cuda::detail {

struct EpilogueWmma {
  static constexpr int kStageFloats = 16 * 16;

  // wm0, wn0: origin in C of the warp's 64 x 32 tile.
  __device__ __forceinline__ static void store(const GemmParams& p, long long wm0, long long wn0,
                                               const WarpMmaTf32& mma, float* stage) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int r = lane % 16;
    const int c0 = lane / 16;
#pragma unroll
    for (int i = 0; i < WarpMmaTf32::kFragsM; ++i) {
#pragma unroll
      for (int j = 0; j < WarpMmaTf32::kFragsN; ++j) {
        nvcuda::wmma::store_matrix_sync(stage, mma.acc[i][j], 16, nvcuda::wmma::mem_col_major);
        __syncwarp();  // the fragment is in stage for every lane
#pragma unroll
        for (int cc = 0; cc < 8; ++cc) {
          const int c = c0 + 2 * cc;
          store1(p, wm0 + i * 16 + r, wn0 + j * 16 + c, stage[r + c * 16]);
        }
        __syncwarp();  // every lane has read stage before the next fragment overwrites it
      }
    }
  }
};

}  // namespace taihu::gemm_cuda::detail
#endif
