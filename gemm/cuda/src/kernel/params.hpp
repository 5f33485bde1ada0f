// GemmParams: one column-major problem as every kernel receives it (by value, in
// kernel parameter space), and the launchers the device layer calls. The device layer
// has already checked the arguments, handled m, n, k == 0 and alpha == 0, and split n
// so that gridDim.y fits (kMaxGridY tiles of kTileN columns per launch).
//
// Element (i, p) of op(A) is a[i + p * lda] when !trans_a and a[p + i * lda] when
// trans_a; element (p, j) of op(B) is b[p + j * ldb] when !trans_b, b[j + p * ldb] when
// trans_b; C(i, j) is c[i + j * ldc]. vec_x says float4 accesses are legal for X: its
// base is 16-byte aligned and ldx % 4 == 0 (the kernels still check bounds per vector).
#pragma once
#include <cuda_runtime_api.h>

namespace taihu::gemm_cuda::detail {

struct GemmParams {
  long long m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  const float* a = nullptr;
  long long lda = 1;
  const float* b = nullptr;
  long long ldb = 1;
  float* c = nullptr;
  long long ldc = 1;
  bool trans_a = false, trans_b = false;
  bool vec_a = false, vec_b = false, vec_c = false;
};

// Both fast kernels tile C in 128 x 128 blocks.
inline constexpr long long kTileM = 128;
inline constexpr long long kTileN = 128;
inline constexpr long long kMaxGridY = 65535;

// C = alpha * op(A) op(B) + beta * C, CUDA cores, 8x8 outer products per thread.
void launch_sgemm_simt_128x128x8(const GemmParams& p, cudaStream_t stream);
// Same on tensor cores in TF32 (wmma m16n16k8); only where the next function says yes.
void launch_sgemm_tf32_wmma_128x128x16(const GemmParams& p, cudaStream_t stream);
// True when the current device can run the TF32 kernel: it has an image for the device
// compiled for compute_80 or newer (a build for older architectures only has a stub).
bool sgemm_tf32_wmma_runs_on_current_device();
// C = beta * C (beta == 0 writes zeros without reading C): the k == 0 / alpha == 0 case.
void launch_scale_c(long long m, long long n, float beta, float* c, long long ldc,
                    cudaStream_t stream);
// The naive reference (double accumulation), any sizes.
void launch_sgemm_reference(const GemmParams& p, cudaStream_t stream);

}  // namespace taihu::gemm_cuda::detail
