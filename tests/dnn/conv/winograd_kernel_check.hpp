// The Winograd kernel set's contract (winograd_kernels.hpp) checked against double
// matrix products written out here (B^T D B, A^T M A, A dY A^T, G^T dU G with the matrices of
// Lavin & Gray's F(2,3), F(4,3) and F(2,5) on the points 0, 1, -1, 2, -2, inf), the
// channel GEMMs against a double product, the row scatter/gather against their index
// formulas: several tiles per call at the set's lane count, strides wider than a tile,
// partial lane counts, pixel counts with a scalar tail, nothing written where the
// contract says it is not. Header-only:
// test_winograd_accuracy.cpp runs it on every set this CPU runs,
// test_winograd_avx512_emulated.cpp on the AVX-512 set through SIMDe.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_check_random.hpp"
#include "winograd_kernels.hpp"

namespace winograd_kernel_check {

using taihu::dnn::conv::WinogradKernels;
using taihu::dnn::conv::WinogradKernelSet;
using index_t = std::int64_t;

using kernel_check::random_floats;

struct Variant {
  const char* name;
  int m, alpha;
  std::vector<double> bt;  // alpha x alpha
  std::vector<double> at;  // m x alpha
};

inline std::vector<Variant> variants() {
  const std::vector<double> bt6 = {4, 0, -5, 0,  1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
                                   0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1};
  return {{"F(2x2,3x3)", 2, 4, {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1}, {1, 1, 1, 0, 0, 1, -1, -1}},
          {"F(4x4,3x3)",
           4,
           6,
           bt6,
           {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1}},
          {"F(2x2,5x5)", 2, 6, bt6, {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 1}}};
}

inline const WinogradKernels& kernels_of(const WinogradKernelSet& s, int v) {
  return v == 0 ? s.f2x2 : v == 1 ? s.f4x4 : s.f2x2_5x5;
}

// G (alpha x r) of each variant: rows f(p) = (1, p, .., p^(r-1)) at the points 0, 1, -1,
// 2, -2 over the B^T scaling (4, -6, -6, 24, 24), and (0, .., 0, 1) for inf.
inline std::vector<double> g_of(int v) {
  const double pts[5] = {0, 1, -1, 2, -2}, scale[5] = {4, -6, -6, 24, 24};
  const int alpha = v == 0 ? 4 : 6, r = v == 2 ? 5 : 3;
  if (v == 0) return {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};  // F(2,3) on 0, 1, -1, inf
  std::vector<double> g(static_cast<std::size_t>(alpha * r), 0.0);
  for (int i = 0; i + 1 < alpha; ++i)
    for (int c = 0; c < r; ++c) {
      double p = 1;
      for (int e = 0; e < c; ++e) p *= pts[i];
      g[static_cast<std::size_t>(i * r + c)] = p / scale[i];
    }
  g[static_cast<std::size_t>((alpha - 1) * r + r - 1)] = 1;
  return g;
}

// f(dst) on a 64-byte-aligned copy of dst0 (the non-temporal entries store whole aligned
// lines), the result as a vector.
template <class F>
std::vector<float> on_aligned_copy(const std::vector<float>& dst0, F&& f) {
  std::vector<float> buf(dst0.size() + 16);
  auto* p = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(buf.data()) + 63) & ~std::uintptr_t{63});
  std::copy(dst0.begin(), dst0.end(), p);
  f(p);
  return std::vector<float>(p, p + dst0.size());
}

