// SIMDe's AVX-512 emulation for dnn's emulated kernel tests (test_conv_avx512_emulated,
// test_minibatch_avx512_emulated), with the intrinsics SIMDe 0.7 lacks written lane by
// lane as Intel documents them: the masked 512-bit float loads and store (masked-off
// lanes are neither read nor written; the zeroing load zeroes them) and
// _mm512_extractf32x8_ps. Include before any kernel header: the kernels' _mm512_*
// names then resolve to the emulation.
#pragma once
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <cstring>

static inline simde__m512 emulated_maskz_loadu_ps(simde__mmask16 m, const void* p) {
  float r[16];
  for (int i = 0; i < 16; ++i) r[i] = ((m >> i) & 1) ? static_cast<const float*>(p)[i] : 0.0f;
  simde__m512 out;
  std::memcpy(&out, r, 64);
  return out;
}
static inline void emulated_mask_storeu_ps(void* p, simde__mmask16 m, simde__m512 v) {
  float r[16];
  std::memcpy(r, &v, 64);
  for (int i = 0; i < 16; ++i)
    if ((m >> i) & 1) static_cast<float*>(p)[i] = r[i];
}
static inline simde__m512 emulated_mask_loadu_ps(simde__m512 src, simde__mmask16 m, const void* p) {
  float r[16];
  std::memcpy(r, &src, 64);
  for (int i = 0; i < 16; ++i)
    if ((m >> i) & 1) r[i] = static_cast<const float*>(p)[i];
  simde__m512 out;
  std::memcpy(&out, r, 64);
  return out;
}
// Lanes [8 imm, 8 imm + 8) of v.
static inline simde__m256 emulated_extractf32x8_ps(simde__m512 v, int imm) {
  float r[16];
  std::memcpy(r, &v, 64);
  simde__m256 out;
  std::memcpy(&out, r + 8 * (imm & 1), 32);
  return out;
}
#define _mm512_maskz_loadu_ps emulated_maskz_loadu_ps
#define _mm512_mask_loadu_ps emulated_mask_loadu_ps
#define _mm512_mask_storeu_ps emulated_mask_storeu_ps
#define _mm512_extractf32x8_ps emulated_extractf32x8_ps
