// The float kernel set of the elementwise operators, one table per ISA (as BLIS's
// per-configuration kernel registration): float_kernels_generic.cpp,
// float_kernels_avx2.cpp and float_kernels_avx512.cpp fill a FloatKernels each from the
// same templates (kernels.hpp); float_kernels() returns the one for
// taihu::arch::active_isa(), chosen once and logged under TAIHU_VERBOSE=1
// ("dispatch: dnn elementwise -> avx512").
#pragma once
#include <cstdint>
#include <type_traits>

#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn::ops {

// One tile of LRN across channels: `width` consecutive pixels of one image, every channel
// (`plane` floats apart), window of `size` channels. pow075 is s^-0.75 when beta == 0.75,
// else nullptr and the tile calls std::pow with -beta.
template <class T>
struct LrnAcrossTile {
  index_t channels, plane, width, size;
  T alpha_over_size, k;
  double beta;
  void (*pow075)(index_t, const T*, T*);
};

struct FloatKernels {
  void (*relu_fwd)(index_t, const float*, float*, float);
  void (*relu_bwd)(index_t, const float*, const float*, float*, float);
  void (*sigmoid_fwd)(index_t, const float*, float*);
  void (*sigmoid_bwd)(index_t, const float*, const float*, float*);
  void (*tanh_fwd)(index_t, const float*, float*);
  void (*tanh_bwd)(index_t, const float*, const float*, float*);
  void (*affine)(index_t, const float*, float, float, float*);
  void (*axpby)(index_t, float, const float*, float, float*);
  void (*mul)(index_t, const float*, const float*, float*);
  void (*max_first)(index_t, const float*, const float*, float*, std::int32_t*);
  void (*max_next)(index_t, const float*, std::int32_t, float*, std::int32_t*);
  double (*sum)(index_t, const float*);
  double (*dot)(index_t, const float*, const float*);
  double (*centered_sumsq)(index_t, const float*, float);
  void (*softmax_slice)(index_t, index_t, const float*, float*);
  void (*softmax_bwd_slice)(index_t, index_t, const float*, const float*, float*);
  void (*dropout)(index_t, std::uint64_t, std::uint32_t, std::uint32_t, std::uint32_t, float,
                  const float*, float*, std::uint8_t*);
  void (*masked_scale)(index_t, const std::uint8_t*, float, const float*, float*);
  // out = s^-0.75 for positive s (LRN's beta = 0.75).
  void (*pow_minus_075)(index_t, const float*, float*);
  // LRN across channels, one tile (LrnAcrossTile, width <= kLrnTile): forward writes
  // scale and y; backward writes dx (x, y, scale and dy from the forward / the layer above).
  void (*lrn_across_fwd)(const LrnAcrossTile<float>&, const float* x, float* scale, float* y);
  void (*lrn_across_bwd)(const LrnAcrossTile<float>&, float cache_ratio, const float* x,
                         const float* y, const float* scale, const float* dy, float* dx);
};

// Most pixels per LRN tile: a 55 x 55 plane (AlexNet's norm1) is one tile, and the
// window's rows (5 channels x 16 KiB at most) stay in L2.
inline constexpr index_t kLrnTile = 4096;

const FloatKernels& float_kernels_generic();
const FloatKernels& float_kernels_avx2();
const FloatKernels& float_kernels_avx512();

// The table for this process's ISA level.
const FloatKernels& float_kernels();

// The kernel an operator runs for element type T: the table's `entry` for float; for
// double (the precision reference) the generic template's instantiation the caller names
// (`&k_<name><double>`, ops/kernels.hpp).
template <class T, class Entry, class Reference>
auto kernel_for(Entry FloatKernels::*entry, Reference reference) {
  if constexpr (std::is_same_v<T, float>) {
    return float_kernels().*entry;
  } else {
    return reference;
  }
}

}  // namespace taihu::dnn::ops
