// AVX-512 1x1-convolution micro-kernel (see pointwise_kernels.hpp and
// kernels/pointwise_tile.hpp): 8 output channels (two 4-channel blocks) x 2 vectors
// of 16 pixels = 16 accumulators of the 32 zmm registers; strips of kPwPixelsAvx512.
#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/pointwise_tile.hpp"

namespace taihu::dnn::conv {

void pw_fwd_avx512(const PwFwdArgs& a) { kernels::pw_fwd_simd<kernels::VecAvx512, 2, kPwPixelsAvx512 / 16>(a); }

}  // namespace taihu::dnn::conv
