// Winograd F(2x2,3x3), F(4x4,3x3) and F(2x2,5x5) tile transforms (Lavin & Gray 2016), written once
// over a vector type V of V::lanes floats (one lane per channel of a channel block: 8 on
// AVX2 and generic, nChw8c-style; 16 on AVX-512) and instantiated per ISA in
// kernels/<isa>/winograd_kernels_<isa>.cpp with that file's V (an anonymous-namespace
// type, so each instantiation is private to its file).
//   input:          D (alpha x alpha)  -> B^T D B
//   output:         M (alpha x alpha)  -> A^T M A     (m x m)
//   output_adjoint: dY (m x m)         -> A dY A^T    (alpha x alpha), for backward-weights
//   weight_adjoint: dU (alpha x alpha) -> G^T dU G    (r x r), backward-weights' last step
//   gemm:           the alpha^2 channel GEMMs, M_xi[t][k] = sum_c V_xi[t][c] U_xi[c][k]
//   weight_gemm:    backward-weights' channel GEMMs, dU_xi[c][k] (+)= sum_t V_xi[t][c] dM_xi[t][k],
//                   both operands in panels of L channels (the transforms write them so)
// V must provide: static constexpr int lanes, static V load(const float*), void
// store(float*) const, V operator+(V,V), V operator-(V,V), V operator*(V,float), and
// for the GEMM static V zero(), static V bcast(float), friend V fma(V a, V b, V c) (a*b+c).
#pragma once
#include <cstdint>
#include <array>
#include <utility>

