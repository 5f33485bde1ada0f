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
    q.devices.push_back(g);
  }
  q.status = std::to_string(q.devices.size()) + " device(s)";
  return q;
}

}  // namespace taihu::arch
