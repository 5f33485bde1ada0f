// AVX-512 direct-convolution kernels (see direct_kernels.hpp): backward-weights as up
// to 64 output channels (four zmm of dY^T) x up to 6 weight columns
// (kernels/direct_bwdw_tile.hpp), up to 8 channels AVX2's; the first-layer forward as 32
// output channels in two zmm x 6 or 12 pixels (kernels/direct_ocv_tile.hpp). The other
// forward tiles stay AVX2's.
#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/direct_bwdw_tile.hpp"
#include "conv/kernels/direct_ocv_tile.hpp"

namespace taihu::dnn::conv {

// Up to 8 channels dY^T may hold only 8 floats per pixel (kpad 8): AVX2's one-ymm tile.
void direct_bwdw_avx512(const DirectBwdwArgs& a) {
  if (a.channels <= 8) {
    direct_bwdw_avx2(a);
    return;
  }
  kernels::direct_bwdw_simd<kernels::VecAvx512>(a);
}

// 32 output channels (nb 4): 2 zmm x 6 or 12 pixels (kernels/direct_ocv_tile.hpp) over
// the whole groups of 3-pixel tiles; fewer channels, and the tiles left over, run
// AVX2's tiles.
void direct_ocv_avx512(const DirectOcvArgs& a) {
  // Wide kernels (7x7, 11x11) take 12 pixels (24 accumulators): AlexNet conv1 +5-10%
  // over 6 in the A/B, ResNet-50 conv1 equal; CIFAR-10 conv1 (5x5) 8% slower with 12.
  // The 6-pixel groups' FMAs broadcast from memory (FM 2, as oneDNN's kernel does:
  // CIFAR-10 conv1 forward +4-5% on a Zen 4 core, where a separate vbroadcastss per
  // pixel left the 12-accumulator loop short of the FMA rate; the 7x7 / 11x11 groups
  // of 12 measured equal either way and keep the register broadcast).
  const int done = a.nb != 4        ? 0
                   : a.kw_run >= 7 ? kernels::ocv32<kernels::VecAvx512, 12>(a)
                                   : kernels::ocv32<kernels::VecAvx512, 6, 2>(a);
  if (done == a.tiles) return;
  DirectOcvArgs rest = a;
  const std::int64_t p0 = static_cast<std::int64_t>(done) * ocv_pixels(a.nb);
  rest.x_off += p0;
  if (rest.row_span) rest.row_span += 2 * p0;
  if (rest.col_span) rest.col_span += 2 * p0;
  rest.acc += p0 * 8;
  rest.tiles = a.tiles - done;
  direct_ocv_avx2(rest);
}

}  // namespace taihu::dnn::conv
