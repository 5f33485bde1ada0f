// AVX2 direct-convolution micro-kernels (see direct_kernels.hpp).
//   forward: 4 output channels x 3 slots of 8 pixels = 12 accumulators; per tap three
//     input vectors loaded in place and four weight broadcasts (7 loads per 12 FMAs).
//   backward-weights: 16 output channels x 6 weight columns = 12 accumulators; per
//     pixel two dY^T vectors and six input broadcasts (8 loads per 12 FMAs, the
//     broadcasts walking six input rows sequentially).
// Edge tiles (fewer channels, pixels or columns) are separate instantiations, so the
// inner loops of full tiles carry no masks or bounds.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "conv/direct_kernels.hpp"
#include "core/transpose8x8_avx2.hpp"

namespace taihu::dnn::conv {

namespace {

// The first `n` (0..8) lanes set.
__m256i lane_mask(int n) {
  alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - n));
}

// MR output channels x NV slots; MASKED: the last slot's load is masked.
template <int MR, int NV, bool MASKED>
inline __attribute__((always_inline)) void fwd_block(const DirectFwdArgs& a, const float* w, float* y,
                                                    const float* bias) {
  const __m256i load_mask = lane_mask(MASKED ? a.lanes[NV - 1] : 8);
  __m256 acc[MR][NV];
#pragma GCC unroll 4
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_setzero_ps();
  const float* xv_base[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) xv_base[v] = a.x + a.x_off[v];
  // One 1x1 tap: NV input vectors at offset o, MR weight broadcasts from wt.
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
    for (std::int64_t c = 0; c < a.channels; ++c) step(c * a.chan_stride + a.tap_off[0], w + c * kDirectRows);
  } else {
    // Runs of consecutive taps walk pointers (one offset load per run, not per tap):
    // 10-20% faster than the per-tap offset on Zen 3.
    for (std::int64_t c = 0; c < a.channels; ++c) {
      const float* wt = w + c * taps * kDirectRows;
      const float* xc = a.x + c * a.chan_stride;
      std::int64_t t = 0;
      for (int r = 0; r < a.runs; ++r) {
        const float* xr[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) xr[v] = xc + a.x_off[v] + a.tap_off[t];
        const int len = a.run_len[r];
        for (int j = 0; j < len; ++j, wt += kDirectRows) {
          __m256 xv[NV];
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v)
            xv[v] = (MASKED && v == NV - 1) ? _mm256_maskload_ps(xr[v] + j, load_mask) : _mm256_loadu_ps(xr[v] + j);
#pragma GCC unroll 4
          for (int m = 0; m < MR; ++m) {
            const __m256 wb = _mm256_broadcast_ss(wt + m);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[m][v] = _mm256_fmadd_ps(wb, xv[v], acc[m][v]);
          }
        }
        t += len;
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const bool part = a.lanes[v] < 8;
    const __m256i mask = lane_mask(a.lanes[v]);
#pragma GCC unroll 4
    for (int m = 0; m < MR; ++m) {
      float* yr = y + m * a.y_kstride + a.y_off[v];
      __m256 val = acc[m][v];
      if (a.accumulate)
        val = _mm256_add_ps(val, part ? _mm256_maskload_ps(yr, mask) : _mm256_loadu_ps(yr));
      if (bias) val = _mm256_add_ps(val, _mm256_set1_ps(bias[m]));
      if (a.relu) val = _mm256_max_ps(_mm256_setzero_ps(), val);  // a NaN passes
      if (part)
        _mm256_maskstore_ps(yr, mask, val);
      else
        _mm256_storeu_ps(yr, val);
    }
  }
}

// V vectors of 8 output channels x NT weight columns.
// All of the call's channel blocks (one dispatch, the slot geometry kept in registers).
template <int MR, int NV, bool MASKED>
void fwd_tile(const DirectFwdArgs& a) {
  for (int kb = 0; kb < a.kblocks; ++kb)
    fwd_block<MR, NV, MASKED>(a, a.w + kb * a.w_kblock, a.y + kb * a.y_kblock, a.bias ? a.bias + kb * MR : nullptr);
}

