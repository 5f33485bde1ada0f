// The hot inner loops of the elementwise operators, written once as templates over a
// contiguous range and vectorized with `#pragma omp simd`. Each translation unit that
// includes this file gets its own copy (anonymous namespace): float_kernels_generic.cpp
// compiles them for the baseline ISA, float_kernels_avx2.cpp with AVX2 + FMA,
// float_kernels_avx512.cpp with AVX-512 (16 lanes), and the
// double instantiations (the precision reference) come from the generic build. The
// callers own threading (core/parallel.hpp); these run on one thread.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/float_kernels.hpp"
#include "ops/vec_math.hpp"
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn::ops {
namespace {  // NOLINT(cert-dcl59-cpp): one copy per ISA translation unit, by design

template <class T>
void k_relu_fwd(index_t n, const T* x, T* y, T slope) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) y[i] = select(x[i] > T(0), x[i], slope * x[i]);
}

template <class T>
void k_relu_bwd(index_t n, const T* x, const T* dy, T* dx, T slope) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) dx[i] = select(x[i] > T(0), dy[i], slope * dy[i]);
}

template <class T>
void k_sigmoid_fwd(index_t n, const T* x, T* y) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) y[i] = sigmoid_approx(x[i]);
}

template <class T>
void k_sigmoid_bwd(index_t n, const T* y, const T* dy, T* dx) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i] * (T(1) - y[i]);
}

template <class T>
void k_tanh_fwd(index_t n, const T* x, T* y) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) y[i] = tanh_approx(x[i]);
}

template <class T>
void k_tanh_bwd(index_t n, const T* y, const T* dy, T* dx) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) dx[i] = dy[i] * (T(1) - y[i] * y[i]);
}

// y = a * x + b
template <class T>
void k_affine(index_t n, const T* x, T a, T b, T* y) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) y[i] = a * x[i] + b;
}

// y = a * x + b * y (b == 0 never reads y)
template <class T>
void k_axpby(index_t n, T a, const T* x, T b, T* y) {
  if (b == T(0)) {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) y[i] = a * x[i];
  } else {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) y[i] = a * x[i] + b * y[i];
  }
}

template <class T>
void k_mul(index_t n, const T* a, const T* b, T* y) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

// Eltwise MAX of the first two inputs (a tie goes to input 1, as Caffe).
template <class T>
void k_max_first(index_t n, const T* a, const T* b, T* y, std::int32_t* mask) {
  if (mask == nullptr) {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) y[i] = a[i] > b[i] ? a[i] : b[i];
    return;
  }
#pragma omp simd
  for (index_t i = 0; i < n; ++i) {
    const bool first = a[i] > b[i];
    y[i] = first ? a[i] : b[i];
    mask[i] = first ? 0 : 1;
  }
}

// Eltwise MAX of a later input `index`: wins only when strictly greater.
template <class T>
void k_max_next(index_t n, const T* x, std::int32_t index, T* y, std::int32_t* mask) {
  if (mask == nullptr) {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) y[i] = x[i] > y[i] ? x[i] : y[i];
    return;
  }
#pragma omp simd
  for (index_t i = 0; i < n; ++i) {
    const bool wins = x[i] > y[i];
    y[i] = wins ? x[i] : y[i];
    mask[i] = wins ? index : mask[i];
  }
}

template <class T>
double k_sum(index_t n, const T* x) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (index_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}

template <class T>
double k_dot(index_t n, const T* a, const T* b) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (index_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return s;
}

// sum (x - mean)^2
template <class T>
double k_centered_sumsq(index_t n, const T* x, T mean) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (index_t i = 0; i < n; ++i) {
    const T d = x[i] - mean;
    s += static_cast<double>(d * d);
  }
  return s;
}

