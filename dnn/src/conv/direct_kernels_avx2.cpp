// AVX2 direct-convolution micro-kernels (see direct_kernels.hpp).
//   forward: 4 output channels x 3 slots of 8 pixels = 12 accumulators; per tap three
//     input vectors loaded in place and four weight broadcasts (7 loads per 12 FMAs).
//   backward-weights: 3 output channels x 4 weight columns = 12 accumulators; per 8
//     pixels three dy vectors and four input vectors (7 loads per 12 FMAs).
// Edge tiles (fewer channels, pixels or columns) are separate instantiations, so the
// inner loops of full tiles carry no masks or bounds.
#include <immintrin.h>

#include <array>

#include "direct_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

// The first `n` (0..8) lanes set.
__m256i lane_mask(int n) {
  alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - n));
}

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// MR output channels x NV slots; MASKED: the last slot's load is masked.
template <int MR, int NV, bool MASKED>
void fwd_tile(const DirectFwdArgs& a) {
  const __m256i load_mask = lane_mask(MASKED ? a.lanes[NV - 1] : 8);
  __m256 acc[MR][NV];
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_setzero_ps();
  const float* xv_base[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) xv_base[v] = a.x + a.x_off[v];
  // One tap: NV input vectors at offset o, MR weight broadcasts from wt.
  auto step = [&](std::int64_t o, const float* wt) __attribute__((always_inline)) {
    __m256 xv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      xv[v] = (MASKED && v == NV - 1) ? _mm256_maskload_ps(xv_base[v] + o, load_mask)
                                      : _mm256_loadu_ps(xv_base[v] + o);
#pragma GCC unroll 4
    for (int m = 0; m < MR; ++m) {
      const __m256 wb = _mm256_broadcast_ss(wt + m);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_fmadd_ps(wb, xv[v], acc[m][v]);
    }
  };
  const std::int64_t taps = a.taps;
  if (taps == 1) {  // 1x1: one flat loop over the channels
    for (std::int64_t c = 0; c < a.channels; ++c) step(c * a.chan_stride + a.tap_off[0], a.w + c * 4);
  } else {
    for (std::int64_t c = 0; c < a.channels; ++c) {
      const std::int64_t cofs = c * a.chan_stride;
      const float* wc = a.w + c * taps * 4;
      for (std::int64_t t = 0; t < taps; ++t) step(cofs + a.tap_off[t], wc + t * 4);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const bool part = a.lanes[v] < 8;
    const __m256i mask = lane_mask(a.lanes[v]);
#pragma GCC unroll 4
    for (int m = 0; m < MR; ++m) {
      float* yr = a.y + m * a.y_kstride + a.y_off[v];
      __m256 val = acc[m][v];
      if (a.accumulate)
        val = _mm256_add_ps(val, part ? _mm256_maskload_ps(yr, mask) : _mm256_loadu_ps(yr));
      else if (a.bias)
        val = _mm256_add_ps(val, _mm256_set1_ps(a.bias[m]));
      if (part)
        _mm256_maskstore_ps(yr, mask, val);
      else
        _mm256_storeu_ps(yr, val);
    }
  }
}

template <int MR, int NT>
void bwdw_tile(const DirectBwdwArgs& a) {
  __m256 acc[MR][NT];
  #pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
    #pragma GCC unroll 4
    for (int j = 0; j < NT; ++j) acc[m][j] = _mm256_setzero_ps();
  const std::int64_t n = a.x1 - a.x0, full = n / 8 * 8;
  const __m256i mask = lane_mask(static_cast<int>(n - full));
  for (std::int64_t ir = 0; ir < a.images * a.out_rows; ++ir) {
    const std::int64_t img = ir / a.out_rows, r = ir - img * a.out_rows;
    const float* dyr = a.dy + img * a.dy_image_stride + r * a.dy_row_stride + a.x0;
    const float* xr = a.x + img * a.x_image_stride + r * a.x_row_stride + a.x0;
    const float* xj[NT];
    #pragma GCC unroll 4
    for (int j = 0; j < NT; ++j) xj[j] = xr + a.col_off[j];
    for (std::int64_t i = 0; i < full; i += 8) {
      __m256 d[MR];
      #pragma GCC unroll 4
      for (int m = 0; m < MR; ++m) d[m] = _mm256_loadu_ps(dyr + m * a.dy_kstride + i);
      #pragma GCC unroll 4
      for (int j = 0; j < NT; ++j) {
        const __m256 xv = _mm256_loadu_ps(xj[j] + i);
        #pragma GCC unroll 4
        for (int m = 0; m < MR; ++m) acc[m][j] = _mm256_fmadd_ps(d[m], xv, acc[m][j]);
      }
    }
    if (full < n) {
      __m256 d[MR];
      #pragma GCC unroll 4
      for (int m = 0; m < MR; ++m) d[m] = _mm256_maskload_ps(dyr + m * a.dy_kstride + full, mask);
      #pragma GCC unroll 4
      for (int j = 0; j < NT; ++j) {
        const __m256 xv = _mm256_maskload_ps(xj[j] + full, mask);
        #pragma GCC unroll 4
        for (int m = 0; m < MR; ++m) acc[m][j] = _mm256_fmadd_ps(d[m], xv, acc[m][j]);
      }
    }
  }
  #pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
    #pragma GCC unroll 4
    for (int j = 0; j < NT; ++j) a.dw[m * a.dw_kstride + j] += hsum(acc[m][j]);
}

using FwdFn = void (*)(const DirectFwdArgs&);
using BwdwFn = void (*)(const DirectBwdwArgs&);

template <int MR, int NV>
constexpr std::array<FwdFn, 2> fwd_pair() {
  return {&fwd_tile<MR, NV, false>, &fwd_tile<MR, NV, true>};
}

// [rows-1][vectors-1][masked]
constexpr std::array<std::array<std::array<FwdFn, 2>, 3>, 4> kFwd = {{
    {{fwd_pair<1, 1>(), fwd_pair<1, 2>(), fwd_pair<1, 3>()}},
    {{fwd_pair<2, 1>(), fwd_pair<2, 2>(), fwd_pair<2, 3>()}},
    {{fwd_pair<3, 1>(), fwd_pair<3, 2>(), fwd_pair<3, 3>()}},
    {{fwd_pair<4, 1>(), fwd_pair<4, 2>(), fwd_pair<4, 3>()}},
}};

// [rows-1][cols-1]
constexpr std::array<std::array<BwdwFn, 4>, 3> kBwdw = {{
    {{&bwdw_tile<1, 1>, &bwdw_tile<1, 2>, &bwdw_tile<1, 3>, &bwdw_tile<1, 4>}},
    {{&bwdw_tile<2, 1>, &bwdw_tile<2, 2>, &bwdw_tile<2, 3>, &bwdw_tile<2, 4>}},
    {{&bwdw_tile<3, 1>, &bwdw_tile<3, 2>, &bwdw_tile<3, 3>, &bwdw_tile<3, 4>}},
}};

}  // namespace

void direct_fwd_avx2(const DirectFwdArgs& a) { kFwd[a.rows - 1][a.slots - 1][a.mask_last_load](a); }

void direct_bwdw_avx2(const DirectBwdwArgs& a) { kBwdw[a.rows - 1][a.cols - 1](a); }

}  // namespace taihu::dnn::conv
