// scale_c: C = beta * C for the k == 0 / alpha == 0 cases of BLAS GEMM (A and B are not
// read). beta == 0 writes zeros without reading C. Grid-stride over columns (y) and
// rows (x), so any m, n fit in one launch.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "kernel/params.hpp"

namespace taihu::gemm_cuda::detail {
namespace {

constexpr int kBlockX = 128;  // rows: consecutive threads, consecutive addresses
constexpr int kBlockY = 2;

__global__ void scale_c_kernel(long long m, long long n, float beta, float* c, long long ldc) {
  const long long row0 = static_cast<long long>(blockIdx.x) * kBlockX + threadIdx.x;
  const long long col0 = static_cast<long long>(blockIdx.y) * kBlockY + threadIdx.y;
  const long long row_step = static_cast<long long>(gridDim.x) * kBlockX;
  const long long col_step = static_cast<long long>(gridDim.y) * kBlockY;
  for (long long j = col0; j < n; j += col_step) {
    float* column = c + j * ldc;
    for (long long i = row0; i < m; i += row_step)
      column[i] = beta == 0.0f ? 0.0f : beta * column[i];
  }
}

}  // namespace

void launch_scale_c(long long m, long long n, float beta, float* c, long long ldc,
                    cudaStream_t stream) {
  const long long bx = std::min<long long>((m + kBlockX - 1) / kBlockX, 1024);
  const long long by = std::min<long long>((n + kBlockY - 1) / kBlockY, 32768);
  scale_c_kernel<<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)),
                   dim3(kBlockX, kBlockY), 0, stream>>>(m, n, beta, c, ldc);
  check_launch("taihu::gemm_cuda::sgemm", "launch of scale_c");
}

}  // namespace taihu::gemm_cuda::detail
