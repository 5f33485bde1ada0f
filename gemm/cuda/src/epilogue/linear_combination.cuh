// Epilogue: writes D = alpha * accumulator + beta * C into C with bounds checks.
// beta == 0 never reads C (so NaN/Inf in C do not leak), as BLAS requires. store4()
// writes 4 consecutive rows of one column with a float4 when C allows it (vec_c: base
// 16-byte aligned, ldc % 4 == 0, row multiple of 4) and the 4 rows are inside C, and
// element by element otherwise; store1() writes one element.
#pragma once
#include <cuda_runtime.h>

#include "kernel/params.hpp"

namespace taihu::gemm_cuda::detail {

__device__ __forceinline__ float combine(const GemmParams& p, float acc, const float* c) {
  const float scaled = p.alpha * acc;
  return p.beta == 0.0f ? scaled : fmaf(p.beta, *c, scaled);
}

__device__ __forceinline__ void store1(const GemmParams& p, long long row, long long col,
                                       float acc) {
  if (row >= p.m || col >= p.n) return;
  float* dst = p.c + col * p.ldc + row;
  *dst = combine(p, acc, dst);
}

// row must be a multiple of 4 (true for every caller: tile origins are multiples of 128).
__device__ __forceinline__ void store4(const GemmParams& p, long long row, long long col,
                                       float4 acc) {
  if (col >= p.n || row >= p.m) return;
  float* dst = p.c + col * p.ldc + row;
  if (p.vec_c && row + 3 < p.m) {
    float4 out = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z, p.alpha * acc.w);
    if (p.beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(dst);
      out.x = fmaf(p.beta, old.x, out.x);
      out.y = fmaf(p.beta, old.y, out.y);
      out.z = fmaf(p.beta, old.z, out.z);
      out.w = fmaf(p.beta, old.w, out.w);
    }
    *reinterpret_cast<float4*>(dst) = out;
    return;
  }
  const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int q = 0; q < 4; ++q)
    if (row + q < p.m) dst[q] = combine(p, v[q], dst + q);
}

}  // namespace taihu::gemm_cuda::detail