// weight_adjoint (against g_of), input (and input_ahead, input_nt bitwise input), output and output_adjoint (and
// output_adjoint_nt bitwise it) of each variant, 3 tiles of a row per call.
inline void transforms_match_definition(const WinogradKernelSet& set) {
  const int L = set.lanes;
  const index_t ntiles = 3;
  const auto vs = variants();
  for (int vi = 0; vi < 3; ++vi) {
    const Variant& v = vs[static_cast<std::size_t>(vi)];
    SCOPED_TRACE(std::string(v.name) + " lanes " + std::to_string(L));
    const int A = v.alpha, M = v.m, A2 = A * A;
    const WinogradKernels& k = kernels_of(set, vi);
    const index_t tile_stride = A2 * L + 5 * L, xi_stride = ntiles * tile_stride + L;  // apart from each other
    const index_t total = A2 * xi_stride;
    {  // input: D[i][j] = src[i * row + (t*M + j) * L + l]
      const index_t row = (ntiles * M + A) * L + 3 * L;
      const auto src = random_floats(static_cast<std::size_t>(A * row), 81);
      const auto dst0 = random_floats(static_cast<std::size_t>(total), 82);
      std::vector<float> dst = dst0;
      k.input(src.data(), row, ntiles, dst.data(), tile_stride, xi_stride);
      std::vector<float> ahead = dst0;  // the prefetching entry: the same bits
      k.input_ahead(src.data(), row, ntiles, ahead.data(), tile_stride, xi_stride);
      EXPECT_EQ(ahead, dst) << "input_ahead";
      const auto nt = on_aligned_copy(dst0, [&](float* p) {  // the non-temporal entry: the same bits
        k.input_nt(src.data(), row, ntiles, p, tile_stride, xi_stride);
      });
      EXPECT_EQ(nt, dst) << "input_nt";
      std::vector<bool> written(dst.size(), false);
      for (index_t t = 0; t < ntiles; ++t)
        for (int a = 0; a < A; ++a)
          for (int b = 0; b < A; ++b)
            for (int l = 0; l < L; ++l) {
              double want = 0;
              for (int i = 0; i < A; ++i)
                for (int j = 0; j < A; ++j)
                  want += v.bt[a * A + i] * double(src[static_cast<std::size_t>(i * row + (t * M + j) * L + l)]) *
                          v.bt[b * A + j];
              const auto at = static_cast<std::size_t>(t * tile_stride + (a * A + b) * xi_stride + l);
              written[at] = true;
              EXPECT_NEAR(dst[at], want, 1e-4) << "input tile " << t << " element " << a << "," << b << " lane " << l;
            }
      for (std::size_t i = 0; i < dst.size(); ++i)
        if (!written[i]) {
          ASSERT_EQ(dst[i], dst0[i]) << "input wrote outside its tiles at " << i;
        }
    }
    {  // output: M[i][j] = src[t * tile_stride + (i*A+j) * xi_stride + l] -> dst[t][a][b][l]
      const auto src = random_floats(static_cast<std::size_t>(total), 83);
      std::vector<float> dst(static_cast<std::size_t>(ntiles * M * M * L + L), 7.0f);
      k.output(src.data(), tile_stride, xi_stride, ntiles, dst.data());
      for (index_t t = 0; t < ntiles; ++t)
        for (int a = 0; a < M; ++a)
          for (int b = 0; b < M; ++b)
            for (int l = 0; l < L; ++l) {
              double want = 0;
              for (int i = 0; i < A; ++i)
                for (int j = 0; j < A; ++j)
                  want += v.at[a * A + i] *
                          double(src[static_cast<std::size_t>(t * tile_stride + (i * A + j) * xi_stride + l)]) *
                          v.at[b * A + j];
              EXPECT_NEAR(dst[static_cast<std::size_t>(((t * M + a) * M + b) * L + l)], want, 1e-4)
                  << "output tile " << t << " pixel " << a << "," << b << " lane " << l;
            }
      for (int l = 0; l < L; ++l) EXPECT_EQ(dst[static_cast<std::size_t>(ntiles * M * M * L + l)], 7.0f);
    }
    {  // weight_adjoint: dU[i][j] = du[(i*A+j) * xs + k] -> (G^T dU G)[r][q] at out[(r*R+q) * ld + k]
      const auto g = g_of(vi);
      const int R = A - M + 1;
      const index_t kvec = 2, xs = kvec * L + 3 * L, ld = kvec * L + L;
      const auto du = random_floats(static_cast<std::size_t>(A2 * xs), 86);
      std::vector<float> out(static_cast<std::size_t>(R * R * ld), 7.0f);
      k.weight_adjoint(du.data(), xs, kvec, out.data(), ld);
      for (int r = 0; r < R; ++r)
        for (int q = 0; q < R; ++q)
          for (index_t c = 0; c < ld; ++c) {
            const float got = out[static_cast<std::size_t>((r * R + q) * ld + c)];
            if (c >= kvec * L) {
              EXPECT_EQ(got, 7.0f) << "weight_adjoint wrote past kvec vectors at tap " << r << "," << q;
              continue;
            }
            double want = 0;
            for (int i = 0; i < A; ++i)
              for (int j = 0; j < A; ++j)
                want += g[static_cast<std::size_t>(i * R + r)] * double(du[static_cast<std::size_t>((i * A + j) * xs + c)]) *
                        g[static_cast<std::size_t>(j * R + q)];
            EXPECT_NEAR(got, want, 1e-5) << "weight_adjoint tap " << r << "," << q << " channel " << c;
          }
    }
    {  // output_adjoint: dY[i][j] = src[t][i][j][l] -> (A dY A^T)[a][b] at dst[t * tile_stride + (a*A+b) * xi_stride]
      const auto src = random_floats(static_cast<std::size_t>(ntiles * M * M * L), 84);
      const auto dst0 = random_floats(static_cast<std::size_t>(total), 85);
      std::vector<float> dst = dst0;
      k.output_adjoint(src.data(), ntiles, dst.data(), tile_stride, xi_stride);
      const auto nt = on_aligned_copy(dst0, [&](float* p) { k.output_adjoint_nt(src.data(), ntiles, p, tile_stride, xi_stride); });
      EXPECT_EQ(nt, dst) << "output_adjoint_nt";
      std::vector<bool> written(dst.size(), false);
      for (index_t t = 0; t < ntiles; ++t)
        for (int a = 0; a < A; ++a)
          for (int b = 0; b < A; ++b)
            for (int l = 0; l < L; ++l) {
              double want = 0;
              for (int i = 0; i < M; ++i)
                for (int j = 0; j < M; ++j)
                  want += v.at[i * A + a] * double(src[static_cast<std::size_t>(((t * M + i) * M + j) * L + l)]) *
                          v.at[j * A + b];
              const auto at = static_cast<std::size_t>(t * tile_stride + (a * A + b) * xi_stride + l);
              written[at] = true;
              EXPECT_NEAR(dst[at], want, 1e-4) << "adjoint tile " << t << " element " << a << "," << b << " lane " << l;
            }
      for (std::size_t i = 0; i < dst.size(); ++i)
        if (!written[i]) {
          ASSERT_EQ(dst[i], dst0[i]) << "output_adjoint wrote outside its tiles at " << i;
        }
    }
  }
}

