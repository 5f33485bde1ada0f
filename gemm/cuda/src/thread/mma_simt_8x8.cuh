// ThreadMma8x8: register blocking for the CUDA-core kernel. Each thread owns an 8 x 8
// block of C in 64 registers and, per k step, reads 8 values of op(A) and 8 of op(B)
// from shared memory and does 64 FMAs (an outer product): 4 FMAs per shared load.
//
// Within the 128 x 128 block tile, thread (tm, tn) (tm, tn in 0..15) owns rows
// {tm*4 .. tm*4+3} and {64 + tm*4 .. 64 + tm*4+3}, columns likewise with tn. Split
// halves keep every shared read a float4 and conflict-free: 8 consecutive tm read 32
// consecutive floats; threads sharing tn read the same address (broadcast).
#pragma once
#include <cuda_runtime.h>

namespace taihu::gemm_cuda::detail {

struct ThreadMma8x8 {
  static constexpr int kHalf = 64;  // offset of the second group of 4 rows/columns

  float acc[8][8];

  // Offset inside the block tile of this thread's row (or column) i, i in 0..7.
  __device__ __forceinline__ static int offset(int i, int t) {
    return (i / 4) * kHalf + t * 4 + (i % 4);
  }

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  }

  // One k step: a_row = op(A) tile row k (128 floats along M), b_row likewise along N.
  __device__ __forceinline__ void step(const float* a_row, const float* b_row, int tm, int tn) {
    const float4 a0 = *reinterpret_cast<const float4*>(a_row + tm * 4);
    const float4 a1 = *reinterpret_cast<const float4*>(a_row + kHalf + tm * 4);
    const float4 b0 = *reinterpret_cast<const float4*>(b_row + tn * 4);
    const float4 b1 = *reinterpret_cast<const float4*>(b_row + kHalf + tn * 4);
    const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
};

}  // namespace taihu::gemm_cuda::detail
