// The naive reference SGEMM (see taihu/gemm_cuda/sgemm_reference.hpp): one thread per
// element of C, the k products summed in double and rounded once, BLAS semantics
// (alpha == 0 reads neither A nor B, beta == 0 never reads C). Grid-stride in both
// directions, so any m, n fit in one launch. Deliberately shares no code with the fast
// kernels except the argument checks, so a bug in their tiling cannot hide here.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/arguments.hpp"
#include "common/cuda_check.hpp"
#include "kernel/params.hpp"
#include "taihu/gemm_cuda/sgemm_reference.hpp"

namespace taihu::gemm_cuda {
namespace detail {
namespace {

constexpr int kBlock = 16;

__global__ void sgemm_reference_kernel(const GemmParams p) {
  const long long step_i = static_cast<long long>(gridDim.x) * kBlock;
  const long long step_j = static_cast<long long>(gridDim.y) * kBlock;
  for (long long j = static_cast<long long>(blockIdx.y) * kBlock + threadIdx.y; j < p.n;
       j += step_j) {
    for (long long i = static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x; i < p.m;
         i += step_i) {
      double sum = 0.0;
      if (p.alpha != 0.0f) {
        for (long long l = 0; l < p.k; ++l) {
          const float a = p.trans_a ? p.a[l + i * p.lda] : p.a[i + l * p.lda];
          const float b = p.trans_b ? p.b[j + l * p.ldb] : p.b[l + j * p.ldb];
          sum += static_cast<double>(a) * static_cast<double>(b);
        }
      }
      float* c = p.c + i + j * p.ldc;
      double out = static_cast<double>(p.alpha) * sum;
      if (p.beta != 0.0f) out += static_cast<double>(p.beta) * static_cast<double>(*c);
      *c = static_cast<float>(out);
    }
  }
}

}  // namespace

void launch_sgemm_reference(const GemmParams& p, cudaStream_t stream) {
  const long long bx = std::min<long long>((p.m + kBlock - 1) / kBlock, 65535);
  const long long by = std::min<long long>((p.n + kBlock - 1) / kBlock, 65535);
  sgemm_reference_kernel<<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)),
                           dim3(kBlock, kBlock), 0, stream>>>(p);
  check_launch("taihu::gemm_cuda::sgemm_reference", "launch of sgemm_reference");
}

}  // namespace detail

void sgemm_reference(Trans ta, Trans tb, index_t m, index_t n, index_t k, float alpha,
                     const float* dA, index_t lda, const float* dB, index_t ldb, float beta,
                     float* dC, index_t ldc, Stream stream) {
  constexpr const char* kRoutine = "taihu::gemm_cuda::sgemm_reference";
  detail::check_arguments(kRoutine, ta, tb, m, n, k, lda, ldb, ldc);
  detail::check_pointers(kRoutine, m, n, k, alpha, dA, dB, dC);
  if (m == 0 || n == 0) return;
  detail::GemmParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.a = dA;
  p.lda = lda;
  p.b = dB;
  p.ldb = ldb;
  p.c = dC;
  p.ldc = ldc;
  p.trans_a = ta == Trans::yes;
  p.trans_b = tb == Trans::yes;
  detail::launch_sgemm_reference(p, stream);
}

}  // namespace taihu::gemm_cuda
