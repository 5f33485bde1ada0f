// The float elementwise kernel table compiled for the generic ISA level (see
// float_kernels.hpp; the loops live in kernels.hpp).
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"

namespace taihu::dnn::ops {

const FloatKernels& float_kernels_generic() {
  static const FloatKernels table{&k_relu_fwd<float>,      &k_relu_bwd<float>,
                                  &k_sigmoid_fwd<float>,   &k_sigmoid_bwd<float>,
                                  &k_tanh_fwd<float>,      &k_tanh_bwd<float>,
                                  &k_affine<float>,        &k_axpby<float>,
                                  &k_mul<float>,           &k_max_first<float>,
                                  &k_max_next<float>,      &k_sum<float>,
                                  &k_dot<float>,           &k_centered_sumsq<float>,
                                  &k_softmax_slice<float>, &k_softmax_bwd_slice<float>,
                                  &k_dropout<float>,       &k_masked_scale<float>,
                                  &k_pow_minus_075<float>};
  return table;
}

}  // namespace taihu::dnn::ops