// The channel GEMM: tile counts below, at and above the register tile (with a
// remainder), kgp an odd and an even number of vectors (a last panel one vector wide),
// v and m with leading dimensions wider than their rows; U placed by wino_u_offset.
inline void gemm_matches_definition(const WinogradKernelSet& set) {
  const int L = set.lanes;
  for (index_t cgp : {index_t{L}, index_t{3 * L}})
    for (index_t kgp : {index_t{L}, index_t{2 * L}, index_t{5 * L}})
      for (index_t ntiles : {index_t{1}, index_t{7}, index_t{31}}) {
        SCOPED_TRACE("lanes " + std::to_string(L) + " cgp " + std::to_string(cgp) + " kgp " + std::to_string(kgp) +
                     " tiles " + std::to_string(ntiles));
        const index_t v_ld = cgp + 3, m_ld = kgp + 5;
        const auto v = random_floats(static_cast<std::size_t>(ntiles * v_ld), 101);
        const auto u_dense = random_floats(static_cast<std::size_t>(cgp * kgp), 102);  // [c][k]
        std::vector<float> u(static_cast<std::size_t>(cgp * kgp), 0.0f);
        for (index_t c = 0; c < cgp; ++c)
          for (index_t k = 0; k < kgp; ++k)
            u[static_cast<std::size_t>(taihu::dnn::conv::wino_u_offset(c, k, cgp, kgp, L))] =
                u_dense[static_cast<std::size_t>(c * kgp + k)];
        const auto m0 = random_floats(static_cast<std::size_t>(ntiles * m_ld), 103);
        std::vector<float> m = m0;
        set.gemm(v.data(), v_ld, u.data(), cgp, kgp, ntiles, m.data(), m_ld);
        for (index_t t = 0; t < ntiles; ++t)
          for (index_t k = 0; k < m_ld; ++k) {
            const auto at = static_cast<std::size_t>(t * m_ld + k);
            if (k >= kgp) {
              ASSERT_EQ(m[at], m0[at]) << "gemm wrote tile " << t << " column " << k;
              continue;
            }
            double want = 0;
            for (index_t c = 0; c < cgp; ++c)
              want += double(v[static_cast<std::size_t>(t * v_ld + c)]) * u_dense[static_cast<std::size_t>(c * kgp + k)];
            ASSERT_NEAR(m[at], want, 1e-4) << "gemm tile " << t << " channel " << k;
          }
      }
}