inline __attribute__((always_inline)) void transpose8(__m256 r[8]);

// p[0..N) += v's first N lanes (N <= 3).
template <int N>
inline __attribute__((always_inline)) void add_part(float* p, __m128 v) {
  if constexpr (N >= 2) {
    // 8-byte loads/stores through the unaligned __m128i_u forms: p is only float-aligned,
    // and a double access there is undefined behaviour (UBSan reports it).
    const __m128 old = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_castps_si128(_mm_add_ps(old, v)));
  }
  if constexpr (N == 1 || N == 3) {
    const __m128 last = N == 3 ? _mm_movehl_ps(v, v) : v;
    _mm_store_ss(p + N - 1, _mm_add_ss(_mm_load_ss(p + N - 1), last));
  }
}

// row[0..N) += v's first N lanes (N <= 8), no float past row + N touched.
template <int N>
inline __attribute__((always_inline)) void add_row(float* row, __m256 v) {
  static_assert(N >= 1 && N <= 7);
  const __m128 lo = _mm256_castps256_ps128(v);
  if constexpr (N >= 4) {
    _mm_storeu_ps(row, _mm_add_ps(_mm_loadu_ps(row), lo));
    if constexpr (N > 4) add_part<N - 4>(row + 4, _mm256_extractf128_ps(v, 1));
  } else {
    add_part<N>(row, lo);
  }
}

template <int V, int NT>
void bwdw_tile(const DirectBwdwArgs& a) {
  __m256 acc[V][NT];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v)
#pragma GCC unroll 6
    for (int j = 0; j < NT; ++j) acc[v][j] = _mm256_setzero_ps();
  for (std::int64_t img = 0; img < a.images; ++img)
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const float* dr = a.dyt + img * a.dyt_image_stride + r * a.dyt_row_stride;
      const float* xr = a.x + img * a.x_image_stride + r * a.x_row_stride;
      const float* xj[NT];
#pragma GCC unroll 6
      for (int j = 0; j < NT; ++j) xj[j] = xr + a.col_off[j];
      for (std::int64_t i = 0; i < a.run; ++i, dr += a.kpad) {
        __m256 d[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) d[v] = _mm256_loadu_ps(dr + 8 * v);
#pragma GCC unroll 6
        for (int j = 0; j < NT; ++j) {
          const __m256 xb = _mm256_broadcast_ss(xj[j] + i);
#pragma GCC unroll 4
          for (int v = 0; v < V; ++v) acc[v][j] = _mm256_fmadd_ps(d[v], xb, acc[v][j]);
        }
      }
    }
  // dw rows: 8x8 register transposes of the NT columns (zero-padded to 8) give each
  // channel's NT consecutive dw entries as one vector (a 4 + 2 + 1 float load, add and
  // store per channel instead of NT scalar updates; AVX2's masked store is slow on Zen).
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    __m256 r[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) r[j] = j < NT ? acc[v][j < NT ? j : 0] : _mm256_setzero_ps();
    transpose8(r);  // r[m]: channel 8v + m's NT columns
    const int rows = a.channels - 8 * v < 8 ? a.channels - 8 * v : 8;
    float* dw = a.dw + 8 * v * a.dw_kstride;
    if (rows == 8) {
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) {
        add_row<NT>(dw + m * a.dw_kstride, r[m]);
      }
    } else {
      alignas(32) float rr[8][8];
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) _mm256_store_ps(rr[m], r[m]);
      for (int m = 0; m < rows; ++m) {
        add_row<NT>(dw + m * a.dw_kstride, _mm256_load_ps(rr[m]));
      }
    }
  }
}

