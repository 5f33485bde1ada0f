// The minibatch algorithm's AVX-512 kernels (contracts in minibatch_kernels.hpp, the
// same as the AVX2 kernels of the same name), on VecAvx512's 16 lanes:
//   - backward_weights_small: tiles of 4 output channels x 6 weight columns (24 zmm
//     accumulators) over blocks of pixels, the pixel tail through masked loads;
//   - the implicit kernels (forward, backward-weights, packed backward-weights): a
//     vector is two 8-pixel segments of the AVX2 kernels' numbering (two output rows,
//     or two images' rows in the packed streams), loaded as two 8-float blocks
//     (V::load_blocks), so every layer the AVX2 kernels take (output width a multiple
//     of 8, LeNet's 8 and 24 included) runs at full width; an odd segment left over is
//     a half vector (masked). Forward: 4 channels x 4 vectors (16 accumulators);
//     backward-weights: 4 channels x 6 taps (24).
// Sums run in another order than AVX2's: the results agree to float rounding, not
// bitwise (each ISA is deterministic for a thread count).
#include <immintrin.h>

#include <algorithm>

#include "conv/kernels/avx512/vec_avx512.hpp"
#include "conv/minibatch_kernels.hpp"

namespace taihu::dnn::conv::minibatch_kernels {
namespace {

using V = kernels::VecAvx512;
using Reg = V::Reg;
static_assert(V::W == 16, "a vector is two 8-pixel segments");

// (Not _mm512_reduce_add_ps or the 512 -> 256-bit cast: GCC 12 flags their undefined pass-through as uninitialized.)
inline float hsum(Reg v) {
  const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}
inline V::Mask half() { return V::first(8); }

// --- backward-weights, few weight columns --------------------------------------------

template <int KI, int RJ>
void small_tile(const float* dy, const float* col, std::int64_t ld, std::int64_t rows, std::int64_t p0,
                std::int64_t p1, float* dw) {
  Reg acc[KI][RJ];
  #pragma GCC unroll 8
  for (int i = 0; i < KI; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) acc[i][j] = V::zero();
  std::int64_t p = p0;
  for (; p + V::W <= p1; p += V::W) {
    Reg c[RJ];
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) c[j] = V::loadu(col + j * ld + p);
    #pragma GCC unroll 8
    for (int i = 0; i < KI; ++i) {
      const Reg d = V::loadu(dy + i * ld + p);
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(d, c[j], acc[i][j]);
    }
  }
  if (p < p1) {  // the last < 16 pixels: masked-off lanes are zero in both operands
    const V::Mask m = V::first(static_cast<int>(p1 - p));
    Reg c[RJ];
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) c[j] = V::load_first(col + j * ld + p, m);
    #pragma GCC unroll 8
    for (int i = 0; i < KI; ++i) {
      const Reg d = V::load_first(dy + i * ld + p, m);
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(d, c[j], acc[i][j]);
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < KI; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) dw[i * rows + j] += hsum(acc[i][j]);
}

template <int KI>
void small_row(const float* dy, const float* col, std::int64_t ld, std::int64_t rows, std::int64_t p0, std::int64_t p1,
               float* dw) {
  std::int64_t r = 0;
  for (; r + 6 <= rows; r += 6) small_tile<KI, 6>(dy, col + r * ld, ld, rows, p0, p1, dw + r);
  switch (rows - r) {
    case 5: small_tile<KI, 5>(dy, col + r * ld, ld, rows, p0, p1, dw + r); break;
    case 4: small_tile<KI, 4>(dy, col + r * ld, ld, rows, p0, p1, dw + r); break;
    case 3: small_tile<KI, 3>(dy, col + r * ld, ld, rows, p0, p1, dw + r); break;
    case 2: small_tile<KI, 2>(dy, col + r * ld, ld, rows, p0, p1, dw + r); break;
    case 1: small_tile<KI, 1>(dy, col + r * ld, ld, rows, p0, p1, dw + r); break;
    default: break;
  }
}

// Adds a tile's sums to the per-thread partial dwt[tap][channel] (k_count channels).
template <int KI, int RJ>
inline void flush_tile(const Reg (&acc)[KI][RJ], std::int64_t k_count, std::int64_t k, std::int64_t t, float* dwt) {
  #pragma GCC unroll 8
  for (int j = 0; j < RJ; ++j) {
    float* out = dwt + (t + j) * k_count + k;
    #pragma GCC unroll 8
    for (int i = 0; i < KI; ++i) out[i] += hsum(acc[i][j]);
  }
}

// Calls TILE<KI, RJ> for the taps [0, rows) in tiles of 6 taps and one remainder tile.
#define TAIHU_MINIBATCH_TAP_TILES(TILE, KI, rows, ...)                 \
  do {                                                                 \
    std::int64_t t_ = 0;                                               \
    for (; t_ + 6 <= (rows); t_ += 6) TILE<KI, 6>(__VA_ARGS__, t_);    \
    switch ((rows) - t_) {                                             \
      case 5: TILE<KI, 5>(__VA_ARGS__, t_); break;                     \
      case 4: TILE<KI, 4>(__VA_ARGS__, t_); break;                     \
      case 3: TILE<KI, 3>(__VA_ARGS__, t_); break;                     \
      case 2: TILE<KI, 2>(__VA_ARGS__, t_); break;                     \
      case 1: TILE<KI, 1>(__VA_ARGS__, t_); break;                     \
      default: break;                                                  \
    }                                                                  \
  } while (0)

// Channel tiles of 4 and one remainder: ROW<KI>(args..., k).
#define TAIHU_MINIBATCH_CHANNEL_ROWS(ROW, channels, ...)               \
  do {                                                                 \
    std::int64_t k_ = 0;                                               \
    for (; k_ + 4 <= (channels); k_ += 4) ROW<4>(__VA_ARGS__, k_);     \
    switch ((channels) - k_) {                                         \
      case 3: ROW<3>(__VA_ARGS__, k_); break;                          \
      case 2: ROW<2>(__VA_ARGS__, k_); break;                          \
      case 1: ROW<1>(__VA_ARGS__, k_); break;                          \
      default: break;                                                  \
    }                                                                  \
  } while (0)

// --- implicit backward-weights --------------------------------------------------------

// KI channels from k x RJ taps from t over images [n0, n1): per image, the output plane's
// 8-pixel segments in pairs (row by row; a pair may straddle two output rows).
template <int KI, int RJ>
void implicit_tile(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0, std::int64_t n1,
                   float* dwt, std::int64_t k, std::int64_t t) {
  const std::int64_t plane = g.oh * g.ow, image_x = g.c * g.h * g.w, image_dy = g.k * plane, segments = plane / 8;
  Reg acc[KI][RJ];
  #pragma GCC unroll 8
  for (int i = 0; i < KI; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) acc[i][j] = V::zero();
  std::int64_t off[RJ];
  #pragma GCC unroll 8
  for (int j = 0; j < RJ; ++j) off[j] = g.tap_offset[t + j];
  for (std::int64_t n = n0; n < n1; ++n) {
    const float* xn = x + n * image_x;
    const float* dyn = dy + n * image_dy + k * plane;
    // The input offset of the current segment (output row oy, column col): + 8 per
    // segment, + (w - ow) more at the end of a row.
    std::int64_t at = 0, col = 0;
    std::int64_t q = 0;
    for (; q + 2 <= segments; q += 2) {
      const float* lo = xn + at;
      col += 8, at += 8;
      if (col == g.ow) col = 0, at += g.w - g.ow;
      const float* hi = xn + at;
      col += 8, at += 8;
      if (col == g.ow) col = 0, at += g.w - g.ow;
      Reg c[RJ];
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) c[j] = V::load_blocks(lo + off[j], hi + off[j]);
      #pragma GCC unroll 8
      for (int i = 0; i < KI; ++i) {
        const Reg d = V::loadu(dyn + i * plane + q * 8);
        #pragma GCC unroll 8
        for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(d, c[j], acc[i][j]);
      }
    }
    if (q < segments) {  // an odd segment: the upper lanes are zero
      Reg c[RJ];
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) c[j] = V::load_first(xn + at + off[j], half());
      #pragma GCC unroll 8
      for (int i = 0; i < KI; ++i) {
        const Reg d = V::load_first(dyn + i * plane + q * 8, half());
        #pragma GCC unroll 8
        for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(d, c[j], acc[i][j]);
      }
    }
  }
  flush_tile<KI, RJ>(acc, g.k, k, t, dwt);
}

