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
};

struct GpuQuery {
  bool built_with_cuda = false;
  std::string status;  // "2 devices", "no CUDA device (driver said: ...)", "built without CUDA"
  std::vector<GpuInfo> devices;
};

GpuQuery query_gpus();

}  // namespace taihu::arch
