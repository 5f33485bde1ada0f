// taihu::gemm_cuda: single precision GEMM on an NVIDIA GPU, on DEVICE pointers,
//   C = alpha * op(A) * op(B) + beta * C,   op(X) = X or X^T,   all column major,
// with the same BLAS semantics as taihu::gemm::sgemm (taihu/gemm/gemm.hpp):
//   - m or n == 0 returns at once; k == 0 or alpha == 0 only scales C by beta and never
//     reads A or B; beta == 0 never reads C (NaN/Inf already in C do not leak);
//   - invalid arguments (negative sizes, lda < max(1, rows of A as stored), likewise
//     ldb, ldc, null pointers that would be used) throw taihu::Error naming the argument;
//   - CUDA runtime failures (bad device pointers, no device) throw taihu::Error too.
// The call is asynchronous with respect to the host: the work is queued on `stream`
// (default: the legacy default stream) and the caller synchronises as usual.
//
// CudaMath::tf32 runs the product on the tensor cores in TF32 (inputs rounded to a
// 10-bit mantissa, fp32 accumulation; ~1e-3 relative error with unit-scale data) on
// devices of compute capability 8.0 or newer, and falls back to fp32 on older ones (or
// when taihu was built without sm_80+ code, see CMAKE_CUDA_ARCHITECTURES).
// TAIHU_VERBOSE=1 logs which kernel ran and why.
#pragma once
#include "taihu/gemm/gemm.hpp"  // Trans, index_t (no link dependency on taihu_gemm)

// Declared here so this header needs no CUDA include path: CUstream_st* is exactly
// cudaStream_t (and CUstream), so callers pass their cudaStream_t unchanged.
struct CUstream_st;

namespace taihu::gemm_cuda {

using taihu::gemm::index_t;
using taihu::gemm::Trans;
using Stream = CUstream_st*;  // == cudaStream_t

enum class CudaMath {
  fp32,  // CUDA cores, IEEE single precision throughout
  tf32,  // tensor cores (wmma m16n16k8 TF32), fp32 accumulation; needs sm_80+
};

// True when the CUDA runtime sees at least one device (false without a driver/GPU).
bool device_available();

// C (m x n, ldc) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C on device pointers.
// A is m x k (lda >= max(1, m)) when ta == Trans::no, k x m (lda >= max(1, k)) when
// ta == Trans::yes; B likewise with k x n / n x k and ldb.
void sgemm(Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha, const float* dA,
           index_t lda, const float* dB, index_t ldb, float beta, float* dC, index_t ldc,
           Stream stream = nullptr, CudaMath math = CudaMath::fp32);

}  // namespace taihu::gemm_cuda