template <int KI>
void implicit_row(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0, std::int64_t n1,
                  float* dwt, std::int64_t k) {
  TAIHU_MINIBATCH_TAP_TILES(implicit_tile, KI, g.rows, g, x, dy, n0, n1, dwt, k);
}

// --- implicit forward ------------------------------------------------------------------

// KI output channels from k x RJ vectors = `count` (2 RJ or 2 RJ - 1) 8-pixel segments
// of the batch from v (numbered image by image, row by row); bias starts the sums.
template <int KI, int RJ>
void forward_tile(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias, std::int64_t k,
                  std::int64_t v, int count, float* y) {
  const std::int64_t per_row = g.ow / 8, plane = g.oh * g.ow, per_image = plane / 8;
  const float* xs[2 * RJ];
  float* ys[2 * RJ];
  #pragma GCC unroll 8
  for (int s = 0; s < 2 * RJ; ++s) {
    const std::int64_t vv = v + std::min(s, count - 1);  // a missing last segment repeats its neighbour
    const std::int64_t n = vv / per_image, rem = vv % per_image;
    xs[s] = x + n * g.c * g.h * g.w + (rem / per_row) * g.w + 8 * (rem % per_row);
    ys[s] = y + n * g.k * plane + rem * 8;
  }
  Reg acc[KI][RJ];
  #pragma GCC unroll 8
  for (int i = 0; i < KI; ++i) {
    const Reg b = bias ? V::set1(bias[k + i]) : V::zero();
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) acc[i][j] = b;
  }
  const float* wk = w + k * g.rows;
  const std::int64_t rows = g.rows;
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int64_t off = g.tap_offset[t];
    Reg c[RJ];
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) c[j] = V::load_blocks(xs[2 * j] + off, xs[2 * j + 1] + off);
    #pragma GCC unroll 8
    for (int i = 0; i < KI; ++i) {
      const Reg wi = V::bcast(wk + i * rows + t);
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(wi, c[j], acc[i][j]);
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < KI; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) {
      float* lo = ys[2 * j] + (k + i) * plane;
      if (2 * j + 1 < count) V::store_blocks(lo, ys[2 * j + 1] + (k + i) * plane, acc[i][j]);
      else V::store_first(lo, half(), acc[i][j]);
    }
}

