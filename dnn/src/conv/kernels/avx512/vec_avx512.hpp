// Vector traits V for the width-generic dnn conv kernels (conv/kernels/*_tile.hpp) on
// AVX-512: 16 float lanes, masks in k registers. Header-only so the SIMDe-emulated
// tests (tests/dnn/conv/test_conv_avx512_emulated.cpp) compile the very same code on
// CPUs without AVX-512. V provides: Reg, Mask, W (lanes), zero, loadu, storeu, bcast,
// fma(a, b, c) = a*b + c, add, max, first(n) (a mask of the first n lanes),
// load_first(p, m) (masked-off lanes read nothing and are zero), store_first,
// load_blocks / store_blocks (a vector as W / 8 8-channel blocks at separate addresses).
#pragma once
#include <immintrin.h>

namespace taihu::dnn::conv::kernels {

struct VecAvx512 {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int W = 16;
  static inline Reg zero() { return _mm512_setzero_ps(); }
  static inline Reg loadu(const float* p) { return _mm512_loadu_ps(p); }
  static inline void storeu(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static inline Reg bcast(const float* p) { return _mm512_set1_ps(*p); }
  static inline Reg set1(float v) { return _mm512_set1_ps(v); }
  static inline Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static inline Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  // (The zero-masking form: GCC 12 flags the plain one's undefined pass-through as
  // maybe-uninitialized.)
  static inline Reg max(Reg a, Reg b) { return _mm512_maskz_max_ps(0xFFFF, a, b); }
  static inline Mask first(int n) { return static_cast<Mask>((1u << n) - 1u); }
  static inline Reg load_first(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static inline void store_first(float* p, Mask m, Reg v) { _mm512_mask_storeu_ps(p, m, v); }
  // The 16 lanes as two nChw8c-style 8-channel blocks at lo and hi (lanes 0-7, 8-15),
  // through masked accesses (the masked-off lanes touch no memory; GCC 12 flags the
  // 512 <-> 256-bit casts as maybe-uninitialized).
  static inline Reg load_blocks(const float* lo, const float* hi) {
    return _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(0x00FF, lo), 0xFF00, hi - 8);
  }
  static inline void store_blocks(float* lo, float* hi, Reg v) {
    _mm512_mask_storeu_ps(lo, 0x00FF, v);
    _mm512_mask_storeu_ps(hi - 8, 0xFF00, v);
  }
};

}  // namespace taihu::dnn::conv::kernels
