// CUDA devices as taihu sees them. Empty when taihu was built without CUDA or when
// no device/driver is present (that is not an error: CUDA paths then stay off).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace taihu::arch {

struct GpuInfo {
  int index = 0;
  std::string name;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int memory_bus_bits = 0;
  double memory_clock_ghz = 0.0;  // effective; with bus width gives the datasheet bandwidth
  // The rest of what Caffe's device_query prints (cudaDeviceProp / device attributes).
  std::size_t shared_memory_per_block = 0;
  int registers_per_block = 0;
  int warp_size = 0;
  std::size_t memory_pitch = 0;
  int max_threads_per_block = 0;
  int max_block_dim[3] = {0, 0, 0};
  int max_grid_dim[3] = {0, 0, 0};
  int clock_rate_khz = 0;
  std::size_t constant_memory = 0;
  std::size_t texture_alignment = 0;
  bool copy_compute_overlap = false;
  bool kernel_timeout = false;
};

struct GpuQuery {
  bool built_with_cuda = false;
  std::string status;  // "2 devices", "no CUDA device (driver said: ...)", "built without CUDA"
  std::vector<GpuInfo> devices;
};

GpuQuery query_gpus();

}  // namespace taihu::arch