// 8x8 transpose: r[i] lane j -> out[j] lane i.
inline __attribute__((always_inline)) void transpose8(__m256 r[8]) {
  __m256 t[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // r[i] (i < 4): columns i and i+4 of rows 0-3; r[4+i]: the same of rows 4-7.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m256 a = r[i], b = r[4 + i];
    t[i] = _mm256_permute2f128_ps(a, b, 0x20);
    t[i + 4] = _mm256_permute2f128_ps(a, b, 0x31);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}

// NB vectors of 8 output channels x NP pixels (see DirectOcvArgs); KW > 0: every
// kernel row is KW consecutive taps (unrolled, broadcasts at constant offsets from NP
// row pointers), 0: any tap offsets.
template <int NB, int KW>
inline __attribute__((always_inline)) void ocv_one_tile(const DirectOcvArgs& a, const std::int64_t* x_off,
                                                        float* out) {
  constexpr int NP = ocv_pixels(NB);
  __m256 acc[NB][NP];
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 6
    for (int p = 0; p < NP; ++p)
      acc[b][p] = a.accumulate  ? _mm256_loadu_ps(out + b * a.acc_bstride + p * 8)
                  : a.bias_init ? _mm256_loadu_ps(a.bias_init + 8 * b)
                                : _mm256_setzero_ps();
  // One tap: the smaller of the two operand sets is held in registers, the other
  // streamed through one register (12 accumulators + 4 or fewer + 1 <= 16 ymm).
  auto tap = [&](const float* const* px, const float* wt, int j) __attribute__((always_inline)) {
    if constexpr (NP <= NB) {
      __m256 xb[NP];
#pragma GCC unroll 6
      for (int p = 0; p < NP; ++p) xb[p] = _mm256_broadcast_ss(px[p] + j);
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) {
        const __m256 wv = _mm256_loadu_ps(wt + 8 * b);
#pragma GCC unroll 6
        for (int p = 0; p < NP; ++p) acc[b][p] = _mm256_fmadd_ps(wv, xb[p], acc[b][p]);
      }
    } else {
      __m256 wv[NB];
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) wv[b] = _mm256_loadu_ps(wt + 8 * b);
#pragma GCC unroll 6
      for (int p = 0; p < NP; ++p) {
        const __m256 xb = _mm256_broadcast_ss(px[p] + j);
#pragma GCC unroll 8
        for (int b = 0; b < NB; ++b) acc[b][p] = _mm256_fmadd_ps(wv[b], xb, acc[b][p]);
      }
    }
  };
  const std::int64_t taps = a.taps;
  const float* wt = a.w;
  for (std::int64_t c = 0; c < a.channels; ++c) {
    const float* xc = a.x + c * a.chan_stride;
    if constexpr (KW > 0) {
      for (std::int64_t t = 0; t < taps; t += KW) {
        const float* px[NP];
#pragma GCC unroll 6
        for (int p = 0; p < NP; ++p) px[p] = xc + a.tap_off[t] + x_off[p];
#pragma GCC unroll 16
        for (int j = 0; j < KW; ++j) tap(px, wt + j * NB * 8, j);
        wt += KW * NB * 8;
      }
    } else {
      for (std::int64_t t = 0; t < taps; ++t, wt += NB * 8) {
        const float* px[NP];
#pragma GCC unroll 6
        for (int p = 0; p < NP; ++p) px[p] = xc + a.tap_off[t] + x_off[p];
        tap(px, wt, 0);
      }
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b)
#pragma GCC unroll 6
    for (int p = 0; p < NP; ++p) _mm256_storeu_ps(out + b * a.acc_bstride + p * 8, acc[b][p]);
}

