// EpilogueSimt: writes a thread's 8 x 8 accumulator block (ThreadMma8x8 layout) into C
// as alpha * acc + beta * C. Per column j the thread writes its two groups of 4 rows
// with store4 (one float4 each where legal); the 16 threads of a warp that share tn
// write 64 consecutive rows of one column (256 contiguous bytes) per instruction.
#pragma once
#include <cuda_runtime.h>

#include "epilogue/linear_combination.cuh"
#include "kernel/params.hpp"
#include "thread/mma_simt_8x8.cuh"

namespace taihu::gemm_cuda::detail {

struct EpilogueSimt {
  // m0, n0: origin of the block's 128 x 128 tile; tm, tn as in ThreadMma8x8.
  __device__ __forceinline__ static void store(const GemmParams& p, long long m0, long long n0,
                                               int tm, int tn, const ThreadMma8x8& mma) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const long long col = n0 + ThreadMma8x8::offset(j, tn);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long row = m0 + ThreadMma8x8::offset(h * 4, tm);
        const float4 v = make_float4(mma.acc[h * 4 + 0][j], mma.acc[h * 4 + 1][j],
                                     mma.acc[h * 4 + 2][j], mma.acc[h * 4 + 3][j]);
        store4(p, row, col, v);
      }
    }
  }
};

}  // namespace taihu::gemm_cuda::detail
