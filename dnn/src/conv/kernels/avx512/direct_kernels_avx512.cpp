// AVX-512 direct-convolution kernels (see direct_kernels.hpp): backward-weights as 16
// output channels (one zmm of dY^T) x up to 6 weight columns, two accumulator sets
// (kernels/direct_bwdw_tile.hpp); up to 8 channels AVX2's. Forward and the first-layer kernel stay AVX2's.
#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/direct_bwdw_tile.hpp"

namespace taihu::dnn::conv {

// Up to 8 channels dY^T may hold only 8 floats per pixel (kpad 8): AVX2's one-ymm tile.
void direct_bwdw_avx512(const DirectBwdwArgs& a) {
  if (a.channels <= 8) {
    direct_bwdw_avx2(a);
    return;
  }
  kernels::direct_bwdw_simd<kernels::VecAvx512>(a);
}

}  // namespace taihu::dnn::conv