// Softmax of one [channels][inner] slice over channels.
template <class T>
void k_softmax_slice(index_t channels, index_t inner, const T* x, T* y) {
  if (inner == 1) {
    T m = x[0];
#pragma omp simd reduction(max : m)
    for (index_t c = 0; c < channels; ++c) m = x[c] > m ? x[c] : m;
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (index_t c = 0; c < channels; ++c) {
      y[c] = exp_approx(x[c] - m);
      s += y[c];
    }
    const T inv = T(1) / s;
#pragma omp simd
    for (index_t c = 0; c < channels; ++c) y[c] *= inv;
    return;
  }
  // inner > 1: vectorize along inner, walk the channels; y holds the running max, then
  // the exponentials; a strip of inner keeps the sums in a small stack buffer.
  constexpr index_t kStrip = 256;
  T sums[kStrip];
  for (index_t i0 = 0; i0 < inner; i0 += kStrip) {
    const index_t w = inner - i0 < kStrip ? inner - i0 : kStrip;
    T maxes[kStrip];
#pragma omp simd
    for (index_t i = 0; i < w; ++i) maxes[i] = x[i0 + i];
    for (index_t c = 1; c < channels; ++c) {
      const T* xc = x + c * inner + i0;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) maxes[i] = xc[i] > maxes[i] ? xc[i] : maxes[i];
    }
#pragma omp simd
    for (index_t i = 0; i < w; ++i) sums[i] = T(0);
    for (index_t c = 0; c < channels; ++c) {
      const T* xc = x + c * inner + i0;
      T* yc = y + c * inner + i0;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) {
        yc[i] = exp_approx(xc[i] - maxes[i]);
        sums[i] += yc[i];
      }
    }
#pragma omp simd
    for (index_t i = 0; i < w; ++i) sums[i] = T(1) / sums[i];
    for (index_t c = 0; c < channels; ++c) {
      T* yc = y + c * inner + i0;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) yc[i] *= sums[i];
    }
  }
}

// Softmax backward of one slice: dx = y * (dy - sum_c dy * y).
template <class T>
void k_softmax_bwd_slice(index_t channels, index_t inner, const T* y, const T* dy, T* dx) {
  constexpr index_t kStrip = 256;
  T dots[kStrip];
  for (index_t i0 = 0; i0 < inner; i0 += kStrip) {
    const index_t w = inner - i0 < kStrip ? inner - i0 : kStrip;
#pragma omp simd
    for (index_t i = 0; i < w; ++i) dots[i] = T(0);
    for (index_t c = 0; c < channels; ++c) {
      const T* yc = y + c * inner + i0;
      const T* dyc = dy + c * inner + i0;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) dots[i] += yc[i] * dyc[i];
    }
    for (index_t c = 0; c < channels; ++c) {
      const T* yc = y + c * inner + i0;
      const T* dyc = dy + c * inner + i0;
      T* dxc = dx + c * inner + i0;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) dxc[i] = yc[i] * (dyc[i] - dots[i]);
    }
  }
}

// The counter-based hash behind dropout: two rounds of a 32-bit integer mixer
// (lowbias32) keyed by (k0, k1), over the 64-bit element index.
inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

inline std::uint32_t dropout_bits(std::uint32_t k0, std::uint32_t k1, std::uint64_t index) {
  const auto lo = static_cast<std::uint32_t>(index);
  const auto hi = static_cast<std::uint32_t>(index >> 32);
  return mix32(mix32(lo ^ k0) + (hi ^ k1));
}

// y = keep ? x * scale : 0 for elements [first, first + n) of the stream.
template <class T>
void k_dropout(index_t n, std::uint64_t first, std::uint32_t k0, std::uint32_t k1,
               std::uint32_t threshold, T scale, const T* x, T* y, std::uint8_t* mask) {
  if (mask == nullptr) {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) {
      const bool keep = dropout_bits(k0, k1, first + static_cast<std::uint64_t>(i)) >= threshold;
      y[i] = select(keep, x[i] * scale, T(0));
    }
    return;
  }
#pragma omp simd
  for (index_t i = 0; i < n; ++i) {
    const bool keep = dropout_bits(k0, k1, first + static_cast<std::uint64_t>(i)) >= threshold;
    y[i] = select(keep, x[i] * scale, T(0));
    mask[i] = keep ? 1 : 0;
  }
}

template <class T>
void k_masked_scale(index_t n, const std::uint8_t* mask, T scale, const T* dy, T* dx) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) dx[i] = select(mask[i] != 0, dy[i] * scale, T(0));
}

template <class T>
void k_pow_minus_075(index_t n, const T* s, T* out) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) out[i] = pow_minus_075(s[i]);
}

// LRN's s^-beta for one row: pow075 (the table's s^-0.75) when given, else std::pow.
template <class T>
void lrn_power(void (*pow075)(index_t, const T*, T*), double beta, index_t n, const T* s, T* out) {
  if (pow075 != nullptr) {
    pow075(n, s, out);
  } else {
    for (index_t i = 0; i < n; ++i) out[i] = static_cast<T>(std::pow(s[i], -beta));
  }
}