// weight_gemm (backward-weights' channel GEMM on blocked panels) against a double product:
// panels wider than a tile column (padding between panels), tile counts with and without
// a remainder, channel counts that leave a register tile's KV tail, overwrite and
// accumulate; nothing written past kgp in a row or outside the cgp rows.
inline void weight_gemm_matches_definition(const WinogradKernelSet& set) {
  const int L = set.lanes;
  for (index_t cgp : {index_t{L}, index_t{2 * L}})
    for (index_t kgp : {index_t{L}, index_t{4 * L}, index_t{5 * L}})
      for (index_t ntiles : {index_t{1}, index_t{13}})
        for (bool accumulate : {false, true}) {
          SCOPED_TRACE("lanes " + std::to_string(L) + " cgp " + std::to_string(cgp) + " kgp " + std::to_string(kgp) +
                       " tiles " + std::to_string(ntiles) + " accumulate " + std::to_string(accumulate));
          const index_t panel = ntiles * L + 3, du_ld = kgp + 7, rows = cgp + 1;
          const auto v = random_floats(static_cast<std::size_t>(cgp / L * panel), 111);
          const auto m = random_floats(static_cast<std::size_t>(kgp / L * panel), 112);
          const auto du0 = random_floats(static_cast<std::size_t>(rows * du_ld), 113);
          std::vector<float> du = du0;
          set.weight_gemm(v.data(), panel, cgp, m.data(), panel, kgp, ntiles, du.data(), du_ld, accumulate);
          for (index_t c = 0; c < rows; ++c)
            for (index_t k = 0; k < du_ld; ++k) {
              const auto at = static_cast<std::size_t>(c * du_ld + k);
              if (c >= cgp || k >= kgp) {
                ASSERT_EQ(du[at], du0[at]) << "weight_gemm wrote row " << c << " column " << k;
                continue;
              }
              double want = accumulate ? du0[at] : 0.0;
              for (index_t t = 0; t < ntiles; ++t)
                want += double(v[static_cast<std::size_t>(c / L * panel + t * L + c % L)]) *
                        m[static_cast<std::size_t>(k / L * panel + t * L + k % L)];
              ASSERT_NEAR(du[at], want, 1e-4) << "weight_gemm row " << c << " column " << k;
            }
        }
}

