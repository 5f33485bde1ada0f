// The software IEEE half conversions of the compressed coefficients (half_float.hpp)
// against independent references: decoding against the binary16 definition in double
// for all 65536 bit patterns; encoding against the nearest half found by binary search
// over the decoded values (ties to the even mantissa), on edge values (zeros, subnormals,
// the normal/subnormal boundary, ties, the overflow threshold, inf, NaN) and on random
// floats of every magnitude, and against the CPU's own F16C conversion where it exists.
// Deliberately broken encoders (truncating, flushing subnormals) must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "kernels/half_float.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using taihu::stencil::kernels::float_to_half;
using taihu::stencil::kernels::half_to_float;

namespace {

// binary16 by definition: (-1)^s 2^(e-15) (1 + m/1024), subnormal 2^-14 m/1024.
double half_definition(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 31)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0)
    v = std::ldexp(double(m), -24);
  else
    v = std::ldexp(1.0 + m / 1024.0, e - 15);
  return s ? -v : v;
}

// The correctly rounded half of f (round to nearest, ties to even), found independently:
// positive finite halves 0x0000..0x7bff increase with their bit pattern, so the nearest
// is one of the two around f's position; beyond 65504 + half an ulp (65520) it is inf.
std::uint16_t nearest_half(float f) {
  static const std::vector<double> values = [] {
    std::vector<double> v;
    for (std::uint32_t h = 0; h <= 0x7bff; ++h) v.push_back(half_definition(std::uint16_t(h)));
    return v;
  }();
  if (std::isnan(f)) return 0x7e00;
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(double(f));
  if (a >= 65520.0) return sign | 0x7c00;
  const auto it = std::lower_bound(values.begin(), values.end(), a);
  if (it == values.end()) return sign | 0x7bff;  // (65504, 65520): the largest half
  const auto hi = static_cast<std::uint16_t>(it - values.begin());
  if (hi == 0 || values[hi] == a) return sign | hi;
  const std::uint16_t lo = hi - 1;
  const double dlo = a - values[lo], dhi = values[hi] - a;
  if (dlo < dhi) return sign | lo;
  if (dhi < dlo) return sign | hi;
  return sign | ((lo & 1) ? hi : lo);  // tie: the even mantissa
}

// Edge values plus random floats over the whole exponent range, both signs.
std::vector<float> probe_values() {
  std::vector<float> v = {0.f, -0.f, 1.f, -1.f, 65504.f, 65519.f, 65519.996f, 65520.f, 65536.f, 1e30f, -1e30f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min()};
  for (int e = -27; e <= 16; ++e) {  // powers of two and their neighbours, ties at each scale
    const float p = std::ldexp(1.f, e);
    for (float x : {p, std::nextafter(p, 0.f), std::nextafter(p, 1e30f), p * (1 + 1.f / 2048), p * (1 + 3.f / 2048),
                    p * 1.5f, p * (1 + 1.f / 1024 + 1.f / 4096)})
      v.insert(v.end(), {x, -x});
  }
  // Subnormal halves and the ties between them: k 2^-25 for k = 1..2048.
  for (int k = 1; k <= 2048; ++k) v.push_back(std::ldexp(float(k), -25));
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0xffffffffu);
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) continue;
    // Concentrate on the half range: rescale most draws to |f| < 2^17.
    int exponent = 0;
    if (i % 4 != 0) f = std::ldexp(std::frexp(f, &exponent), int(bits(rng) % 45) - 27);
    v.push_back(f);
  }
  return v;
}

// Values whose encoding differs from the reference (NaN: any NaN half counts as right).
long encoding_mismatches(const std::function<std::uint16_t(float)>& encode, const std::vector<float>& values) {
  long bad = 0;
  for (float f : values) {
    const std::uint16_t got = encode(f), want = nearest_half(f);
    if (std::isnan(f))
      bad += !((got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0);
    else if (got != want) {
      ++bad;
      if (std::getenv("TAIHU_TEST_DEBUG")) std::printf("%a: got %04x want %04x\n", double(f), got, want);
    }
  }
  return bad;
}

}  // namespace

TEST(StencilHalfConversion, DecodesEveryBitPatternExactly) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const double want = half_definition(std::uint16_t(h));
    const float got = half_to_float(std::uint16_t(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      ASSERT_EQ(double(got), want) << std::hex << h;
      EXPECT_EQ(std::signbit(got), bool(h & 0x8000)) << std::hex << h;
    }
  }
}

TEST(StencilHalfConversion, EncodesToTheNearestHalfTiesToEven) {
  const std::vector<float> values = probe_values();
  EXPECT_EQ(encoding_mismatches(float_to_half, values), 0);
  // Spot checks that state the rules.
  EXPECT_EQ(float_to_half(1.f + 1.f / 2048), 0x3c00);            // tie -> even (1.0)
  EXPECT_EQ(float_to_half(1.f + 3.f / 2048), 0x3c02);            // tie -> even (1 + 2/1024)
  EXPECT_EQ(float_to_half(65519.f), 0x7bff);                     // below the threshold: 65504
  EXPECT_EQ(float_to_half(65520.f), 0x7c00);                     // half way to 2^16: inf
  EXPECT_EQ(float_to_half(std::ldexp(1.f, -24)), 0x0001);        // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.f, -25)), 0x0000);        // tie with zero -> 0
  EXPECT_EQ(float_to_half(std::ldexp(3.f, -25)), 0x0002);        // tie 1.5 ulp -> even (2)
  EXPECT_EQ(float_to_half(std::ldexp(2047.f, -25)), 0x0400);     // rounds up into the normals
  EXPECT_EQ(float_to_half(-0.f), 0x8000);
  EXPECT_EQ(half_to_float(float_to_half(std::ldexp(1.f, -14))), std::ldexp(1.f, -14));
}

// The test above would catch a truncating encoder and one that flushes subnormals to zero.
TEST(StencilHalfConversion, BrokenEncodersAreCaught) {
  const std::vector<float> values = probe_values();
  auto truncating = [](float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t a = x & 0x7fffffffu;
    if (a < 0x38800000u || a >= 0x477ff000u) return float_to_half(f);
    return std::uint16_t(((x >> 16) & 0x8000u) | ((a - 0x38000000u) >> 13));
  };
  auto flushing = [](float f) {
    return std::fabs(f) < std::ldexp(1.f, -14) ? std::uint16_t(std::signbit(f) ? 0x8000 : 0) : float_to_half(f);
  };
  EXPECT_GT(encoding_mismatches(truncating, values), 1000);
  EXPECT_GT(encoding_mismatches(flushing, values), 100);
}

#if defined(__x86_64__)
namespace {
__attribute__((target("f16c"))) std::uint16_t f16c_encode(float f) {
  return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float f16c_decode(std::uint16_t h) { return _cvtsh_ss(h); }
}  // namespace

// The kernels decode with vcvtph2ps and the propagator encodes in software: both must
// agree with the hardware bit for bit (MXCSR's flush-to-zero does not affect F16C).
TEST(StencilHalfConversion, AgreesWithF16c) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const float a = half_to_float(std::uint16_t(h)), b = f16c_decode(std::uint16_t(h));
    if (std::isnan(a))
      EXPECT_TRUE(std::isnan(b));
    else
      ASSERT_EQ(std::bit_cast<std::uint32_t>(a), std::bit_cast<std::uint32_t>(b)) << std::hex << h;
  }
  long bad = 0;
  for (float f : probe_values())
    if (!std::isnan(f)) bad += float_to_half(f) != f16c_encode(f);
  EXPECT_EQ(bad, 0);
}
#endif
