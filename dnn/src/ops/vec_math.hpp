// exp, tanh and sigmoid that vectorize inside `#pragma omp simd` loops (no libm call):
// the float versions are polynomial/rational approximations accurate to a few ulp
// (Cephes expf; the 13/6 rational tanh Eigen uses); the double versions call libm, so
// the double instantiations of the operators stay a precision reference.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace taihu::dnn::ops {
// Internal linkage: the AVX2 translation unit compiles these with AVX2 enabled, so an
// out-of-line copy must never be shared with the baseline-ISA units.
namespace {  // NOLINT(cert-dcl59-cpp)

// c ? a : b as bit operations. Plain `?:` on floats lets GCC thread the condition into
// control flow, and with -ftrapping-math it then will not speculate the arithmetic in
// the branches, so the loop stays scalar; the masks keep it a straight-line blend.
inline float select(bool c, float a, float b) {
  const std::uint32_t m = 0U - static_cast<std::uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & m) |
                              (std::bit_cast<std::uint32_t>(b) & ~m));
}

inline double select(bool c, double a, double b) {
  const std::uint64_t m = 0ULL - static_cast<std::uint64_t>(c);
  return std::bit_cast<double>((std::bit_cast<std::uint64_t>(a) & m) |
                               (std::bit_cast<std::uint64_t>(b) & ~m));
}

// e^x for float. Below -87.3 (where e^x leaves the normal range) returns 0; above 88
// saturates at e^88.
inline float exp_approx(float x) {
  const float lo = -87.3f, hi = 88.0f;
  float xc = select(x < lo, lo, x);
  xc = select(xc > hi, hi, xc);
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (xc * 1.44269504088896341f + shifter) - shifter;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  const float result = y * std::bit_cast<float>(bits);
  return select(x < lo, 0.0f, result);
}

inline double exp_approx(double x) { return std::exp(x); }

inline float tanh_approx(float a) {
  const float clamp = 7.99881172180175781f;
  float x = select(a > clamp, clamp, a);
  x = select(x < -clamp, -clamp, x);
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * x;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float ratio = p / q;
  return select(std::fabs(a) < 0.0004f, a, ratio);
}

inline double tanh_approx(double x) { return std::tanh(x); }

// 1 / sqrt(x) for positive normal float x: the bit-level first guess (within 3.5%) and
// three Newton steps (relative error ~2e-7). Unlike std::sqrt it has no errno path, so loops over
// it vectorize.
inline float rsqrt_approx(float x) {
  float r = std::bit_cast<float>(0x5f3759dfU - (std::bit_cast<std::uint32_t>(x) >> 1));
  r = r * (1.5f - 0.5f * x * r * r);
  r = r * (1.5f - 0.5f * x * r * r);
  r = r * (1.5f - 0.5f * x * r * r);
  return r;
}

// x^-0.75 = (x^-1/2)^2 * (x^-1/2)^-1/2, for positive normal x (LRN's common beta).
inline float pow_minus_075(float x) {
  const float t = rsqrt_approx(x);
  return t * t * rsqrt_approx(t);
}

inline double pow_minus_075(double x) { return 1.0 / (std::sqrt(x) * std::sqrt(std::sqrt(x))); }

template <class T>
inline T sigmoid_approx(T x) {
  return T(1) / (T(1) + exp_approx(-x));
}

}  // namespace
}  // namespace taihu::dnn::ops
