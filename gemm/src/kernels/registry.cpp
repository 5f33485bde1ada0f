// The ordered kernel list: best ISA first, portable reference last.
#include "taihu/arch/dispatch.hpp"
#include "kernels/microkernel.hpp"

namespace taihu::gemm::kernels {
namespace {

const arch::ImplementationList<const KernelSet*>& kernel_list() {
  static const arch::ImplementationList<const KernelSet*> list(
      "gemm kernels", {{"avx512 (sgemm 32x12, dgemm 16x12)", arch::Isa::avx512, &kAvx512Kernels},
                       {"avx2 (sgemm 16x6, dgemm 8x6)", arch::Isa::avx2, &kAvx2Kernels},
                       {"generic (sgemm 8x4, dgemm 8x4)", arch::Isa::generic, &kGenericKernels}});
  return list;
}

}  // namespace

const KernelSet& active_kernels() { return *kernel_list().chosen().impl; }
const KernelSet& kernels_for(arch::Isa level) { return *kernel_list().best_for(level).impl; }
const char* active_kernels_name() { return kernel_list().chosen().name.c_str(); }

}  // namespace taihu::gemm::kernels