template <int KI>
void forward_channels(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias,
                      std::int64_t v0, std::int64_t v1, float* y, std::int64_t k) {
  std::int64_t v = v0;
  for (; v + 8 <= v1; v += 8) forward_tile<KI, 4>(g, x, w, bias, k, v, 8, y);
  const int rest = static_cast<int>(v1 - v);  // 0..7 segments: 7 is 3 pairs and a half vector
  switch ((rest + 1) / 2) {
    case 4: forward_tile<KI, 4>(g, x, w, bias, k, v, rest, y); break;
    case 3: forward_tile<KI, 3>(g, x, w, bias, k, v, rest, y); break;
    case 2: forward_tile<KI, 2>(g, x, w, bias, k, v, rest, y); break;
    case 1: forward_tile<KI, 1>(g, x, w, bias, k, v, rest, y); break;
    default: break;
  }
}

// --- packed backward-weights ---------------------------------------------------------

// Steps p and p + 1 in one vector: dy's two 8-float rows are adjacent, x's are 16
// floats apart.
template <int KI, int RJ>
void packed_tile(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count, const std::int64_t* offset,
                 float* dwt, std::int64_t k, std::int64_t t) {
  Reg acc[KI][RJ];
  #pragma GCC unroll 8
  for (int i = 0; i < KI; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) acc[i][j] = V::zero();
  const float* xs[RJ];
  #pragma GCC unroll 8
  for (int j = 0; j < RJ; ++j) xs[j] = x + offset[t + j];
  const float* d0 = dy + k * steps * 8;
  const std::int64_t dstride = steps * 8;
  std::int64_t p = 0;
  for (; p + 2 <= steps; p += 2) {
    Reg c[RJ];
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) c[j] = V::load_blocks(xs[j] + p * 16, xs[j] + p * 16 + 16);
    #pragma GCC unroll 8
    for (int i = 0; i < KI; ++i) {
      const Reg d = V::loadu(d0 + i * dstride + p * 8);
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(d, c[j], acc[i][j]);
    }
  }
  if (p < steps) {  // an odd last step: the upper lanes are zero
    Reg c[RJ];
    #pragma GCC unroll 8
    for (int j = 0; j < RJ; ++j) c[j] = V::load_first(xs[j] + p * 16, half());
    #pragma GCC unroll 8
    for (int i = 0; i < KI; ++i) {
      const Reg d = V::load_first(d0 + i * dstride + p * 8, half());
      #pragma GCC unroll 8
      for (int j = 0; j < RJ; ++j) acc[i][j] = V::fma(d, c[j], acc[i][j]);
    }
  }
  flush_tile<KI, RJ>(acc, k_count, k, t, dwt);
}

