// AVX-512 weights-lanes direct convolution tile (see weight_lanes_kernels.hpp): the
// width-generic tile of kernels/weight_lanes_tile.hpp with 16-lane vectors, 2 vectors of
// output channels x up to 2 rows x 7 columns of output pixels (28 of the 32 zmm).
#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/weight_lanes_tile.hpp"

namespace taihu::dnn::conv {

namespace {

// The input broadcast as one vbroadcastss from memory, opaque to the optimiser: with
// _mm512_set1_ps GCC 12 sees that tap s + 1 of column j reads tap s of column j + 1 and
// carries the scalars across the tap loop (predictive commoning), spilling them to the
// stack with register moves around every step (res5 3x3: 86 GFLOP/s).
struct VecAvx512Bcast : kernels::VecAvx512 {
  static inline Reg bcast(const float* p) {
    Reg r;
    asm("vbroadcastss %1, %0" : "=v"(r) : "m"(*p));
    return r;
  }
};

}  // namespace

void wl_fwd_avx512(const WlFwdArgs& a) { kernels::wl_fwd_simd<VecAvx512Bcast>(a); }

}  // namespace taihu::dnn::conv
