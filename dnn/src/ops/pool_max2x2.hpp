// MAX pooling with a 2x2 window, stride 2 and no padding (LeNet's, VGG's and most
// CNNs' pools), chosen by pooling_forward/backward<float> for that geometry: windows
// never overlap, so each input belongs to exactly one (the last row or column of an
// odd plane to a clipped window, as Caffe's ceil rounding gives). One kernel pair per
// ISA (pool_max2x2_<isa>.cpp), chosen once per process (TAIHU_ISA,
// "dispatch: dnn max pool 2x2 -> avx512" under TAIHU_VERBOSE=1); the AVX2 and AVX-512
// kernels share their loops (pool_max2x2_wide.hpp).
// Contract: bit for bit the values and argmax masks of pooling.cpp's generic loops
// (taps visited row then column, strict >, starting from the lowest float with mask
// -1, so ties, -0.0 and NaNs give the same results); backward writes 0 + dy at the
// window's argmax and +0 elsewhere, the value the generic zero-fill-then-add gives,
// for a mask written by forward.
#pragma once
#include <cstdint>

#include "taihu/dnn/pooling.hpp"

namespace taihu::dnn::ops {

// True for the geometry the kernels handle: MAX, 2x2, stride 2, no padding.
bool pool_max2x2_applies(const PoolingShape& s);

struct PoolMax2x2Kernels {
  // One h x w plane to its ceil(h/2) x ceil(w/2) outputs; m (argmax within the input
  // plane) may be null.
  void (*forward)(index_t h, index_t w, const float* x, float* y, std::int32_t* m);
  // dx (h x w, overwritten) from dy and forward's mask m.
  void (*backward)(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx);
};

const PoolMax2x2Kernels& pool_max2x2_kernels();  // the one for arch::active_isa()
const PoolMax2x2Kernels& pool_max2x2_generic();
const PoolMax2x2Kernels& pool_max2x2_avx2();
const PoolMax2x2Kernels& pool_max2x2_avx512();

}  // namespace taihu::dnn::ops
