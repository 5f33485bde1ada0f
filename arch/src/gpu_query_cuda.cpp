// CUDA device query through the CUDA runtime (built only with TAIHU_HAVE_CUDA).
#include <cuda_runtime_api.h>

#include <string>

#include "taihu/arch/gpu.hpp"

namespace taihu::arch {

GpuQuery query_gpus() {
  GpuQuery q;
  q.built_with_cuda = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    q.status = std::string("no CUDA device (") +
               (err != cudaSuccess ? cudaGetErrorString(err) : "driver reports 0 devices") + ")";
    return q;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    GpuInfo g;
    g.index = i;
    g.name = p.name;
    g.multiprocessors = p.multiProcessorCount;
    g.memory_bytes = p.totalGlobalMem;
    g.compute_major = p.major;
    g.compute_minor = p.minor;
    g.memory_bus_bits = p.memoryBusWidth;
    int clock_khz = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, i) == cudaSuccess)
      g.memory_clock_ghz = 2.0 * clock_khz / 1e6;  // double data rate
    g.shared_memory_per_block = p.sharedMemPerBlock;
    g.registers_per_block = p.regsPerBlock;
    g.warp_size = p.warpSize;
    g.memory_pitch = p.memPitch;
    g.max_threads_per_block = p.maxThreadsPerBlock;
    for (int d = 0; d < 3; ++d) g.max_block_dim[d] = p.maxThreadsDim[d], g.max_grid_dim[d] = p.maxGridSize[d];
    g.constant_memory = p.totalConstMem;
    g.texture_alignment = p.textureAlignment;
    // Fields CUDA 13 dropped from cudaDeviceProp: read as attributes.
    int value = 0;
    if (cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, i) == cudaSuccess) g.clock_rate_khz = value;
    if (cudaDeviceGetAttribute(&value, cudaDevAttrGpuOverlap, i) == cudaSuccess) g.copy_compute_overlap = value != 0;
    if (cudaDeviceGetAttribute(&value, cudaDevAttrKernelExecTimeout, i) == cudaSuccess) g.kernel_timeout = value != 0;
    q.devices.push_back(g);
  }
  q.status = std::to_string(q.devices.size()) + " device(s)";
  return q;
}

}  // namespace taihu::arch
