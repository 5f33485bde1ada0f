// Geometry test and per-ISA choice of the pooling kernels (pool_kernels.hpp).
#include "ops/pool_kernels.hpp"

#include "taihu/arch/dispatch.hpp"

namespace taihu::dnn::ops {

bool pool_max2x2_applies(const PoolingShape& s) {
  return s.method == PoolMethod::max && s.kernel_h == 2 && s.kernel_w == 2 && s.stride_h == 2 && s.stride_w == 2 &&
         s.pad_h == 0 && s.pad_w == 0;
}

bool ave_lanes_applies(const PoolingShape& s) {
  const index_t oh = s.out_h(), ow = s.out_w();
  return s.method == PoolMethod::average && ow <= 16 && s.height * s.width <= kAveLanesMaxPlane &&
         oh * ow <= kAveLanesMaxPlane;
}

const PoolKernels& pool_kernels() {
  static const arch::ImplementationList<const PoolKernels* (*)()> list(
      "dnn pooling kernels", {{"avx512", arch::Isa::avx512, [] { return &pool_kernels_avx512(); }},
                              {"avx2", arch::Isa::avx2, [] { return &pool_kernels_avx2(); }},
                              {"generic", arch::Isa::generic, [] { return &pool_kernels_generic(); }}});
  static const PoolKernels* chosen = list.chosen().impl();
  return *chosen;
}

}  // namespace taihu::dnn::ops
