// Built when CUDA is absent: the CUDA kernel kind reports a clear error.
#include "kernels/cuda/cuda_step.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/cuda.hpp"

namespace taihu::stencil {

std::unique_ptr<CudaStepper> make_cuda_stepper(const Layout&, Physics, int, const kernels::FdWeights&) {
  throw Error("taihu: kernel = cuda, but taihu was built without CUDA (nvcc not found at configure time)");
}

bool cuda_available() { return false; }
bool cuda_device_available() { return false; }

double cuda_copy_gbps() { throw Error("taihu: cuda_copy_gbps: taihu was built without CUDA"); }

double cuda_time_acoustic3d(long, long, long, int, int) {
  throw Error("taihu: cuda_time_acoustic3d: taihu was built without CUDA");
}

}  // namespace taihu::stencil
