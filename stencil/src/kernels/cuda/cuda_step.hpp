// The CUDA time step behind the Propagator (private). Fields stay on the host between
// steps in this path (boundaries and sources run there), so each step uploads the two
// time levels and downloads the updated slab: correct on any decomposition, but
// PCIe-bound. cuda_bench_steps() runs many steps device-resident to measure the kernel.
#pragma once
#include <memory>

#include "kernels/kernel_api.hpp"

namespace taihu::stencil {

class CudaStepper {
 public:
  virtual ~CudaStepper() = default;
  virtual void step(const kernels::StepArgs& args, long j0, long j1) = 0;
  virtual void sync(const kernels::StepArgs& args) = 0;  // results back in args' fields
};

// Throws taihu::Error when taihu was built without CUDA or no GPU is present.
std::unique_ptr<CudaStepper> make_cuda_stepper(const Layout& layout, Physics physics, int dim,
                                               const kernels::FdWeights& fd);

// True when the CUDA kernels are compiled in and a device is present.
bool cuda_available();

}  // namespace taihu::stencil