namespace taihu::dnn::conv {

using wino_index = std::int64_t;

// The per-ISA entry points (function pointers registered in conv_winograd.cpp); L is
// the kernel set's lanes (the channel block).
struct WinogradKernels {
  // ntiles consecutive tiles of a tile row; tile t reads alpha x alpha vectors at
  // src + t*m*L + i*src_row_stride + j*L and writes element xi = i*alpha+j to
  // dst + t*dst_tile_stride + xi*xi_stride (L floats).
  void (*input)(const float* src, wino_index src_row_stride, wino_index ntiles, float* dst,
                wino_index dst_tile_stride, wino_index xi_stride);
  // The same, bitwise, with software prefetches two tiles ahead.
  void (*input_ahead)(const float* src, wino_index src_row_stride, wino_index ntiles, float* dst,
                      wino_index dst_tile_stride, wino_index xi_stride);
  // The same, bitwise, by non-temporal stores where V has them (V::stream; else plain
  // stores): dst is a large buffer that is written whole and read later by other code.
  // The caller fences before anyone reads dst.
  void (*input_nt)(const float* src, wino_index src_row_stride, wino_index ntiles, float* dst,
                   wino_index dst_tile_stride, wino_index xi_stride);
  // Tile t reads element xi at src + t*src_tile_stride + xi*xi_stride and writes its
  // m x m result to dst + t*m*m*L + (i*m+j)*L.
  void (*output)(const float* src, wino_index src_tile_stride, wino_index xi_stride,
                 wino_index ntiles, float* dst);
  // Tile t reads m x m vectors at src + t*m*m*L + (i*m+j)*L and writes element xi to
  // dst + t*dst_tile_stride + xi*xi_stride.
  void (*output_adjoint)(const float* src, wino_index ntiles, float* dst,
                         wino_index dst_tile_stride, wino_index xi_stride);
  // The same by non-temporal stores (see input_nt).
  void (*output_adjoint_nt)(const float* src, wino_index ntiles, float* dst,
                            wino_index dst_tile_stride, wino_index xi_stride);
  // Backward-weights' last step for one input channel: out[(r*R+q)*out_ld + k] =
  // (G^T dU G)[r][q] for k < kvec*L (R = r, the kernel size), with element xi of
  // dU[.][k] at du + xi*xi_stride + k. L output channels per vector, straight from
  // the alpha^2 rows: no pass over all of dU per term.
  void (*weight_adjoint)(const float* du, wino_index xi_stride, wino_index kvec, float* out, wino_index out_ld);
};

// One output row of a run of m x m result tiles (tmp[t][i][j][L], t < ceil(pixels/m))
// into NCHW: dst[l * plane_stride + q] = tmp[((q / m) * m * m + i * m + q % m) * L + l]
// (+ bias[l]) for q < pixels and lanes l < lanes <= L (bias may be null). stream: a hint
// that dst is far larger than the caches, so whole cache lines may be written by
// non-temporal stores (x86 sets); the caller then fences (an sfence) before
// anyone reads dst.
using WinoScatterRow = void (*)(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                                float* dst, wino_index plane_stride, bool stream);

template <int L>
void wino_scatter_row_scalar(const float* tmp, int m, int i, wino_index pixels, int lanes, const float* bias,
                                    float* dst, wino_index plane_stride, bool /*stream*/) {
  for (int l = 0; l < lanes; ++l) {
    const float b = bias ? bias[l] : 0.0f;
    float* row = dst + l * plane_stride;
    for (wino_index q = 0; q < pixels; ++q) row[q] = tmp[((q / m) * m * m + i * m + q % m) * L + l] + b;
  }
}

// The inverse: one NCHW row segment of `lanes` channel planes into the tile layout,
// dst[((q / m) * m * m + i * m + q % m) * L + l] = src[l * src_stride + q] for q < pixels;
// lanes >= `lanes` are written as zero (m = 1, i = 0: the blocked row of the reorder).
using WinoGatherRow = void (*)(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m, int i,
                               float* dst);

template <int L>
void wino_gather_row_scalar(const float* src, wino_index src_stride, int lanes, wino_index pixels, int m,
                                   int i, float* dst) {
  for (wino_index q = 0; q < pixels; ++q) {
    float* d = dst + ((q / m) * m * m + i * m + q % m) * L;
    for (int l = 0; l < L; ++l) d[l] = l < lanes ? src[l * src_stride + q] : 0.0f;
  }
}

// One channel GEMM: m[t * m_ld + k] = sum over c < cgp of v[t * v_ld + c] * U[c][k] for
// t < ntiles, k < kgp (m overwritten), U stored as panels of 2L output channels (the
// last one L wide when kgp / L is odd): panel p (width wp) holds U[c][p*2L + kk] at
// u[p*2L*cgp + c*wp + kk], so a panel (cgp x 2L floats) is read contiguously and
// stays in L1 while every tile meets it.
using WinoGemm = void (*)(const float* v, wino_index v_ld, const float* u, wino_index cgp, wino_index kgp,
                          wino_index ntiles, float* m, wino_index m_ld);

// Offset of U[c][k] in the panel layout of WinoGemm.
inline wino_index wino_u_offset(wino_index c, wino_index k, wino_index cgp, wino_index kgp, int lanes) {
  const wino_index p0 = k / (2 * lanes) * (2 * lanes), wp = kgp - p0 < 2 * lanes ? kgp - p0 : 2 * lanes;
  return p0 * cgp + c * wp + (k - p0);
}

// Backward-weights' channel GEMM on blocked operands: for c < cgp, k < kgp (multiples
// of L), du[c * du_ld + k] = (accumulate ? du[c * du_ld + k] : 0) + sum over t < ntiles of
// v[(c / L) * v_panel + t * L + c % L] * m[(k / L) * m_panel + t * L + k % L].
// The tile transforms write V and dM straight into these panels (tile stride L), so a
// panel (ntiles x L floats) is read contiguously with no packing pass (gemm::sgemm
// packed both operands: 9% of F(4x4) backward-weights on VGG16 conv3_2, Zen 4).
using WinoWeightGemm = void (*)(const float* v, wino_index v_panel, wino_index cgp, const float* m,
                                wino_index m_panel, wino_index kgp, wino_index ntiles, float* du, wino_index du_ld,
                                bool accumulate);

struct WinogradKernelSet {
  int lanes;  // L: channels per block (8 or 16)
  WinoGemm gemm;
  WinoWeightGemm weight_gemm;
  WinoScatterRow scatter_row;
  WinoGatherRow gather_row;
  WinogradKernels f2x2;  // F(2x2,3x3), alpha = 4
  WinogradKernels f4x4;  // F(4x4,3x3), alpha = 6
  WinogradKernels f2x2_5x5;  // F(2x2,5x5), alpha = 6
};

extern const WinogradKernelSet winograd_kernels_generic;
extern const WinogradKernelSet winograd_kernels_avx2;
extern const WinogradKernelSet winograd_kernels_avx512;

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
  // w = G^T s, G the weight transform of conv_winograd.cpp (its kG2 rows).
  static constexpr int r = 3;
  template <class V>
  static void weight_adjoint(const V* s, V* w) {
    const V h = (s[1] + s[2]) * 0.5f;
    w[0] = s[0] + h;
    w[1] = (s[1] - s[2]) * 0.5f;
    w[2] = h + s[3];
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
  // w = G^T s (kG4 of conv_winograd.cpp).
  static constexpr int r = 3;
  template <class V>
  static void weight_adjoint(const V* s, V* w) {
    const V p12 = s[1] + s[2], m12 = s[2] - s[1], p34 = s[3] + s[4], m34 = s[3] - s[4];
    w[0] = s[0] * 0.25f - p12 * (1.0f / 6) + p34 * (1.0f / 24);
    w[1] = m12 * (1.0f / 6) + m34 * (1.0f / 12);
    w[2] = (p34 - p12) * (1.0f / 6) + s[5];
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
  // w = G^T s (kG2R5 of conv_winograd.cpp).
  static constexpr int r = 5;
  template <class V>
  static void weight_adjoint(const V* s, V* w) {
    const V p12 = s[1] + s[2], m12 = s[2] - s[1], p34 = s[3] + s[4], m34 = s[3] - s[4];
    w[0] = s[0] * 0.25f - p12 * (1.0f / 6) + p34 * (1.0f / 24);
    w[1] = m12 * (1.0f / 6) + m34 * (1.0f / 12);
    w[2] = (p34 - p12) * (1.0f / 6);
    w[3] = m12 * (1.0f / 6) + m34 * (1.0f / 3);
    w[4] = p34 * (2.0f / 3) - p12 * (1.0f / 6) + s[5];
  }
};

// A store of v at p, non-temporal when Nt and V has one (V::stream).
template <bool Nt, class V>
inline void wino_store(const V& v, float* p) {
  if constexpr (Nt && requires { v.stream(p); })
    v.stream(p);
  else
    v.store(p);
}

// Consecutive tiles of a row overlap by alpha - m input columns, so each column's
// 1-D transform (the first pass) is computed once and kept in a ring of alpha columns:
// m new column transforms per tile instead of alpha (F(2x2,5x5): 2 instead of 6).
// Ahead > 0: the new columns of tile t + Ahead are prefetched at tile t (the input_ahead
// entry, for a source that comes from L3 or memory rather than L2).
template <class V, class F, int Ahead = 0, bool Nt = false>
void wino_input(const float* src, wino_index src_row_stride, wino_index ntiles, float* dst,
                wino_index dst_tile_stride, wino_index xi_stride) {
  constexpr int A = F::alpha, M = F::m, L = V::lanes;
  V ring[A][A];  // ring[col % A][i]: column col transformed along the rows
  auto column = [&](wino_index col) {
    V in[A];
    for (int i = 0; i < A; ++i) in[i] = V::load(src + i * src_row_stride + col * L);
    F::in(in, ring[col % A]);
  };
  for (int j = 0; j < A - M; ++j) column(j);
  for (wino_index t = 0; t < ntiles; ++t) {
    const wino_index c0 = t * M;
    if constexpr (Ahead > 0)
      if (t + Ahead < ntiles)
        for (int i = 0; i < A; ++i)
          for (int j = A - M; j < A; ++j) __builtin_prefetch(src + i * src_row_stride + (c0 + Ahead * M + j) * L);
    for (int j = A - M; j < A; ++j) column(c0 + j);
    float* d = dst + t * dst_tile_stride;
    for (int i = 0; i < A; ++i) {
      V row[A], out[A];
      for (int j = 0; j < A; ++j) row[j] = ring[(c0 + j) % A][i];
      F::in(row, out);
      for (int j = 0; j < A; ++j) wino_store<Nt>(out[j], d + (i * A + j) * xi_stride);
    }
  }
}

template <class V, class F>
void wino_output(const float* src, wino_index src_tile_stride, wino_index xi_stride,
                 wino_index ntiles, float* dst) {
  constexpr int A = F::alpha, M = F::m, L = V::lanes;
  for (wino_index t = 0; t < ntiles; ++t) {
    const float* s = src + t * src_tile_stride;
    V tmp[M][A];
    for (int j = 0; j < A; ++j) {
      V col[A], out[M];
      for (int i = 0; i < A; ++i) col[i] = V::load(s + (i * A + j) * xi_stride);
      F::out(col, out);
      for (int i = 0; i < M; ++i) tmp[i][j] = out[i];
    }
    float* d = dst + t * M * M * L;
    for (int i = 0; i < M; ++i) {
      V out[M];
      F::out(tmp[i], out);
      for (int j = 0; j < M; ++j) out[j].store(d + (i * M + j) * L);
    }
  }
}

template <class V, class F, bool Nt = false>
void wino_output_adjoint(const float* src, wino_index ntiles, float* dst,
                         wino_index dst_tile_stride, wino_index xi_stride) {
  constexpr int A = F::alpha, M = F::m, L = V::lanes;
  for (wino_index t = 0; t < ntiles; ++t) {
    const float* s = src + t * M * M * L;
    V tmp[A][M];
    for (int j = 0; j < M; ++j) {
      V col[M], out[A];
      for (int i = 0; i < M; ++i) col[i] = V::load(s + (i * M + j) * L);
      F::out_adjoint(col, out);
      for (int i = 0; i < A; ++i) tmp[i][j] = out[i];
    }
    float* d = dst + t * dst_tile_stride;
    for (int i = 0; i < A; ++i) {
      V out[A];
      F::out_adjoint(tmp[i], out);
      for (int j = 0; j < A; ++j) wino_store<Nt>(out[j], d + (i * A + j) * xi_stride);
    }
  }
}

template <class V, class F>
void wino_weight_adjoint(const float* du, wino_index xi_stride, wino_index kvec, float* out, wino_index out_ld) {
  constexpr int A = F::alpha, R = F::r, L = V::lanes;
  for (wino_index kv = 0; kv < kvec; ++kv) {
    const wino_index k = kv * L;
    V t[R][A];  // t[r][j] = sum_i G[i][r] dU[i][j]
    for (int j = 0; j < A; ++j) {
      V col[A], w[R];
      for (int i = 0; i < A; ++i) col[i] = V::load(du + (i * A + j) * xi_stride + k);
      F::weight_adjoint(col, w);
      for (int r = 0; r < R; ++r) t[r][j] = w[r];
    }
    for (int r = 0; r < R; ++r) {
      V w[R];
      F::weight_adjoint(t[r], w);
      for (int q = 0; q < R; ++q) w[q].store(out + (r * R + q) * out_ld + k);
    }
  }
}

// T tiles x KV vectors of output channels: T * KV accumulators over the whole depth.
// pf (may be null): the next panel, fetched into cache row by row alongside this one
// (U comes from memory once per call; on small batches the GEMM waits for it).
template <class V, int T, int KV>
void wino_gemm_tile(const float* v, wino_index v_ld, const float* up, wino_index cgp, float* m, wino_index m_ld,
                    const float* pf) {
  constexpr int L = V::lanes;
  V acc[T][KV];
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < KV; ++j) acc[i][j] = V::zero();
  for (wino_index c = 0; c < cgp; ++c) {
    if (pf)
      for (int q = 0; q < KV * L; q += 16) __builtin_prefetch(pf + c * KV * L + q);
    V u[KV];
    for (int j = 0; j < KV; ++j) u[j] = V::load(up + c * KV * L + j * L);
    for (int i = 0; i < T; ++i) {
      const V b = V::bcast(v[i * v_ld + c]);
      for (int j = 0; j < KV; ++j) acc[i][j] = fma(b, u[j], acc[i][j]);
    }
  }
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < KV; ++j) acc[i][j].store(m + i * m_ld + j * L);
}

