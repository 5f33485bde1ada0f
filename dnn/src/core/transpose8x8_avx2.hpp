// An 8x8 float transpose in eight AVX2 registers (r[u] lane l -> r[l] lane u), shared
// by dnn's AVX2 and AVX-512 translation units (the layout reorders in core/, the
// Winograd, direct and 1x1 kernels in conv/). Include it only from translation units
// compiled with AVX2 flags or wider (or through SIMDe's emulation, in the tests).
#pragma once
#include <immintrin.h>

namespace taihu::dnn {

inline void transpose8x8(__m256 r[8]) {
  __m256 t[8];
  for (int u = 0; u < 8; u += 2) {
    t[u] = _mm256_unpacklo_ps(r[u], r[u + 1]);
    t[u + 1] = _mm256_unpackhi_ps(r[u], r[u + 1]);
  }
  for (int u = 0; u < 8; u += 4) {
    r[u] = _mm256_shuffle_ps(t[u], t[u + 2], 0x44);
    r[u + 1] = _mm256_shuffle_ps(t[u], t[u + 2], 0xEE);
    r[u + 2] = _mm256_shuffle_ps(t[u + 1], t[u + 3], 0x44);
    r[u + 3] = _mm256_shuffle_ps(t[u + 1], t[u + 3], 0xEE);
  }
  for (int u = 0; u < 4; ++u) {
    t[u] = _mm256_permute2f128_ps(r[u], r[4 + u], 0x20);
    t[u + 4] = _mm256_permute2f128_ps(r[u], r[4 + u], 0x31);
  }
  for (int u = 0; u < 8; ++u) r[u] = t[u];
}

}  // namespace taihu::dnn
