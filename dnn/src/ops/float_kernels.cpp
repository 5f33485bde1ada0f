// Chooses the float elementwise kernel table once per process (taihu::arch dispatch).
#include "ops/float_kernels.hpp"

#include "taihu/arch/dispatch.hpp"

namespace taihu::dnn::ops {

const FloatKernels& float_kernels() {
  static const arch::ImplementationList<const FloatKernels* (*)()> list(
      "dnn elementwise",
      {{"avx512", arch::Isa::avx512, [] { return &float_kernels_avx512(); }},
       {"avx2", arch::Isa::avx2, [] { return &float_kernels_avx2(); }},
       {"generic", arch::Isa::generic, [] { return &float_kernels_generic(); }}});
  static const FloatKernels* chosen = list.chosen().impl();
  return *chosen;
}

}  // namespace taihu::dnn::ops
