// sgemm_simt_128x128x8: the CUDA-core (fp32) kernel. Grid: one 256-thread block per
// 128 x 128 tile of C (blockIdx.x along M, blockIdx.y along N). Composition only: main
// loop threadblock/mma_simt_pipelined.cuh (8x8 register blocking in
// thread/mma_simt_8x8.cuh), then epilogue/epilogue_simt.cuh. Any m, n, k >= 1, any
// leading dimensions and alignments (float4 paths only where legal).
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "epilogue/epilogue_simt.cuh"
#include "kernel/params.hpp"
#include "threadblock/mma_simt_pipelined.cuh"

namespace taihu::gemm_cuda::detail {
namespace {

using Mainloop = MmaSimtPipelined;
static_assert(Mainloop::kTile == kTileM && Mainloop::kTile == kTileN, "grid and tile must agree");

// 2 blocks per SM: caps the kernel at 128 registers per thread (64 accumulators).
__global__ void __launch_bounds__(Mainloop::kThreads, 2)
    sgemm_simt_128x128x8_kernel(const GemmParams p) {
  __shared__ __align__(16) Mainloop::SharedStorage shared;
  const long long m0 = static_cast<long long>(blockIdx.x) * Mainloop::kTile;
  const long long n0 = static_cast<long long>(blockIdx.y) * Mainloop::kTile;
  ThreadMma8x8 mma;
  Mainloop::run(p, m0, n0, shared, mma);
  EpilogueSimt::store(p, m0, n0, Mainloop::thread_m(), Mainloop::thread_n(), mma);
}

}  // namespace

void launch_sgemm_simt_128x128x8(const GemmParams& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((p.m + kTileM - 1) / kTileM),
                  static_cast<unsigned>((p.n + kTileN - 1) / kTileN));
  sgemm_simt_128x128x8_kernel<<<grid, Mainloop::kThreads, 0, stream>>>(p);
  check_launch("taihu::gemm_cuda::sgemm", "launch of sgemm_simt_128x128x8");
}

}  // namespace taihu::gemm_cuda::detail
