// sgemm_tf32_wmma_128x128x16: the tensor-core (TF32) kernel for sm_80 and newer. Grid
// as the SIMT kernel (one 256-thread block per 128 x 128 tile of C). Composition only:
// main loop threadblock/mma_tf32_pipelined.cuh (warp math in warp/mma_tf32_wmma.cuh),
// then epilogue/epilogue_wmma.cuh, staging through the operand shared memory the main
// loop no longer needs. The device layer launches it only where
// sgemm_tf32_wmma_runs_on_current_device() says so.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "epilogue/epilogue_wmma.cuh"
#include "kernel/params.hpp"
#include "threadblock/mma_tf32_pipelined.cuh"

namespace taihu::gemm_cuda::detail {
namespace {

constexpr int kThreads = 256;

// 2 blocks per SM (16 warps) to hide shared-memory latency: caps registers at 128.
__global__ void __launch_bounds__(kThreads, 2)
    sgemm_tf32_wmma_128x128x16_kernel(const GemmParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using Mainloop = MmaTf32Pipelined;
  static_assert(
      Mainloop::kThreads == kThreads && Mainloop::kTile == kTileM && Mainloop::kTile == kTileN,
      "launch shape and tile must agree");
  static_assert(kThreads / 32 * EpilogueWmma::kStageFloats <=
                    sizeof(Mainloop::SharedStorage::a) / sizeof(float),
                "epilogue staging must fit in the A buffers");
  __shared__ __align__(128) Mainloop::SharedStorage shared;
  const long long m0 = static_cast<long long>(blockIdx.x) * Mainloop::kTile;
  const long long n0 = static_cast<long long>(blockIdx.y) * Mainloop::kTile;
  WarpMmaTf32 mma;
  Mainloop::run(p, m0, n0, shared, mma);  // ends with __syncthreads(): shared is free
  // Each warp stages through its own 1 KiB (32-byte aligned) of the A buffers.
  float* stage = &shared.a[0][0][0] + (threadIdx.x / 32) * EpilogueWmma::kStageFloats;
  EpilogueWmma::store(p, m0 + Mainloop::warp_m0(), n0 + Mainloop::warp_n0(), mma, stage);
#elif defined(__CUDA_ARCH__)
  __trap();  // never launched from an image built below sm_80 (see the device layer)
#endif
}

}  // namespace

bool sgemm_tf32_wmma_runs_on_current_device() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, sgemm_tf32_wmma_128x128x16_kernel) != cudaSuccess) {
    (void)cudaGetLastError();  // no image for this device: not an error, just no TF32
    return false;
  }
  // The image the device would run was compiled for compute_80 or newer, so it holds
  // the tensor-core body and not the sm < 80 stub.
  return attr.ptxVersion >= 80;
}

void launch_sgemm_tf32_wmma_128x128x16(const GemmParams& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((p.m + kTileM - 1) / kTileM),
                  static_cast<unsigned>((p.n + kTileN - 1) / kTileN));
  sgemm_tf32_wmma_128x128x16_kernel<<<grid, kThreads, 0, stream>>>(p);
  check_launch("taihu::gemm_cuda::sgemm", "launch of sgemm_tf32_wmma_128x128x16");
}

}  // namespace taihu::gemm_cuda::detail
