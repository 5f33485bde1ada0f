// WarpMmaTf32: warp-level tensor-core math for the TF32 kernel. One warp owns a
// 64 x 32 tile of C as 4 x 2 wmma accumulator fragments of 16 x 16 (fp32) and, per
// 8-deep k step, loads 4 fragments of op(A) (16 x 8, column-major in shared memory)
// and 2 of op(B) (8 x 16, row-major in shared memory), rounds them to TF32 (round to
// nearest, as cuBLAS does; the hardware would otherwise truncate) and issues 8
// m16n16k8 mma_sync.
//
// Contract for the pointers: 32-byte aligned, pitch a multiple of 4 floats (wmma's
// rules); the block tile layouts in threadblock/mma_tf32_pipelined.cuh satisfy both.
// Only compiled for sm_80 and newer (TF32 wmma does not exist before Ampere).
#pragma once
#include <cuda_runtime.h>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#include <mma.h>

namespace taihu::gemm_cuda::detail {

struct WarpMmaTf32 {
  static constexpr int kFragsM = 4;  // 4 x 16 = 64 rows
  static constexpr int kFragsN = 2;  // 2 x 16 = 32 columns
  static constexpr int kStepK = 8;

  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 8, float> acc[kFragsM][kFragsN];

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) nvcuda::wmma::fill_fragment(acc[i][j], 0.0f);
  }

  // a: op(A)(warp row 0, k 0) with element (i, p) at a[i + p * pitch];
  // b: op(B)(k 0, warp column 0) with element (p, j) at b[p * pitch + j].
  __device__ __forceinline__ void step(const float* a, const float* b, int pitch) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fa[kFragsM];
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[kFragsN];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
      wmma::load_matrix_sync(fa[i], a + i * 16, static_cast<unsigned>(pitch));
#pragma unroll
      for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
    }
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::load_matrix_sync(fb[j], b + j * 16, static_cast<unsigned>(pitch));
#pragma unroll
      for (int e = 0; e < fb[j].num_elements; ++e) fb[j].x[e] = wmma::__float_to_tf32(fb[j].x[e]);
    }
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
  }
};

}  // namespace taihu::gemm_cuda::detail
#endif
