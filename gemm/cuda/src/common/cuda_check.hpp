// check_cuda(): turns a CUDA runtime error into taihu::Error naming the routine and
// the step that failed (launch, attribute query, ...). Host code only.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "taihu/arch/error.hpp"

namespace taihu::gemm_cuda::detail {

inline void check_cuda(cudaError_t err, const char* routine, const char* step) {
  if (err == cudaSuccess) return;
  throw taihu::Error(std::string(routine) + ": CUDA error during " + step + ": " +
                     cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

// After a kernel launch: configuration errors (and sticky errors from earlier work)
// are reported here; errors inside the kernel surface at the caller's next sync.
inline void check_launch(const char* routine, const char* kernel) {
  check_cuda(cudaGetLastError(), routine, kernel);
}

}  // namespace taihu::gemm_cuda::detail