using WinoGemmTile = void (*)(const float*, wino_index, const float*, wino_index, float*, wino_index, const float*);

template <class V, int NT, int KV, std::size_t... R>
constexpr auto wino_gemm_tiles(std::index_sequence<R...>) {
  return std::array<WinoGemmTile, NT>{&wino_gemm_tile<V, static_cast<int>(R) + 1, KV>...};
}

// NT tiles per register tile (the ISA's register count decides it).
template <class V, int NT>
void wino_gemm(const float* v, wino_index v_ld, const float* u, wino_index cgp, wino_index kgp, wino_index ntiles,
               float* m, wino_index m_ld) {
  constexpr int L = V::lanes;
  static constexpr auto two = wino_gemm_tiles<V, NT, 2>(std::make_index_sequence<NT>{});
  static constexpr auto one = wino_gemm_tiles<V, NT, 1>(std::make_index_sequence<NT>{});
  // The tiles in equal groups of at most NT (16 tiles at NT 14: 8 + 8, not 14 + 2,
  // whose second group would reload the panel for 4 accumulators).
  const wino_index groups = (ntiles + NT - 1) / NT;
  for (wino_index k0 = 0; k0 < kgp; k0 += 2 * L) {
    const bool full = kgp - k0 >= 2 * L;
    const float* up = u + k0 * cgp;
    for (wino_index gi = 0, t = 0; gi < groups; ++gi) {
      const wino_index nt = (ntiles - t) / (groups - gi);  // the later groups take the remainder
      const float* pf = gi == 0 && k0 + 2 * L < kgp ? up + 2 * L * cgp : nullptr;
      (full ? two : one)[static_cast<std::size_t>(nt - 1)](v + t * v_ld, v_ld, up, cgp, m + t * m_ld + k0, m_ld, pf);
      t += nt;
    }
  }
}

