// Device query for builds without CUDA.
#include "taihu/arch/gpu.hpp"

namespace taihu::arch {

GpuQuery query_gpus() {
  GpuQuery q;
  q.status = "built without CUDA (configure with TAIHU_WITH_CUDA=ON where nvcc exists)";
  return q;
}

}  // namespace taihu::arch