template <int KI>
void packed_row(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count, std::int64_t rows,
                const std::int64_t* offset, float* dwt, std::int64_t k) {
  TAIHU_MINIBATCH_TAP_TILES(packed_tile, KI, rows, x, dy, steps, k_count, offset, dwt, k);
}

}  // namespace

void backward_weights_small_avx512(const float* dy, const float* col, std::int64_t kg, std::int64_t rows,
                                   std::int64_t depth, std::int64_t ld, float* dw) {
  constexpr std::int64_t kBlock = 512;  // pixels per pass: dy and col rows stay in L1/L2
  for (std::int64_t p0 = 0; p0 < depth; p0 += kBlock) {
    const std::int64_t p1 = std::min(depth, p0 + kBlock);
    std::int64_t k = 0;
    for (; k + 4 <= kg; k += 4) small_row<4>(dy + k * ld, col, ld, rows, p0, p1, dw + k * rows);
    for (; k < kg; ++k) small_row<1>(dy + k * ld, col, ld, rows, p0, p1, dw + k * rows);
  }
}

void backward_weights_implicit_avx512(const ImplicitBwdWeights& g, const float* x, const float* dy, std::int64_t n0,
                                      std::int64_t n1, float* dwt) {
  const std::int64_t block = implicit_block_images(g.oh * g.ow);
  for (std::int64_t b0 = n0; b0 < n1; b0 += block) {
    const std::int64_t b1 = std::min(n1, b0 + block);
    TAIHU_MINIBATCH_CHANNEL_ROWS(implicit_row, g.k, g, x, dy, b0, b1, dwt);
  }
}

void forward_implicit_avx512(const ImplicitBwdWeights& g, const float* x, const float* w, const float* bias,
                             std::int64_t v0, std::int64_t v1, float* y) {
  TAIHU_MINIBATCH_CHANNEL_ROWS(forward_channels, g.k, g, x, w, bias, v0, v1, y);
}

void backward_weights_packed_avx512(const float* x, const float* dy, std::int64_t steps, std::int64_t k_count,
                                    std::int64_t rows, const std::int64_t* offset, float* dwt) {
  TAIHU_MINIBATCH_CHANNEL_ROWS(packed_row, k_count, x, dy, steps, k_count, rows, offset, dwt);
}

#undef TAIHU_MINIBATCH_TAP_TILES
#undef TAIHU_MINIBATCH_CHANNEL_ROWS

}  // namespace taihu::dnn::conv::minibatch_kernels