// scatter_row and gather_row for m = 1, 2, 4, partial lane counts, 8-pixel groups plus a tail.
inline void rows_match_definition(const WinogradKernelSet& set) {
  const int L = set.lanes;
  const index_t plane = 61;
  for (int m : {1, 2, 4})
    for (int lanes : {L, L - 5, 3})
      for (index_t pixels : {index_t{8}, index_t{20}, index_t{5}}) {
        if (pixels % m != 0 && m == 1) continue;
        SCOPED_TRACE("lanes " + std::to_string(L) + " m " + std::to_string(m) + " valid lanes " +
                     std::to_string(lanes) + " pixels " + std::to_string(pixels));
        const index_t tiles = (pixels + m - 1) / m, tmp_size = tiles * m * m * L;
        const int i = m - 1;
        const auto tmp = random_floats(static_cast<std::size_t>(tmp_size), 91);
        const auto bias = random_floats(static_cast<std::size_t>(L), 92);
        for (bool with_bias : {false, true}) {
          const auto dst0 = random_floats(static_cast<std::size_t>(L * plane), 93);
          std::vector<float> dst = dst0;
          set.scatter_row(tmp.data(), m, i, pixels, lanes, with_bias ? bias.data() : nullptr, dst.data(), plane, false);
          for (int l = 0; l < L; ++l)
            for (index_t q = 0; q < plane; ++q) {
              const auto at = static_cast<std::size_t>(l * plane + q);
              if (l >= lanes || q >= pixels) {
                ASSERT_EQ(dst[at], dst0[at]) << "scatter wrote lane " << l << " pixel " << q;
                continue;
              }
              const float want = tmp[static_cast<std::size_t>(((q / m) * m * m + i * m + q % m) * L + l)] +
                                 (with_bias ? bias[static_cast<std::size_t>(l)] : 0.0f);
              ASSERT_EQ(dst[at], want) << "scatter lane " << l << " pixel " << q;
            }
        }
        const auto src = random_floats(static_cast<std::size_t>(L * plane), 94);
        const auto out0 = random_floats(static_cast<std::size_t>(tmp_size), 95);
        std::vector<float> out = out0;
        set.gather_row(src.data(), plane, lanes, pixels, m, i, out.data());
        std::vector<bool> written(out.size(), false);
        for (index_t q = 0; q < pixels; ++q)
          for (int l = 0; l < L; ++l) {
            const auto at = static_cast<std::size_t>(((q / m) * m * m + i * m + q % m) * L + l);
            written[at] = true;
            ASSERT_EQ(out[at], l < lanes ? src[static_cast<std::size_t>(l * plane + q)] : 0.0f)
                << "gather lane " << l << " pixel " << q;
          }
        for (std::size_t e = 0; e < out.size(); ++e)
          if (!written[e]) {
            ASSERT_EQ(out[e], out0[e]) << "gather wrote element " << e;
          }
      }
}

// scatter_row with stream: rows starting on a 64-byte line (whole 16-pixel groups may go
// out as non-temporal stores) and rows 16 bytes past one (plain stores), a 16-pixel
// pair, an 8-pixel group and a tail; the same values as the definition, nothing else written.
inline void streaming_scatter_matches_definition(const WinogradKernelSet& set) {
  const int L = set.lanes;
  const index_t plane = 64, pixels = 43;
  for (int m : {2, 4})
    for (int lanes : {L, 3})
      for (index_t shift : {index_t{0}, index_t{4}}) {
        SCOPED_TRACE("lanes " + std::to_string(L) + " m " + std::to_string(m) + " valid lanes " +
                     std::to_string(lanes) + " shift " + std::to_string(shift));
        const index_t tiles = (pixels + m - 1) / m, i = m - 1;
        const auto tmp = random_floats(static_cast<std::size_t>(tiles * m * m * L), 96);
        const auto bias = random_floats(static_cast<std::size_t>(L), 97);
        const auto dst0 = random_floats(static_cast<std::size_t>(L * plane + 32), 98);
        std::vector<float> buf = dst0;
        const auto lead = static_cast<index_t>((64 - reinterpret_cast<std::uintptr_t>(buf.data()) % 64) % 64 / 4);
        float* dst = buf.data() + lead + shift;
        set.scatter_row(tmp.data(), m, static_cast<int>(i), pixels, lanes, bias.data(), dst, plane, true);
        for (index_t e = 0; e < static_cast<index_t>(buf.size()); ++e) {
          const index_t at = e - lead - shift, l = at / plane, q = at % plane;
          if (at < 0 || l >= lanes || q >= pixels) {
            ASSERT_EQ(buf[static_cast<std::size_t>(e)], dst0[static_cast<std::size_t>(e)]) << "wrote element " << e;
            continue;
          }
          const float want = tmp[static_cast<std::size_t>(((q / m) * m * m + i * m + q % m) * L + l)] +
                             bias[static_cast<std::size_t>(l)];
          ASSERT_EQ(buf[static_cast<std::size_t>(e)], want) << "lane " << l << " pixel " << q;
        }
      }
}

}  // namespace winograd_kernel_check