// RC input channels (broadcast from a V panel's tile row) x KV vectors of output
// channels (KV consecutive dM panels): RC * KV accumulators over all ntiles.
template <class V, int RC, int KV>
void wino_weight_gemm_tile(const float* v, const float* m, wino_index m_panel, wino_index ntiles, float* du,
                           wino_index du_ld, bool accumulate) {
  constexpr int L = V::lanes;
  V acc[RC][KV];
  for (int i = 0; i < RC; ++i)
    for (int j = 0; j < KV; ++j) acc[i][j] = V::zero();
  for (wino_index t = 0; t < ntiles; ++t) {
    V u[KV];
    for (int j = 0; j < KV; ++j) u[j] = V::load(m + j * m_panel + t * L);
    for (int i = 0; i < RC; ++i) {
      const V b = V::bcast(v[t * L + i]);
      for (int j = 0; j < KV; ++j) acc[i][j] = fma(b, u[j], acc[i][j]);
    }
  }
  for (int i = 0; i < RC; ++i)
    for (int j = 0; j < KV; ++j) {
      float* p = du + i * du_ld + j * L;
      (accumulate ? acc[i][j] + V::load(p) : acc[i][j]).store(p);
    }
}

// Rows of RC input channels, each over the dM panels KV at a time (then one at a time):
// the RC-row slice of a V panel stays in L1 while the dM panels stream from L2.
template <class V, int RC, int KV>
void wino_weight_gemm(const float* v, wino_index v_panel, wino_index cgp, const float* m, wino_index m_panel,
                      wino_index kgp, wino_index ntiles, float* du, wino_index du_ld, bool accumulate) {
  constexpr int L = V::lanes;
  static_assert(L % RC == 0, "a register tile's input channels lie in one panel");
  const wino_index kvec = kgp / L;
  for (wino_index c0 = 0; c0 < cgp; c0 += RC) {
    const float* vp = v + (c0 / L) * v_panel + c0 % L;
    float* d = du + c0 * du_ld;
    wino_index kv = 0;
    for (; kv + KV <= kvec; kv += KV)
      wino_weight_gemm_tile<V, RC, KV>(vp, m + kv * m_panel, m_panel, ntiles, d + kv * L, du_ld, accumulate);
    for (; kv < kvec; ++kv)
      wino_weight_gemm_tile<V, RC, 1>(vp, m + kv * m_panel, m_panel, ntiles, d + kv * L, du_ld, accumulate);
  }
}

template <class V, class F>
constexpr WinogradKernels wino_kernels_of() {
  return {&wino_input<V, F>,  &wino_input<V, F, 2>,      &wino_input<V, F, 0, true>,      &wino_output<V, F>,
          &wino_output_adjoint<V, F>, &wino_output_adjoint<V, F, true>, &wino_weight_adjoint<V, F>};
}

// NT: the forward GEMM's tiles per register tile; RC x KV: weight_gemm's register tile.
template <class V, int NT, int RC, int KV>
constexpr WinogradKernelSet make_winograd_kernel_set(WinoScatterRow scatter_row, WinoGatherRow gather_row) {
  return {V::lanes, &wino_gemm<V, NT>, &wino_weight_gemm<V, RC, KV>, scatter_row, gather_row,
          wino_kernels_of<V, WinoF2>(), wino_kernels_of<V, WinoF4>(), wino_kernels_of<V, WinoF2R5>()};
}

}  // namespace taihu::dnn::conv