// The output lines of DirectOcvArgs::y_prefetch, a few per tile (into L2: L1 holds the
// weights and the scratch).
class OutputPrefetch {
 public:
  explicit OutputPrefetch(const DirectOcvArgs& a)
      : y_(a.y_prefetch), kstride_(a.y_kstride), pixels_(a.y_pixels), rows_(y_ ? a.y_rows : 0) {
    std::int64_t total = 0;
    for (std::int64_t r = 0; r < rows_; ++r) total += lines_of_row(r);
    per_tile_ = a.tiles > 0 ? (total + a.tiles - 1) / a.tiles : 0;
    left_ = total;
    if (rows_ > 0) row_lines_ = lines_of_row(0);
  }
  void step() {
    for (std::int64_t j = 0; j < per_tile_ && left_ > 0; ++j, --left_) {
      const auto first = reinterpret_cast<std::uintptr_t>(y_ + row_ * kstride_) & ~std::uintptr_t{63};
      _mm_prefetch(reinterpret_cast<const char*>(first + 64 * static_cast<std::uintptr_t>(line_)), _MM_HINT_T1);
      if (++line_ == row_lines_) {
        line_ = 0;
        if (++row_ < rows_) row_lines_ = lines_of_row(row_);
      }
    }
  }

 private:
  // The lines row r's pixels touch, exactly: a line past them may be another thread's
  // (the next chunk's), and a read prefetch of a line another core is writing takes it
  // away from that core.
  std::int64_t lines_of_row(std::int64_t r) const {
    const auto begin = reinterpret_cast<std::uintptr_t>(y_ + r * kstride_);
    const auto end = reinterpret_cast<std::uintptr_t>(y_ + r * kstride_ + pixels_);
    return static_cast<std::int64_t>((end - 1) / 64 - begin / 64 + 1);
  }

  const float* y_;
  std::int64_t kstride_, pixels_, rows_, per_tile_ = 0, left_ = 0, row_ = 0, line_ = 0, row_lines_ = 0;
};

template <int NB, int KW>
void ocv_tile(const DirectOcvArgs& a) {
  constexpr int NP = ocv_pixels(NB);
  OutputPrefetch pf(a);
  for (int i = 0; i < a.tiles; ++i) {
    pf.step();
    ocv_one_tile<NB, KW>(a, a.x_off + i * NP, a.acc + i * NP * 8);
  }
}

// The hot 4 x 3 tile with unrolled kernel rows, one inline-assembly block per tap:
// GCC's allocation of the intrinsics version varies with the surroundings (it spilled
// an accumulator or folded a weight load into two FMAs in some builds, 10-20% slower);
// here the 12 accumulators stay in registers and each tap is exactly oneDNN's
// sequence: three input broadcasts (ymm12-14), then per channel vector one weight load
// (ymm15) and three FMAs.
struct Acc4x3 {
  __m256 v[4][3];
};

