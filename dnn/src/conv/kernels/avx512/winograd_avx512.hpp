// The AVX-512 Winograd kernel set (winograd_kernels.hpp) as a header, so that the
// SIMDe-emulated test (tests/dnn/conv/test_conv_avx512_emulated.cpp) compiles the very
// code that winograd_kernels_avx512.cpp does: V is one __m512, a block of 16 channels
// (nChw16c-style; half the transform instructions of the 8-channel set per channel),
// channel GEMM tiles of 14 tiles x 32 channels (28 of the 32 zmm registers accumulate),
// backward-weights' channel GEMM tiles of 8 input x 48 output channels (24 accumulators:
// 3 vector loads and 8 broadcasts per 24 FMAs),
// the row scatter/gather the x86 template at L = 16.
#pragma once
#include <immintrin.h>

#include "conv/kernels/winograd_rows_x86.hpp"
#include "conv/winograd_kernels.hpp"

namespace taihu::dnn::conv::kernels {

namespace {  // each including translation unit gets its own (see winograd_kernels.hpp)
struct WinoVecAvx512 {
  static constexpr int lanes = 16;
  __m512 v;
  static WinoVecAvx512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  // Non-temporal (p 64-byte aligned: one whole cache line). SIMDe has no 512-bit
  // stream: under emulation a plain store (the same values).
#ifdef SIMDE_VERSION
  void stream(float* p) const { store(p); }
#else
  void stream(float* p) const { _mm512_stream_ps(p, v); }
#endif
  friend WinoVecAvx512 operator+(WinoVecAvx512 a, WinoVecAvx512 b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend WinoVecAvx512 operator-(WinoVecAvx512 a, WinoVecAvx512 b) { return {_mm512_sub_ps(a.v, b.v)}; }
  friend WinoVecAvx512 operator*(WinoVecAvx512 a, float s) { return {_mm512_mul_ps(a.v, _mm512_set1_ps(s))}; }
  static WinoVecAvx512 zero() { return {_mm512_setzero_ps()}; }
  static WinoVecAvx512 bcast(float s) { return {_mm512_set1_ps(s)}; }
  friend WinoVecAvx512 fma(WinoVecAvx512 a, WinoVecAvx512 b, WinoVecAvx512 c) {
    return {_mm512_fmadd_ps(a.v, b.v, c.v)};
  }
};

constexpr WinogradKernelSet make_winograd_kernels_avx512() {
  return make_winograd_kernel_set<WinoVecAvx512, 14, 8, 3>(&wino_scatter_row_x86<16>, &wino_gather_row_x86<16>);
}
}  // namespace

}  // namespace taihu::dnn::conv::kernels
