// dnn's AVX-512 convolution kernels on any x86 CPU: their width-generic templates
// (dnn/src/conv/kernels/) instantiated with the AVX-512 vector traits, whose intrinsics
// run through SIMDe's emulation (built only where SIMDe's headers exist), against the
// same double-loop checks the real kernels pass in test_dnn_conv. On AVX-512 CPUs the
// real instructions are tested by test_dnn_conv under TAIHU_ISA=avx512.
#include <immintrin.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <gtest/gtest.h>

#include <cstring>

// SIMDe 0.7 has no masked 512-bit float load or store: lane by lane, as Intel documents
// them (masked-off lanes are neither read nor written; the load zeroes them).
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
#define _mm512_maskz_loadu_ps emulated_maskz_loadu_ps
#define _mm512_mask_storeu_ps emulated_mask_storeu_ps

#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/kernels/pointwise_tile.hpp"
#include "pointwise_kernel_check.hpp"

namespace {

using taihu::dnn::conv::kPwPixelsAvx512;

TEST(DnnConvAvx512Emulated, PointwiseTileMatchesTheDefinition) {
  pointwise_kernel_check::several_tiles_match_definition(
      &taihu::dnn::conv::kernels::pw_fwd_simd<taihu::dnn::conv::kernels::VecAvx512, 2, kPwPixelsAvx512 / 16>,
      kPwPixelsAvx512, 16);
}

}  // namespace