// Tap J of a kernel row: inputs at x0..x2 + J, weights at wt + 32 J.
template <int J>
inline __attribute__((always_inline)) void ocv_tap_4x3(Acc4x3& acc, const float* x0, const float* x1,
                                                       const float* x2, const float* wt) {
  asm("vbroadcastss %c[xo](%[x0]), %%ymm12\n\t"
      "vbroadcastss %c[xo](%[x1]), %%ymm13\n\t"
      "vbroadcastss %c[xo](%[x2]), %%ymm14\n\t"
      "vmovups %c[wo](%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %[a00]\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %[a01]\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %[a02]\n\t"
      "vmovups %c[wo]+32(%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %[a10]\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %[a11]\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %[a12]\n\t"
      "vmovups %c[wo]+64(%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %[a20]\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %[a21]\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %[a22]\n\t"
      "vmovups %c[wo]+96(%[w]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %[a30]\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %[a31]\n\t"
      "vfmadd231ps %%ymm14, %%ymm15, %[a32]\n\t"
      : [a00] "+x"(acc.v[0][0]), [a01] "+x"(acc.v[0][1]), [a02] "+x"(acc.v[0][2]), [a10] "+x"(acc.v[1][0]),
        [a11] "+x"(acc.v[1][1]), [a12] "+x"(acc.v[1][2]), [a20] "+x"(acc.v[2][0]), [a21] "+x"(acc.v[2][1]),
        [a22] "+x"(acc.v[2][2]), [a30] "+x"(acc.v[3][0]), [a31] "+x"(acc.v[3][1]), [a32] "+x"(acc.v[3][2])
      : [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [w] "r"(wt), [xo] "i"(4 * J), [wo] "i"(128 * J)
      : "xmm12", "xmm13", "xmm14", "xmm15", "memory");
}

template <int... J>
inline __attribute__((always_inline)) void ocv_row_4x3(Acc4x3& acc, const float* x0, const float* x1,
                                                       const float* x2, const float* wt,
                                                       std::integer_sequence<int, J...>) {
  (ocv_tap_4x3<J>(acc, x0, x1, x2, wt), ...);
}

// All KW rows of a square kernel in straight-line code (no loop branch per row): row R's
// inputs are R row_steps below the first row's, its weights R * KW taps on. Only up to
// 5x5: 7x7 (931 instructions a channel) was no faster, and 11x11 made GCC spill the
// accumulators.
constexpr int kOcvStraightMaxWidth = 5;
constexpr int kOcvTileAhead = 3;  // output prefetch distance in tiles (2-4 alike in the A/B)
template <int KW, int... R>
inline __attribute__((always_inline)) void ocv_rows_4x3(Acc4x3& acc, const float* x0, const float* x1,
                                                        const float* x2, const float* wt,
                                                        std::int64_t row_step,
                                                        std::integer_sequence<int, R...>) {
  (
      [&] {
        ocv_row_4x3(acc, x0, x1, x2, wt + R * KW * 32, std::make_integer_sequence<int, KW>());
        x0 += row_step;
        x1 += row_step;
        x2 += row_step;
      }(),
      ...);
}

template <int KW>
void ocv_tile_4x3(const DirectOcvArgs& a) {
  const std::int64_t taps = a.taps;
  // An output written in place (nChw8c: y_prefetch == acc): each tile pulls into L2 the
  // lines tile i + kOcvTileAhead will write (its 96 bytes per channel vector lie in at
  // most two lines, and no line another thread writes), instead of OutputPrefetch's
  // spread over the chunk: CIFAR-10 conv1 +1-6% best, +4-8% median, ResNet-50 conv1
  // +3% in the in-process A/B.
  const bool own = a.y_prefetch != nullptr && a.y_prefetch == a.acc;
  DirectOcvArgs spread = a;
  if (own) spread.y_prefetch = nullptr;
  OutputPrefetch pf(spread);
  auto prefetch_tile = [&](int t) {
    const char* o = reinterpret_cast<const char*>(a.acc + 24 * t);
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) {
      _mm_prefetch(o + b * a.acc_bstride * 4, _MM_HINT_T1);
      _mm_prefetch(o + b * a.acc_bstride * 4 + 95, _MM_HINT_T1);
    }
  };
  if (own)
    for (int t = 0; t < kOcvTileAhead && t < a.tiles; ++t) prefetch_tile(t);
  for (int i = 0; i < a.tiles; ++i) {
    pf.step();
    if (own && i + kOcvTileAhead < a.tiles) prefetch_tile(i + kOcvTileAhead);
    const std::int64_t* x_off = a.x_off + 3 * i;
    float* out = a.acc + 24 * i;
    Acc4x3 acc;
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b)
#pragma GCC unroll 3
      for (int p = 0; p < 3; ++p)
        acc.v[b][p] = a.accumulate  ? _mm256_loadu_ps(out + b * a.acc_bstride + p * 8)
                      : a.bias_init ? _mm256_loadu_ps(a.bias_init + 8 * b)
                                    : _mm256_setzero_ps();
    // Kernel rows [t_begin, t_end) as taps: the union of the three pixels' rows inside
    // the image (the rest multiply zero padding).
    std::int64_t t_begin = 0, t_end = taps;
    if (a.row_span) {
      const std::int16_t* span = a.row_span + 3 * 2 * i;
      t_begin = KW * std::min({span[0], span[2], span[4]});
      t_end = KW * std::max({span[1], span[3], span[5]});
    }
    if (KW <= kOcvStraightMaxWidth && taps == KW * KW && t_begin == 0 && t_end == taps) {
      // Square kernel, every row: straight-line rows, no per-row loop (CIFAR-10 conv1
      // +1-3% in the in-process A/B; no PMU in this VM to say how much is the branch).
      const std::int64_t row_step = KW > 1 ? a.tap_off[KW] - a.tap_off[0] : 0;
      for (std::int64_t c = 0; c < a.channels; ++c) {
        const float* xc = a.x + c * a.chan_stride + a.tap_off[0];
        if constexpr (KW <= kOcvStraightMaxWidth)
          ocv_rows_4x3<KW>(acc, xc + x_off[0], xc + x_off[1], xc + x_off[2], a.w + c * taps * 32, row_step,
                           std::make_integer_sequence<int, KW>());
      }
    } else {
      for (std::int64_t c = 0; c < a.channels; ++c) {
        const float* xc = a.x + c * a.chan_stride;
        const float* wt = a.w + (c * taps + t_begin) * 32;
        for (std::int64_t t = t_begin; t < t_end; t += KW) {
          const float* x0 = xc + a.tap_off[t] + x_off[0];
          const float* x1 = xc + a.tap_off[t] + x_off[1];
          const float* x2 = xc + a.tap_off[t] + x_off[2];
          ocv_row_4x3(acc, x0, x1, x2, wt, std::make_integer_sequence<int, KW>());
          wt += KW * 32;
        }
      }
    }
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b)
#pragma GCC unroll 3
      for (int p = 0; p < 3; ++p) _mm256_storeu_ps(out + b * a.acc_bstride + p * 8, acc.v[b][p]);
  }
}

