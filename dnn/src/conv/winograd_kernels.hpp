// Winograd F(2x2,3x3), F(4x4,3x3) and F(2x2,5x5) tile transforms (Lavin & Gray 2016), written once
// over an 8-lane vector type V (one lane per channel of an nChw8c block) and
// instantiated per ISA in winograd_kernels_<isa>.cpp with that file's V (an
// anonymous-namespace type, so each instantiation is private to its file).
//   input:          D (alpha x alpha)  -> B^T D B
//   output:         M (alpha x alpha)  -> A^T M A     (m x m)
//   output_adjoint: dY (m x m)         -> A dY A^T    (alpha x alpha), for backward-weights
// V must provide: static V load(const float*), void store(float*) const,
// V operator+(V,V), V operator-(V,V), V operator*(V,float).
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

using wino_index = std::int64_t;

// The per-ISA entry points (function pointers registered in conv_winograd.cpp).
struct WinogradKernels {
  // ntiles consecutive tiles of a tile row; tile t reads alpha x alpha vectors at
  // src + t*m*8 + i*src_row_stride + j*8 and writes element xi = i*alpha+j to
  // dst + t*dst_tile_stride + xi*xi_stride (8 floats).
  void (*input)(const float* src, wino_index src_row_stride, wino_index ntiles, float* dst,
                wino_index dst_tile_stride, wino_index xi_stride);
  // Tile t reads element xi at src + t*src_tile_stride + xi*xi_stride and writes its
  // m x m result to dst + t*m*m*8 + (i*m+j)*8.
  void (*output)(const float* src, wino_index src_tile_stride, wino_index xi_stride,
                 wino_index ntiles, float* dst);
  // Tile t reads m x m vectors at src + t*m*m*8 + (i*m+j)*8 and writes element xi to
  // dst + t*dst_tile_stride + xi*xi_stride.
  void (*output_adjoint)(const float* src, wino_index ntiles, float* dst,
                         wino_index dst_tile_stride, wino_index xi_stride);
};

// One output row of a run of m x m result tiles (tmp[t][i][j][8], t < ceil(pixels/m))
// into NCHW: dst[l * plane_stride + q] = tmp[((q / m) * m * m + i * m + q % m) * 8 + l]
// (+ bias[l]) for q < pixels and lanes l < lanes (bias may be null).
using WinoScatterRow = void (*)(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                                float* dst, wino_index plane_stride);

inline void wino_scatter_row_scalar(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                                    float* dst, wino_index plane_stride) {
  for (int l = 0; l < lanes; ++l) {
    const float b = bias ? bias[l] : 0.0f;
    float* row = dst + l * plane_stride;
    for (wino_index q = 0; q < pixels; ++q) row[q] = tmp[((q / m) * m * m + i * m + q % m) * 8 + l] + b;
  }
}

// The inverse: one NCHW row segment of `lanes` channel planes into the tile layout,
// dst[((q / m) * m * m + i * m + q % m) * 8 + l] = src[l * src_stride + q] for q < pixels;
// lanes >= `lanes` are written as zero (m = 1, i = 0: the nChw8c row of the reorder).
using WinoGatherRow = void (*)(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m, int i,
                               float* dst);

inline void wino_gather_row_scalar(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m,
                                   int i, float* dst) {
  for (wino_index q = 0; q < pixels; ++q) {
    float* d = dst + ((q / m) * m * m + i * m + q % m) * 8;
    for (int l = 0; l < 8; ++l) d[l] = l < lanes ? src[l * src_stride + q] : 0.0f;
  }
}

struct WinogradKernelSet {
  WinoScatterRow scatter_row;
  WinoGatherRow gather_row;
  WinogradKernels f2x2;  // F(2x2,3x3), alpha = 4
  WinogradKernels f4x4;  // F(4x4,3x3), alpha = 6
  WinogradKernels f2x2_5x5;  // F(2x2,5x5), alpha = 6
};

extern const WinogradKernelSet winograd_kernels_generic;
extern const WinogradKernelSet winograd_kernels_avx2;

// 1-D transforms of each tile size.
struct WinoF2 {
  static constexpr int m = 2, alpha = 4;
  template <class V>
  static void in(const V* d, V* t) {
    t[0] = d[0] - d[2];
    t[1] = d[1] + d[2];
    t[2] = d[2] - d[1];
    t[3] = d[1] - d[3];
  }
  template <class V>
  static void out(const V* s, V* o) {
    o[0] = s[0] + s[1] + s[2];
    o[1] = s[1] - s[2] - s[3];
  }
  template <class V>
  static void out_adjoint(const V* o, V* s) {
    s[0] = o[0];
    s[1] = o[0] + o[1];
    s[2] = o[0] - o[1];
    s[3] = o[1] * -1.0f;
  }
};

struct WinoF4 {
  static constexpr int m = 4, alpha = 6;
  template <class V>
  static void in(const V* d, V* t) {
    const V a = d[4] - d[2] * 4.0f;  // d4 - 4 d2
    const V b = d[3] - d[1] * 4.0f;  // d3 - 4 d1
    const V c = d[4] - d[2];
    const V e = (d[3] - d[1]) * 2.0f;
    t[0] = d[0] * 4.0f - d[2] * 5.0f + d[4];
    t[1] = a + b;
    t[2] = a - b;
    t[3] = c + e;
    t[4] = c - e;
    t[5] = d[1] * 4.0f - d[3] * 5.0f + d[5];
  }
  template <class V>
  static void out(const V* s, V* o) {
    const V p12 = s[1] + s[2], m12 = s[1] - s[2];
    const V p34 = s[3] + s[4], m34 = s[3] - s[4];
    o[0] = s[0] + p12 + p34;
    o[1] = m12 + m34 * 2.0f;
    o[2] = p12 + p34 * 4.0f;
    o[3] = m12 + m34 * 8.0f + s[5];
  }
  template <class V>
  static void out_adjoint(const V* o, V* s) {
    const V e = o[0] + o[2], f = o[1] + o[3];
    const V e4 = o[0] + o[2] * 4.0f, f8 = o[1] * 2.0f + o[3] * 8.0f;
    s[0] = o[0];
    s[1] = e + f;
    s[2] = e - f;
    s[3] = e4 + f8;
    s[4] = e4 - f8;
    s[5] = o[3];
  }
};

