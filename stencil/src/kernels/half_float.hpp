// IEEE 754 binary16 ("half") conversions in portable C++, for the compressed per-point
// coefficients (Options::coefficients = half): the propagator encodes with
// float_to_half, the generic kernels decode with half_to_float; the AVX2 / AVX-512
// kernels decode with F16C's vcvtph2ps, which gives the same floats (every half is
// exactly representable as a float).
//
// Contract: float_to_half rounds to nearest, ties to even, like vcvtps2ph with
// _MM_FROUND_TO_NEAREST_INT; values beyond the largest half (65504) round to +-inf as
// IEEE prescribes, subnormal halves are produced and decoded (no flush to zero), NaN stays
// NaN (quiet). half_to_float is exact.
#pragma once
#include <bit>
#include <cstdint>

namespace taihu::stencil::kernels {

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
  // Zero or subnormal: man * 2^-24, exact in float.
  const float mag = float(man) * 0x1p-24f;
  return sign ? -mag : mag;
}

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = std::uint16_t((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf or NaN (a NaN keeps its top payload bits and stays quiet)
    return std::uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
  if (abs >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // >= 65520: rounds to inf
  if (abs >= 0x38800000u) {  // normal half range (>= 2^-14)
    // Rebias the exponent, then round the 13 dropped mantissa bits to nearest even; a
    // carry out of the mantissa correctly bumps the exponent.
    const std::uint32_t r = abs - 0x38000000u;
    const std::uint32_t rounded = r + 0xfffu + ((r >> 13) & 1u);
    return std::uint16_t(sign | (rounded >> 13));
  }
  if (abs < 0x33000000u) return sign;  // below 2^-25: rounds to zero (2^-25 itself is a tie to 0)
  // Subnormal half: value = m * 2^-24 with m = mantissa (implicit bit included) shifted
  // right by (126 - exponent) places, rounded to nearest even.
  const std::uint32_t exp = abs >> 23;
  const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126u - exp;  // 14..24 for exponents 2^-15 .. 2^-25
  const std::uint32_t q = mant >> shift, rest = mant & ((1u << shift) - 1u), half_ulp = 1u << (shift - 1);
  const std::uint32_t m = q + ((rest > half_ulp || (rest == half_ulp && (q & 1u))) ? 1u : 0u);
  return std::uint16_t(sign | m);  // m == 0x400 becomes the smallest normal, as it should
}

}  // namespace taihu::stencil::kernels