using OcvFn = void (*)(const DirectOcvArgs&);
template <int KW>
constexpr std::array<OcvFn, kOcvMaxBlocks> ocv_row() {
  if constexpr (KW > 0)
    return {&ocv_tile<1, KW>, &ocv_tile<2, KW>, &ocv_tile<3, KW>, &ocv_tile_4x3<KW>};
  else
    return {&ocv_tile<1, KW>, &ocv_tile<2, KW>, &ocv_tile<3, KW>, &ocv_tile<4, KW>};
}
// Unrolled kernel-row widths (the first layers' kernel widths), then any.
constexpr int kOcvWidths[] = {3, 5, 7, 11, 0};
// [width index][blocks-1]
constexpr std::array<std::array<OcvFn, kOcvMaxBlocks>, 5> kOcv = {{
    ocv_row<3>(),
    ocv_row<5>(),
    ocv_row<7>(),
    ocv_row<11>(),
    ocv_row<0>(),
}};

using FwdFn = void (*)(const DirectFwdArgs&);
using BwdwFn = void (*)(const DirectBwdwArgs&);

template <int MR, int NV>
constexpr std::array<FwdFn, 2> fwd_pair() {
  return {&fwd_tile<MR, NV, false>, &fwd_tile<MR, NV, true>};
}

// [rows-1][slots-1][masked]
constexpr std::array<std::array<std::array<FwdFn, 2>, 4>, 4> kFwd = {{
    {{fwd_pair<1, 1>(), fwd_pair<1, 2>(), fwd_pair<1, 3>(), fwd_pair<1, 4>()}},
    {{fwd_pair<2, 1>(), fwd_pair<2, 2>(), fwd_pair<2, 3>(), fwd_pair<2, 4>()}},
    {{fwd_pair<3, 1>(), fwd_pair<3, 2>(), fwd_pair<3, 3>(), fwd_pair<3, 4>()}},
    {{fwd_pair<4, 1>(), fwd_pair<4, 2>(), fwd_pair<4, 3>(), fwd_pair<4, 3>()}},  // 4x4 exceeds the registers
}};

