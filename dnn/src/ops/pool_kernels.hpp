// The per-ISA pooling kernels that pooling_forward/backward<float> hand their common
// geometries to, one table per ISA (pool_kernels_<isa>.cpp), chosen once per process
// (TAIHU_ISA; "dispatch: dnn pooling kernels -> avx512" under TAIHU_VERBOSE=1). The
// AVX2 and AVX-512 kernels share their loops (pool_wide.hpp, over a vector trait); the
// generic ones run the same loops four windows per SSE2 step (pool_sse.hpp).
//  - MAX 2x2, stride 2, no padding (LeNet's, VGG's and most CNNs' pools): windows never
//    overlap, so each input belongs to exactly one (the last row or column of an odd
//    plane to a clipped window, as Caffe's ceil rounding gives).
//  - One output row of a stride-2 pool of kernel width 2 or 3 without horizontal
//    padding (CIFAR-10 quick's, AlexNet's and ResNet's 3x3 stride-2 pools), MAX with its
//    mask or AVE.
//  - AVE of planes with short rows, forward and backward, eight planes at a time
//    (pool_lanes.hpp).
// Contract: bit for bit the values and argmax masks of pooling.cpp's generic loops
// (taps visited row then column, strict >, starting from the lowest float with mask
// -1, so ties, -0.0 and NaNs give the same results; AVE sums in the same order divided
// by the same float product); the 2x2 backward writes 0 + dy at the window's argmax and
// +0 elsewhere, the value the generic zero-fill-then-add gives, for a mask written by
// forward.
#pragma once
#include <algorithm>
#include <cstdint>

#include "taihu/dnn/pooling.hpp"

namespace taihu::dnn::ops {

// True for the geometry of the 2x2 kernels: MAX, 2x2, stride 2, no padding.
bool pool_max2x2_applies(const PoolingShape& s);

// Planes per call of the AVE lanes kernels (one per vector lane), and the largest plane
// (inputs, and outputs) they take: their two 8-plane scratches (64 KiB) live on the stack.
inline constexpr index_t kAveLanesPlanes = 8;
inline constexpr index_t kAveLanesMaxPlane = 1024;

// AVE window (ph, pw): its rows [*hs, *he) and columns [*ws, *we) inside the plane, and
// its divisor, rows x columns of the window clipped to the padded plane (col_size[pw]:
// the columns), as the generic loops and the lanes kernels both divide.
template <class T>
T ave_window(const PoolingShape& s, index_t ph, index_t pw, const T* col_size, index_t* hs, index_t* he,
             index_t* ws, index_t* we) {
  const index_t hs_raw = ph * s.stride_h - s.pad_h, ws_raw = pw * s.stride_w - s.pad_w;
  const index_t he_pad = std::min(hs_raw + s.kernel_h, s.height + s.pad_h);
  *hs = std::max<index_t>(hs_raw, 0);
  *he = std::min(he_pad, s.height);
  *ws = std::max<index_t>(ws_raw, 0);
  *we = std::min(ws_raw + s.kernel_w, s.width);
  return static_cast<T>(he_pad - hs_raw) * col_size[pw];
}

// True where AVE runs the lanes kernels (pool_lanes.hpp): rows of <= 16 outputs (the
// rows the generic backward takes window by window), planes up to kAveLanesMaxPlane.
bool ave_lanes_applies(const PoolingShape& s);

struct PoolKernels {
  // MAX 2x2: one h x w plane to its ceil(h/2) x ceil(w/2) outputs; m (argmax within
  // the input plane) may be null.
  void (*max2x2_forward)(index_t h, index_t w, const float* x, float* y, std::int32_t* m);
  // MAX 2x2: dx (h x w, overwritten) from dy and forward's mask m.
  void (*max2x2_backward)(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx);
  // Output row ph (ow outputs, yr; mr its mask, for MAX) of plane xp for a stride-2
  // pool of kernel width 2 or 3, no horizontal padding, MAX with a mask or AVE
  // (col_size: each output column's window width, for AVE). Returns ow, or 0 when the
  // shape is not its case (the caller's generic loops then run).
  index_t (*row_s2)(const PoolingShape& s, const float* xp, index_t ph, index_t ow, float* yr, std::int32_t* mr,
                    const float* col_size);
  // AVE where ave_lanes_applies: `planes` (1 to 8) consecutive planes of x to theirs of
  // y (forward), of dy to theirs of dx (backward, overwritten). col_size as row_s2's.
  void (*ave_lanes_forward)(const PoolingShape& s, const float* col_size, const float* x, float* y, index_t planes);
  void (*ave_lanes_backward)(const PoolingShape& s, const float* col_size, const float* dy, float* dx,
                             index_t planes);
};

const PoolKernels& pool_kernels();  // the one for arch::active_isa()
const PoolKernels& pool_kernels_generic();
const PoolKernels& pool_kernels_avx2();
const PoolKernels& pool_kernels_avx512();

}  // namespace taihu::dnn::ops