// LRN across channels forward on one tile, one fused pass per channel: slide the window
// sum of squares (add the channel entering, drop the one leaving), then scale and y; the
// window's rows stay in L2.
template <class T>
void k_lrn_across_fwd(const LrnAcrossTile<T>& t, const T* x, T* scale, T* y) {
  const index_t half = (t.size - 1) / 2, w = t.width;
  T acc[kLrnTile], pw[kLrnTile];
  std::fill(acc, acc + w, T(0));
  for (index_t c = 0; c < std::min(half, t.channels); ++c) {
    const T* xc = x + c * t.plane;
#pragma omp simd
    for (index_t i = 0; i < w; ++i) acc[i] += xc[i] * xc[i];
  }
  for (index_t c = 0; c < t.channels; ++c) {
    const index_t add = c + half, sub = c - half - 1;
    if (add < t.channels) {
      const T* xa = x + add * t.plane;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) acc[i] += xa[i] * xa[i];
    }
    if (sub >= 0) {
      const T* xs = x + sub * t.plane;
#pragma omp simd
      for (index_t i = 0; i < w; ++i) acc[i] -= xs[i] * xs[i];
    }
    T* sc = scale + c * t.plane;
#pragma omp simd
    for (index_t i = 0; i < w; ++i) sc[i] = t.k + t.alpha_over_size * acc[i];
    lrn_power(t.pow075, t.beta, w, sc, pw);
    const T* xc = x + c * t.plane;
    T* yc = y + c * t.plane;
#pragma omp simd
    for (index_t i = 0; i < w; ++i) yc[i] = xc[i] * pw[i];
  }
}

// LRN across channels backward on one tile: dx = dy * scale^-beta - cache_ratio * x *
// (window sum over channels of dy * y / scale). dx holds the window sums first.
template <class T>
void k_lrn_across_bwd(const LrnAcrossTile<T>& t, T cache_ratio, const T* x, const T* y,
                      const T* scale, const T* dy, T* dx) {
  const index_t half = (t.size - 1) / 2, w = t.width;
  T acc[kLrnTile], ratio[kLrnTile], pw[kLrnTile];
  const auto ratio_of = [&](index_t c) {
    const index_t at = c * t.plane;
#pragma omp simd
    for (index_t i = 0; i < w; ++i) ratio[i] = dy[at + i] * y[at + i] / scale[at + i];
  };
  std::fill(acc, acc + w, T(0));
  for (index_t c = 0; c < std::min(half, t.channels); ++c) {
    ratio_of(c);
#pragma omp simd
    for (index_t i = 0; i < w; ++i) acc[i] += ratio[i];
  }
  for (index_t c = 0; c < t.channels; ++c) {
    const index_t add = c + half, sub = c - half - 1;
    if (add < t.channels) {
      ratio_of(add);
#pragma omp simd
      for (index_t i = 0; i < w; ++i) acc[i] += ratio[i];
    }
    if (sub >= 0) {
      ratio_of(sub);
#pragma omp simd
      for (index_t i = 0; i < w; ++i) acc[i] -= ratio[i];
    }
    const index_t at = c * t.plane;
    lrn_power(t.pow075, t.beta, w, scale + at, pw);
#pragma omp simd
    for (index_t i = 0; i < w; ++i) dx[at + i] = dy[at + i] * pw[i] - cache_ratio * x[at + i] * acc[i];
  }
}

// The float table of the including translation unit's ISA (float_kernels_<isa>.cpp):
// every loop above, and `pow` for LRN's power (a level may bring its own).
inline FloatKernels float_kernel_table(void (*pow)(index_t, const float*, float*) = &k_pow_minus_075<float>) {
  return FloatKernels{&k_relu_fwd<float>,      &k_relu_bwd<float>,
                      &k_sigmoid_fwd<float>,   &k_sigmoid_bwd<float>,
                      &k_tanh_fwd<float>,      &k_tanh_bwd<float>,
                      &k_affine<float>,        &k_axpby<float>,
                      &k_mul<float>,           &k_max_first<float>,
                      &k_max_next<float>,      &k_sum<float>,
                      &k_dot<float>,           &k_centered_sumsq<float>,
                      &k_softmax_slice<float>, &k_softmax_bwd_slice<float>,
                      &k_dropout<float>,       &k_masked_scale<float>,
                      pow,                     &k_lrn_across_fwd<float>,
                      &k_lrn_across_bwd<float>};
}

}  // namespace
}  // namespace taihu::dnn::ops
