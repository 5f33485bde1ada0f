// The minibatch algorithm's AVX2+FMA kernels (declared in minibatch_kernels.hpp): the implicit
// backward-weights (input read in place, see there), the 8-pixel-row col2im, and
// this backward-weights kernel for layers with few weight columns (first layers:
// LeNet's conv1 has 25, CIFAR-10 quick's 75):
//   dw[k][row] += sum_p dy[k][p] * col[row][p],  p < depth,
// on dy and col blocks laid out with leading dimension ld (see conv_minibatch.hpp). There a
// GEMM would pack both operands for a 20 x 25 product; here tiles of 4 output
// channels x 3 columns keep 12 eight-lane accumulators in registers over blocks of
// pixels, reading both operands in place.
#include <immintrin.h>

#include <algorithm>

#include "conv/minibatch_kernels.hpp"

namespace taihu::dnn::conv::minibatch_kernels {
namespace {

float hsum(__m256 v) {
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

// One KI x RJ tile over pixels [p0, p1) (p1 - p0 a multiple of 8).
template <int KI, int RJ>
void tile(const float* dy, const float* col, std::int64_t ld, std::int64_t rows, std::int64_t p0, std::int64_t p1,
          float* dw) {
  __m256 acc[KI][RJ];
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_setzero_ps();
  for (std::int64_t p = p0; p < p1; p += 8) {
    __m256 c[RJ];
    for (int j = 0; j < RJ; ++j) c[j] = _mm256_loadu_ps(col + j * ld + p);
    for (int i = 0; i < KI; ++i) {
      const __m256 d = _mm256_loadu_ps(dy + i * ld + p);
      for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_fmadd_ps(d, c[j], acc[i][j]);
    }
  }
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) dw[i * rows + j] += hsum(acc[i][j]);
}

}  // namespace

void backward_weights_small_avx2(const float* dy, const float* col, std::int64_t kg, std::int64_t rows,
                                 std::int64_t depth, std::int64_t ld, float* dw) {
  constexpr std::int64_t kBlock = 512;  // pixels per pass: dy and col rows stay in L1/L2
  const std::int64_t vec_end = depth - depth % 8;
  for (std::int64_t p0 = 0; p0 < vec_end; p0 += kBlock) {
    const std::int64_t p1 = p0 + kBlock < vec_end ? p0 + kBlock : vec_end;
    std::int64_t k = 0;
    for (; k + 4 <= kg; k += 4) {
      std::int64_t r = 0;
      for (; r + 3 <= rows; r += 3) tile<4, 3>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
      for (; r < rows; ++r) tile<4, 1>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
    }
    for (; k < kg; ++k) {
      std::int64_t r = 0;
      for (; r + 3 <= rows; r += 3) tile<1, 3>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
      for (; r < rows; ++r) tile<1, 1>(dy + k * ld, col + r * ld, ld, rows, p0, p1, dw + k * rows + r);
    }
  }
  if (vec_end == depth) return;
  for (std::int64_t k = 0; k < kg; ++k)
    for (std::int64_t r = 0; r < rows; ++r) {
      float s = 0.0f;
      for (std::int64_t p = vec_end; p < depth; ++p) s += dy[k * ld + p] * col[r * ld + p];
      dw[k * rows + r] += s;
    }
}

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {
namespace {

// Adds a tile's sums to the per-thread partial gradient dwt[tap][channel] (k_count
// channels per tap): with 4 channels, each tap's 4 sums by one hadd tree and one
// 4-float update; otherwise lane by lane.
template <int KI, int RJ>
inline void flush_tile(const __m256 (&acc)[KI][RJ], std::int64_t k_count, std::int64_t k, std::int64_t t, float* dwt) {
  for (int j = 0; j < RJ; ++j) {
    float* out = dwt + (t + j) * k_count + k;
    if constexpr (KI == 4) {
      const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(acc[0][j], acc[1][j]), _mm256_hadd_ps(acc[2][j], acc[3][j]));
      const __m128 sums = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
      _mm_storeu_ps(out, _mm_add_ps(_mm_loadu_ps(out), sums));
    } else {
      for (int i = 0; i < KI; ++i) out[i] += hsum(acc[i][j]);
    }
  }
}

// One KI x RJ tile (KI output channels from k, RJ taps from t) over images [n0, n1):
// for every image and pixel vector, RJ input vectors read in place at the taps'
// offsets and KI output-gradient vectors, KI * RJ FMAs.
template <int KI, int RJ>
void implicit_tile(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0, std::int64_t n1,
                   std::int64_t k, std::int64_t t, float* dwt) {
  const std::int64_t plane = g.oh * g.ow, image_x = g.c * g.h * g.w, image_dy = g.k * plane;
  __m256 acc[KI][RJ];
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_setzero_ps();
  std::int64_t off[RJ];
  for (int j = 0; j < RJ; ++j) off[j] = g.tap_offset[t + j];
  for (std::int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * image_x;
    const float* dyn = dy + n * image_dy + k * plane;
    if (g.ow == 8) {  // one vector per output row (LeNet's conv2): no inner column loop
      const float* xp[RJ];
      for (int j = 0; j < RJ; ++j) xp[j] = xn + off[j];
      for (std::int64_t oy = 0; oy < g.oh; ++oy) {
        __m256 c[RJ];
        for (int j = 0; j < RJ; ++j) c[j] = _mm256_loadu_ps(xp[j] + oy * g.w);
        for (int i = 0; i < KI; ++i) {
          const __m256 d = _mm256_loadu_ps(dyn + i * plane + oy * 8);
          for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_fmadd_ps(d, c[j], acc[i][j]);
        }
      }
      continue;
    }
    for (std::int64_t oy = 0; oy < g.oh; ++oy) {
      const float* xr = xn + oy * g.w;
      const float* dr = dyn + oy * g.ow;
      for (std::int64_t ox = 0; ox < g.ow; ox += 8) {
        __m256 c[RJ];
        for (int j = 0; j < RJ; ++j) c[j] = _mm256_loadu_ps(xr + off[j] + ox);
        for (int i = 0; i < KI; ++i) {
          const __m256 d = _mm256_loadu_ps(dr + i * plane + ox);
          for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_fmadd_ps(d, c[j], acc[i][j]);
        }
      }
    }
  }
  flush_tile<KI, RJ>(acc, g.k, k, t, dwt);
}

template <int KI>
void implicit_row(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0, std::int64_t n1,
                  std::int64_t k, float* dwt) {
  std::int64_t t = 0;
  for (; t + 3 <= g.rows; t += 3) implicit_tile<KI, 3>(g, x, dy, n0, n1, k, t, dwt);
  if (g.rows - t == 2) implicit_tile<KI, 2>(g, x, dy, n0, n1, k, t, dwt);
  else if (g.rows - t == 1) implicit_tile<KI, 1>(g, x, dy, n0, n1, k, t, dwt);
}

}  // namespace

void backward_weights_implicit_avx2(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0,
                                    std::int64_t n1, float* dwt) {
  const std::int64_t block = implicit_block_images(g.oh * g.ow);
  for (std::int64_t b0 = n0; b0 < n1; b0 += block) {
    const std::int64_t b1 = std::min(n1, b0 + block);
    std::int64_t k = 0;
    for (; k + 4 <= g.k; k += 4) implicit_row<4>(g, x, dy, b0, b1, k, dwt);
    switch (g.k - k) {
      case 3: implicit_row<3>(g, x, dy, b0, b1, k, dwt); break;
      case 2: implicit_row<2>(g, x, dy, b0, b1, k, dwt); break;
      case 1: implicit_row<1>(g, x, dy, b0, b1, k, dwt); break;
      default: break;
    }
  }
}

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {

void col2im_w8_avx2(const float* col, std::int64_t ld, std::int64_t c, std::int64_t h, std::int64_t w,
                    std::int64_t kh, std::int64_t kw, std::int64_t oh, float* dx) {
  // lo_mask[s]: lanes >= s (the tap's columns s..7 of [0, 8)); hi_mask[s]: lanes < s
  // (its columns 8..8+s-1, from the vector's last s lanes).
  alignas(32) static const std::int32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(ramp));
  for (std::int64_t ci = 0; ci < c; ++ci) {
    for (std::int64_t iy = 0; iy < h; ++iy) {
      __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
      const std::int64_t r0 = iy - oh + 1 > 0 ? iy - oh + 1 : 0, r1 = iy + 1 < kh ? iy + 1 : kh;
      for (std::int64_t r = r0; r < r1; ++r) {
        const float* row = col + (ci * kh + r) * kw * ld + (iy - r) * 8;
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(row));
        for (std::int64_t s = 1; s < kw; ++s) {
          const float* v = row + s * ld;
          const __m256i shift = _mm256_set1_epi32(static_cast<int>(s));
          const __m256 lo_mask = _mm256_castsi256_ps(_mm256_cmpgt_epi32(lanes, _mm256_sub_epi32(shift, _mm256_set1_epi32(1))));
          lo = _mm256_add_ps(lo, _mm256_and_ps(lo_mask, _mm256_loadu_ps(v - s)));
          hi = _mm256_add_ps(hi, _mm256_andnot_ps(lo_mask, _mm256_loadu_ps(v + 8 - s)));
        }
      }
      float* out = dx + (ci * h + iy) * w;
      if (w >= 8) {
        _mm256_storeu_ps(out, lo);
        alignas(32) float tail[8];
        _mm256_store_ps(tail, hi);
        for (std::int64_t i = 8; i < w; ++i) out[i] = tail[i - 8];
      } else {
        alignas(32) float head[8];
        _mm256_store_ps(head, lo);
        for (std::int64_t i = 0; i < w; ++i) out[i] = head[i];
      }
    }
  }
}

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {
namespace {

// KI output channels from k x RJ pixel vectors of the batch from v (vector v is
// image v / per_image, output row (v % per_image) / (ow / 8), columns from
// 8 * (v % (ow / 8)); a tile may span images).
template <int KI, int RJ>
void forward_tile(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias, std::int64_t k,
                  std::int64_t v, float* y) {
  const std::int64_t per_row = g.ow / 8, plane = g.oh * g.ow, per_image = plane / 8;
  const float* xv[RJ];
  float* yv[RJ];
  for (int j = 0; j < RJ; ++j) {
    const std::int64_t n = (v + j) / per_image, rem = (v + j) % per_image;
    xv[j] = x + n * g.c * g.h * g.w + (rem / per_row) * g.w + 8 * (rem % per_row);
    yv[j] = y + n * g.k * plane + rem * 8;
  }
  __m256 acc[KI][RJ];
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_setzero_ps();
  const float* wk = w + k * g.rows;
  const std::int64_t* offsets = g.tap_offset;
  const std::int64_t rows = g.rows;
  if constexpr (KI == 4 && RJ == 3) {
    // Spelled out: with the array form GCC stores the accumulators every tap. The
    // bias starts the sums (added at the end in the other tiles).
    const bool with_bias = bias != nullptr;
    __m256 a00 = with_bias ? _mm256_set1_ps(bias[k]) : acc[0][0], a01 = a00, a02 = a00;
    __m256 a10 = with_bias ? _mm256_set1_ps(bias[k + 1]) : acc[0][0], a11 = a10, a12 = a10;
    __m256 a20 = with_bias ? _mm256_set1_ps(bias[k + 2]) : acc[0][0], a21 = a20, a22 = a20;
    __m256 a30 = with_bias ? _mm256_set1_ps(bias[k + 3]) : acc[0][0], a31 = a30, a32 = a30;
    bias = nullptr;
    const float *x0 = xv[0], *x1 = xv[1], *x2 = xv[2];
    const float *w0 = wk, *w1 = wk + rows, *w2 = wk + 2 * rows, *w3 = wk + 3 * rows;
    for (std::int64_t t = 0; t < rows; ++t) {
      const std::int64_t off = offsets[t];
      const __m256 c0 = _mm256_loadu_ps(x0 + off), c1 = _mm256_loadu_ps(x1 + off), c2 = _mm256_loadu_ps(x2 + off);
      __m256 wi = _mm256_broadcast_ss(w0 + t);
      a00 = _mm256_fmadd_ps(wi, c0, a00); a01 = _mm256_fmadd_ps(wi, c1, a01); a02 = _mm256_fmadd_ps(wi, c2, a02);
      wi = _mm256_broadcast_ss(w1 + t);
      a10 = _mm256_fmadd_ps(wi, c0, a10); a11 = _mm256_fmadd_ps(wi, c1, a11); a12 = _mm256_fmadd_ps(wi, c2, a12);
      wi = _mm256_broadcast_ss(w2 + t);
      a20 = _mm256_fmadd_ps(wi, c0, a20); a21 = _mm256_fmadd_ps(wi, c1, a21); a22 = _mm256_fmadd_ps(wi, c2, a22);
      wi = _mm256_broadcast_ss(w3 + t);
      a30 = _mm256_fmadd_ps(wi, c0, a30); a31 = _mm256_fmadd_ps(wi, c1, a31); a32 = _mm256_fmadd_ps(wi, c2, a32);
    }
    acc[0][0] = a00; acc[0][1] = a01; acc[0][2] = a02; acc[1][0] = a10; acc[1][1] = a11; acc[1][2] = a12;
    acc[2][0] = a20; acc[2][1] = a21; acc[2][2] = a22; acc[3][0] = a30; acc[3][1] = a31; acc[3][2] = a32;
  } else {
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int64_t off = offsets[t];
    __m256 c[RJ];
    for (int j = 0; j < RJ; ++j) c[j] = _mm256_loadu_ps(xv[j] + off);
    for (int i = 0; i < KI; ++i) {
      const __m256 wi = _mm256_broadcast_ss(wk + i * rows + t);
      for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_fmadd_ps(wi, c[j], acc[i][j]);
    }
  }
  }
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) _mm256_storeu_ps(yv[j] + (k + i) * plane, acc[i][j]);
  if (bias == nullptr) return;
  for (int i = 0; i < KI; ++i) {
    const __m256 b = _mm256_set1_ps(bias[k + i]);
    for (int j = 0; j < RJ; ++j) {
      float* out = yv[j] + (k + i) * plane;
      _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out), b));
    }
  }
}