// F(2,5) on F(4,3)'s points (0, 1, -1, 2, -2, inf): the same input transform B^T
// (it depends only on the points), A^T = the first two rows of the Vandermonde matrix.
struct WinoF2R5 {
  static constexpr int m = 2, alpha = 6;
  template <class V>
  static void in(const V* d, V* t) {
    WinoF4::in(d, t);
  }
  template <class V>
  static void out(const V* s, V* o) {
    const V p12 = s[1] + s[2], p34 = s[3] + s[4];
    o[0] = s[0] + p12 + p34;
    o[1] = (s[1] - s[2]) + (s[3] - s[4]) * 2.0f + s[5];
  }
  template <class V>
  static void out_adjoint(const V* o, V* s) {
    const V o2 = o[1] * 2.0f;
    s[0] = o[0];
    s[1] = o[0] + o[1];
    s[2] = o[0] - o[1];
    s[3] = o[0] + o2;
    s[4] = o[0] - o2;
    s[5] = o[1];
  }
};

// Consecutive tiles of a row overlap by alpha - m input columns, so each column's
// 1-D transform (the first pass) is computed once and kept in a ring of alpha columns:
// m new column transforms per tile instead of alpha (F(2x2,5x5): 2 instead of 6).
template <class V, class F>
void wino_input(const float* src, wino_index src_row_stride, wino_index ntiles, float* dst,
                wino_index dst_tile_stride, wino_index xi_stride) {
  constexpr int A = F::alpha, M = F::m;
  V ring[A][A];  // ring[col % A][i]: column col transformed along the rows
  auto column = [&](wino_index col) {
    V in[A];
    for (int i = 0; i < A; ++i) in[i] = V::load(src + i * src_row_stride + col * 8);
    F::in(in, ring[col % A]);
  };
  for (int j = 0; j < A - M; ++j) column(j);
  for (wino_index t = 0; t < ntiles; ++t) {
    const wino_index c0 = t * M;
    for (int j = A - M; j < A; ++j) column(c0 + j);
    float* d = dst + t * dst_tile_stride;
    for (int i = 0; i < A; ++i) {
      V row[A], out[A];
      for (int j = 0; j < A; ++j) row[j] = ring[(c0 + j) % A][i];
      F::in(row, out);
      for (int j = 0; j < A; ++j) out[j].store(d + (i * A + j) * xi_stride);
    }
  }
}

template <class V, class F>
void wino_output(const float* src, wino_index src_tile_stride, wino_index xi_stride,
                 wino_index ntiles, float* dst) {
  constexpr int A = F::alpha, M = F::m;
  for (wino_index t = 0; t < ntiles; ++t) {
    const float* s = src + t * src_tile_stride;
    V tmp[M][A];
    for (int j = 0; j < A; ++j) {
      V col[A], out[M];
      for (int i = 0; i < A; ++i) col[i] = V::load(s + (i * A + j) * xi_stride);
      F::out(col, out);
      for (int i = 0; i < M; ++i) tmp[i][j] = out[i];
    }
    float* d = dst + t * M * M * 8;
    for (int i = 0; i < M; ++i) {
      V out[M];
      F::out(tmp[i], out);
      for (int j = 0; j < M; ++j) out[j].store(d + (i * M + j) * 8);
    }
  }
}

template <class V, class F>
void wino_output_adjoint(const float* src, wino_index ntiles, float* dst,
                         wino_index dst_tile_stride, wino_index xi_stride) {
  constexpr int A = F::alpha, M = F::m;
  for (wino_index t = 0; t < ntiles; ++t) {
    const float* s = src + t * M * M * 8;
    V tmp[A][M];
    for (int j = 0; j < M; ++j) {
      V col[M], out[A];
      for (int i = 0; i < M; ++i) col[i] = V::load(s + (i * M + j) * 8);
      F::out_adjoint(col, out);
      for (int i = 0; i < A; ++i) tmp[i][j] = out[i];
    }
    float* d = dst + t * dst_tile_stride;
    for (int i = 0; i < A; ++i) {
      V out[A];
      F::out_adjoint(tmp[i], out);
      for (int j = 0; j < A; ++j) out[j].store(d + (i * A + j) * xi_stride);
    }
  }
}

template <class V>
constexpr WinogradKernelSet make_winograd_kernel_set(WinoScatterRow scatter_row, WinoGatherRow gather_row) {
  return {scatter_row, gather_row,
          {&wino_input<V, WinoF2>, &wino_output<V, WinoF2>, &wino_output_adjoint<V, WinoF2>},
          {&wino_input<V, WinoF4>, &wino_output<V, WinoF4>, &wino_output_adjoint<V, WinoF4>},
          {&wino_input<V, WinoF2R5>, &wino_output<V, WinoF2R5>, &wino_output_adjoint<V, WinoF2R5>}};
}

}  // namespace taihu::dnn::conv
