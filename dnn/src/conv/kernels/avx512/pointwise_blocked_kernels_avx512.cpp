// AVX-512 1x1 kernels on nChw16c activations (see pointwise_blocked_kernels.hpp): the
// width-generic tiles of kernels/pointwise_blocked_tile.hpp with 16-lane vectors,
// forward 4 output blocks (64 channels) x 6 pixels, backward-weights the input-lanes
// tile, 3 input blocks (48 channels) x 8 output channels (24 of the 32 zmm accumulate
// in both).
#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/pointwise_blocked_tile.hpp"

namespace taihu::dnn::conv {

void pwb16_fwd_avx512(const PwbFwdArgs& a) {
  kernels::pwb_fwd_simd<kernels::VecAvx512, kPwb16Blocks, kPwb16Pixels>(a);
}

void pwb16_bwdw_x_avx512(const PwbBwdwXArgs& a) {
  kernels::pwb_bwdw_x_simd<kernels::VecAvx512, kPwb16XVecs, kPwb16XRows>(a);
}

}  // namespace taihu::dnn::conv
