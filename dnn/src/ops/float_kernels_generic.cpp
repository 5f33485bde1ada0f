// The float elementwise kernel table compiled for the generic ISA level (see
// float_kernels.hpp; the loops live in kernels.hpp).
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"

namespace taihu::dnn::ops {

const FloatKernels& float_kernels_generic() {
  static const FloatKernels table = float_kernel_table();
  return table;
}

}  // namespace taihu::dnn::ops
