// Geometry test and per-ISA choice of the 2x2 stride-2 MAX pooling kernels
// (pool_max2x2.hpp).
#include "ops/pool_max2x2.hpp"

#include "taihu/arch/dispatch.hpp"

namespace taihu::dnn::ops {

bool pool_max2x2_applies(const PoolingShape& s) {
  return s.method == PoolMethod::max && s.kernel_h == 2 && s.kernel_w == 2 && s.stride_h == 2 && s.stride_w == 2 &&
         s.pad_h == 0 && s.pad_w == 0;
}

const PoolMax2x2Kernels& pool_max2x2_kernels() {
  static const arch::ImplementationList<const PoolMax2x2Kernels* (*)()> list(
      "dnn max pool 2x2", {{"avx512", arch::Isa::avx512, [] { return &pool_max2x2_avx512(); }},
                           {"avx2", arch::Isa::avx2, [] { return &pool_max2x2_avx2(); }},
                           {"generic", arch::Isa::generic, [] { return &pool_max2x2_generic(); }}});
  static const PoolMax2x2Kernels* chosen = list.chosen().impl();
  return *chosen;
}

}  // namespace taihu::dnn::ops
