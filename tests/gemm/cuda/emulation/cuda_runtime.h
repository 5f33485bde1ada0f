// Host stand-in for <cuda_runtime.h>, used only by test_sgemm_cuda_emulated: just
// enough CUDA for taihu's gemm_cuda device headers to compile as C++ and run with one
// std::thread per CUDA thread. threadIdx/blockIdx are thread-local; __syncthreads and
// __syncwarp are std::barrier waits set up by the test.
#pragma once
#include <math.h>

#include <cstdint>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

struct EmulatedIndex {
  unsigned x = 0, y = 0, z = 0;
};
extern thread_local EmulatedIndex threadIdx, blockIdx;

inline float __ldg(const float* p) { return *p; }
// A float4 load from an address that is not 16-byte aligned faults on a GPU: here too.
inline float4 __ldg(const float4* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) __builtin_trap();
  return *p;
}
void __syncthreads();
void __syncwarp();