template <int KI>
void forward_channels(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias, std::int64_t k,
                      std::int64_t v0, std::int64_t v1, float* y) {
  std::int64_t v = v0;
  for (; v + 3 <= v1; v += 3) forward_tile<KI, 3>(g, x, w, bias, k, v, y);
  if (v1 - v == 2) forward_tile<KI, 2>(g, x, w, bias, k, v, y);
  else if (v1 - v == 1) forward_tile<KI, 1>(g, x, w, bias, k, v, y);
}

}  // namespace

void forward_implicit_avx2(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias,
                           std::int64_t v0, std::int64_t v1, float* y) {
  std::int64_t k = 0;
  for (; k + 4 <= g.k; k += 4) forward_channels<4>(g, x, w, bias, k, v0, v1, y);
  switch (g.k - k) {
    case 3: forward_channels<3>(g, x, w, bias, k, v0, v1, y); break;
    case 2: forward_channels<2>(g, x, w, bias, k, v0, v1, y); break;
    case 1: forward_channels<1>(g, x, w, bias, k, v0, v1, y); break;
    default: break;
  }
}

}  // namespace taihu::dnn::conv::minibatch_kernels

namespace taihu::dnn::conv::minibatch_kernels {
namespace {

template <int KI, int RJ>
void packed_tile(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count, const std::int64_t* offset,
                 std::int64_t k, std::int64_t t, float* dwt) {
  __m256 acc[KI][RJ];
  for (int i = 0; i < KI; ++i)
    for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_setzero_ps();
  const float* xs[RJ];
  for (int j = 0; j < RJ; ++j) xs[j] = x + offset[t + j];
  const float* d0 = dy + k * steps * 8;
  const std::int64_t dstride = steps * 8;
  for (std::int64_t p = 0; p < steps; ++p) {
    __m256 c[RJ];
    for (int j = 0; j < RJ; ++j) c[j] = _mm256_loadu_ps(xs[j] + p * 16);
    for (int i = 0; i < KI; ++i) {
      const __m256 d = _mm256_load_ps(d0 + i * dstride + p * 8);
      for (int j = 0; j < RJ; ++j) acc[i][j] = _mm256_fmadd_ps(d, c[j], acc[i][j]);
    }
  }
  flush_tile<KI, RJ>(acc, k_count, k, t, dwt);
}

template <int KI>
void packed_row(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count, std::int64_t rows,
                const std::int64_t* offset, std::int64_t k, float* dwt) {
  std::int64_t t = 0;
  for (; t + 3 <= rows; t += 3) packed_tile<KI, 3>(x, dy, steps, k_count, offset, k, t, dwt);
  if (rows - t == 2) packed_tile<KI, 2>(x, dy, steps, k_count, offset, k, t, dwt);
  else if (rows - t == 1) packed_tile<KI, 1>(x, dy, steps, k_count, offset, k, t, dwt);
}

}  // namespace

void backward_weights_packed_avx2(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count,
                                  std::int64_t rows, const std::int64_t* offset, float* dwt) {
  std::int64_t k = 0;
  for (; k + 4 <= k_count; k += 4) packed_row<4>(x, dy, steps, k_count, rows, offset, k, dwt);
  switch (k_count - k) {
    case 3: packed_row<3>(x, dy, steps, k_count, rows, offset, k, dwt); break;
    case 2: packed_row<2>(x, dy, steps, k_count, rows, offset, k, dwt); break;
    case 1: packed_row<1>(x, dy, steps, k_count, rows, offset, k, dwt); break;
    default: break;
  }
}

}  // namespace taihu::dnn::conv::minibatch_kernels