// [vectors-1][cols-1]
constexpr std::array<std::array<BwdwFn, 6>, 2> kBwdw = {{
    {{&bwdw_tile<1, 1>, &bwdw_tile<1, 2>, &bwdw_tile<1, 3>, &bwdw_tile<1, 4>, &bwdw_tile<1, 5>, &bwdw_tile<1, 6>}},
    {{&bwdw_tile<2, 1>, &bwdw_tile<2, 2>, &bwdw_tile<2, 3>, &bwdw_tile<2, 4>, &bwdw_tile<2, 5>, &bwdw_tile<2, 6>}},
}};

}  // namespace

void direct_fwd_avx2(const DirectFwdArgs& a) { kFwd[a.rows - 1][a.slots - 1][a.mask_last_load](a); }

void transpose_avx2(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                    std::int64_t ldd) {
  const std::int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (std::int64_t k = 0; k < rows8; k += 8)
    for (std::int64_t p = 0; p < cols8; p += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + (k + i) * lds + p);
      transpose8x8(r);  // r[i] is now column p + i of rows k..k+7
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (p + i) * ldd + k, r[i]);
    }
  // Edges.
  for (std::int64_t k = 0; k < rows; ++k)
    for (std::int64_t p = (k < rows8 ? cols8 : 0); p < cols; ++p) dst[p * ldd + k] = src[k * lds + p];
}

void direct_ocv_avx2(const DirectOcvArgs& a) {
  std::size_t wi = 0;
  while (kOcvWidths[wi] != 0 && kOcvWidths[wi] != a.kw_run) ++wi;
  kOcv[wi][static_cast<std::size_t>(a.nb - 1)](a);
}

void direct_ocv_store_avx2(const DirectOcvStoreArgs& a) {
  const std::int64_t full = std::min(a.p_end, a.pixels / 8 * 8);
  for (int b = 0; b < a.nb; ++b) {
    const int rows = b == a.nb - 1 ? a.rows_last : 8;
    const float* src = a.acc + b * a.acc_bstride;
    float* yb = a.y + 8 * b * a.y_kstride;
    alignas(32) float bias[8] = {};
    if (a.bias)
      for (int m = 0; m < rows; ++m) bias[m] = a.bias[8 * b + m];
    std::int64_t p = a.p_begin;
    // + bias, + the y there (a fused sum), max(., 0) (a fused ReLU; a NaN passes).
    auto finish = [&](__m256 v, const float* yp) __attribute__((always_inline)) {
      if (a.accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(yp));
      return a.relu ? _mm256_max_ps(_mm256_setzero_ps(), v) : v;
    };
    for (; p < full; p += 8) {
      __m256 r[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + (p + i) * 8);
      transpose8(r);  // r[m]: channel m's 8 pixels
      if (rows == 8) {  // unrolled: r[m] with a variable m compiles to a branch per row
#pragma GCC unroll 8
        for (int m = 0; m < 8; ++m) {
          float* yp = yb + m * a.y_kstride + p;
          _mm256_storeu_ps(yp, finish(_mm256_add_ps(r[m], _mm256_set1_ps(bias[m])), yp));
        }
      } else {
        alignas(32) float rr[8][8];
#pragma GCC unroll 8
        for (int m = 0; m < 8; ++m) _mm256_store_ps(rr[m], _mm256_add_ps(r[m], _mm256_set1_ps(bias[m])));
        for (int m = 0; m < rows; ++m) {
          float* yp = yb + m * a.y_kstride + p;
          _mm256_storeu_ps(yp, finish(_mm256_load_ps(rr[m]), yp));
        }
      }
    }
    for (int m = 0; m < rows; ++m)
      for (std::int64_t q = p; q < a.p_end; ++q) {
        float* yp = yb + m * a.y_kstride + q;
        float v = src[q * 8 + m] + bias[m];
        if (a.accumulate) v += *yp;
        if (a.relu) v = 0.0f > v ? 0.0f : v;
        *yp = v;
      }
  }
}

void direct_bwdw_avx2(const DirectBwdwArgs& a) { kBwdw[(a.channels + 7) / 8 - 1][a.cols - 1](a); }

}  // namespace taihu::dnn::conv
