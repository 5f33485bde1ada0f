// AVE pooling of planes with short rows (pool_kernels.hpp's ave_lanes_applies: CIFAR-10
// quick's 16 x 16 and 8 x 8 pools), eight planes at a time with the planes in the lanes.
// Row-wise vector loops have 4-8 outputs a row there and spend their time on set-up;
// here every tap is one 8-lane add over eight planes. The planes are transposed into a
// pixel-major scratch ([pixel][plane]), pooled, and transposed back.
// Contract: bit for bit pooling.cpp's generic loops: forward sums each window from 0
// in row-then-column order and divides by the same float product (rows x column
// width, padding included); backward (its window-by-window loop, the one for rows of
// <= 16 outputs) zero-fills dx and adds dy / size window by window in output order.
// Transpose is the translation unit's policy: `Lanes8Scalar` (plain loops, for the
// generic table) or one built on transpose8x8 (AVX2 / AVX-512 tables), with
//   to_lanes(src, stride, planes, count, dst): dst[i * 8 + l] = src[l * stride + i]
//   from_lanes(src, count, dst, stride, planes): dst[l * stride + i] = src[i * 8 + l]
// for i < count and l < planes (dst lanes >= planes of to_lanes: 0).
// Internal linkage, as pool_wide.hpp: each ISA's translation unit compiles its own copy.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ops/pool_kernels.hpp"
#if defined(__AVX2__)
#include "core/transpose8x8_avx2.hpp"
#endif

namespace taihu::dnn::ops::pool {
namespace {

constexpr index_t kLanes = kAveLanesPlanes;

struct Lanes8Scalar {
  static void to_lanes(const float* src, index_t stride, index_t planes, index_t count, float* dst) {
    for (index_t i = 0; i < count; ++i)
      for (index_t l = 0; l < kLanes; ++l) dst[i * kLanes + l] = l < planes ? src[l * stride + i] : 0.0f;
  }
  static void from_lanes(const float* src, index_t count, float* dst, index_t stride, index_t planes) {
    for (index_t l = 0; l < planes; ++l)
      for (index_t i = 0; i < count; ++i) dst[l * stride + i] = src[i * kLanes + l];
  }
};

#if defined(__AVX2__)
// Eight full planes through 8 x 8 register transposes; fewer planes and the last
// count % 8 pixels as Lanes8Scalar.
struct Lanes8Avx2 {
  static void to_lanes(const float* src, index_t stride, index_t planes, index_t count, float* dst) {
    if (planes < kLanes) return Lanes8Scalar::to_lanes(src, stride, planes, count, dst);
    const index_t full = count / kLanes * kLanes;
    for (index_t i = 0; i < full; i += kLanes) {
      __m256 r[kLanes];
      for (index_t l = 0; l < kLanes; ++l) r[l] = _mm256_loadu_ps(src + l * stride + i);
      transpose8x8(r);
      for (index_t u = 0; u < kLanes; ++u) _mm256_storeu_ps(dst + (i + u) * kLanes, r[u]);
    }
    for (index_t i = full; i < count; ++i)
      for (index_t l = 0; l < kLanes; ++l) dst[i * kLanes + l] = src[l * stride + i];
  }
  static void from_lanes(const float* src, index_t count, float* dst, index_t stride, index_t planes) {
    if (planes < kLanes) return Lanes8Scalar::from_lanes(src, count, dst, stride, planes);
    const index_t full = count / kLanes * kLanes;
    for (index_t i = 0; i < full; i += kLanes) {
      __m256 r[kLanes];
      for (index_t u = 0; u < kLanes; ++u) r[u] = _mm256_loadu_ps(src + (i + u) * kLanes);
      transpose8x8(r);
      for (index_t l = 0; l < kLanes; ++l) _mm256_storeu_ps(dst + l * stride + i, r[l]);
    }
    for (index_t l = 0; l < kLanes; ++l)
      for (index_t i = full; i < count; ++i) dst[l * stride + i] = src[i * kLanes + l];
  }
};
#endif

template <class Transpose>
void ave_lanes_forward(const PoolingShape& s, const float* col_size, const float* x, float* y, index_t planes) {
  const index_t oh = s.out_h(), ow = s.out_w(), plane = s.height * s.width;
  alignas(64) float xb[kAveLanesMaxPlane * kLanes];
  alignas(64) float yb[kAveLanesMaxPlane * kLanes];
  Transpose::to_lanes(x, plane, planes, plane, xb);
  for (index_t ph = 0; ph < oh; ++ph)
    for (index_t pw = 0; pw < ow; ++pw) {
      index_t hs, he, ws, we;
      const float size = ave_window(s, ph, pw, col_size, &hs, &he, &ws, &we);
      float acc[kLanes] = {};
      for (index_t h = hs; h < he; ++h)
        for (index_t w = ws; w < we; ++w) {
          const float* v = xb + (h * s.width + w) * kLanes;
#pragma omp simd
          for (index_t l = 0; l < kLanes; ++l) acc[l] += v[l];
        }
      float* o = yb + (ph * ow + pw) * kLanes;
#pragma omp simd
      for (index_t l = 0; l < kLanes; ++l) o[l] = acc[l] / size;
    }
  Transpose::from_lanes(yb, oh * ow, y, oh * ow, planes);
}

template <class Transpose>
void ave_lanes_backward(const PoolingShape& s, const float* col_size, const float* dy, float* dx, index_t planes) {
  const index_t oh = s.out_h(), ow = s.out_w(), plane = s.height * s.width;
  alignas(64) float dyb[kAveLanesMaxPlane * kLanes];
  alignas(64) float dxb[kAveLanesMaxPlane * kLanes];
  Transpose::to_lanes(dy, oh * ow, planes, oh * ow, dyb);
  std::fill(dxb, dxb + plane * kLanes, 0.0f);
  for (index_t ph = 0; ph < oh; ++ph)
    for (index_t pw = 0; pw < ow; ++pw) {
      index_t hs, he, ws, we;
      const float size = ave_window(s, ph, pw, col_size, &hs, &he, &ws, &we);
      float g[kLanes];
      const float* d = dyb + (ph * ow + pw) * kLanes;
#pragma omp simd
      for (index_t l = 0; l < kLanes; ++l) g[l] = d[l] / size;
      for (index_t h = hs; h < he; ++h)
        for (index_t w = ws; w < we; ++w) {
          float* v = dxb + (h * s.width + w) * kLanes;
#pragma omp simd
          for (index_t l = 0; l < kLanes; ++l) v[l] += g[l];
        }
    }
  Transpose::from_lanes(dxb, plane, dx, plane, planes);
}

}  // namespace
}  // namespace taihu::dnn::ops::pool
