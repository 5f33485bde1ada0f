// SIMD micro-kernel and GEMV templates, instantiated by each ISA's translation unit
// with its own vector traits V (defined there in an anonymous namespace, so every
// instantiation is private to the TU compiled with that ISA's flags). V provides:
//   using T, Reg; static constexpr int W (lanes); zero, load, loadu, storeu, bcast,
//   fma(a, b, c) = a*b + c, mul, hsum, prefetch.
// Contracts: see microkernel.hpp.
#pragma once
#include <utility>

#include "kernels/microkernel.hpp"

namespace taihu::gemm::kernels {
// Anonymous: each ISA's TU gets its own copies, so no helper compiled with AVX-512
// flags can be picked by the linker for AVX2 callers.
namespace {

// Where a kernel finds op(B): a packed micro-panel (step p, column j at
// b[p * Panel + j]) or B in place (at b[p * rs + j * cs]).
template <class T, int Panel>
struct PackedB {
  const T* b;
  const T* at(int j) const { return b + j; }
  void next() { b += Panel; }
  const T* ahead(index_t d) const { return b + d * Panel; }
};
template <class T>
struct StridedB {
  const T* b;
  index_t rs, cs;
  const T* at(int j) const { return b + j * cs; }
  void next() { b += rs; }
  const T* ahead(index_t d) const { return b + d * rs; }
};

// The register tile: MR x NR accumulators, MR / W vector loads of A and NR broadcasts
// of B per k step.
template <class V, int MR, int NR, class BSource>
inline void simd_tile(index_t k, typename V::T alpha, const typename V::T* a, index_t a_step, BSource b,
                      typename V::T beta, typename V::T* c, index_t ldc) {
  using Reg = typename V::Reg;
  constexpr int MV = MR / V::W;
  static_assert(MR % V::W == 0, "MR must be a multiple of the vector width");
  Reg acc[NR][MV];
  // C's tile is read only at the end: its first and last line per column are fetched
  // now, so a column that straddles two lines (ldc not a multiple of the line) does
  // not miss after the k loop.
#pragma GCC unroll 16
  for (int j = 0; j < NR; ++j) {
    V::prefetch(c + j * ldc);
    V::prefetch(c + j * ldc + MR - 1);
#pragma GCC unroll 4
    for (int i = 0; i < MV; ++i) acc[j][i] = V::zero();
  }
  // A is prefetched kPrefetch steps ahead (first and last line of its MR values): the
  // packed panel streams from L2, an unpacked one from wherever A lives.
  constexpr index_t kPrefetch = 8;
#pragma GCC unroll 4
  for (index_t p = 0; p < k; ++p) {
    V::prefetch(a + kPrefetch * a_step);
    V::prefetch(a + kPrefetch * a_step + MR - 1);
    // B's micro-panel too (DGEMM 2048 ~0.90 -> ~0.92x MKL, 1 thread): it streams from L2.
    V::prefetch(b.ahead(2 * kPrefetch));
    Reg av[MV];
#pragma GCC unroll 4
    for (int i = 0; i < MV; ++i) av[i] = V::loadu(a + i * V::W);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
      const Reg bj = V::bcast(b.at(j));
#pragma GCC unroll 4
      for (int i = 0; i < MV; ++i) acc[j][i] = V::fma(av[i], bj, acc[j][i]);
    }
    a += a_step;
    b.next();
  }
  const typename V::T one = 1, zero = 0;
  const Reg va = V::bcast(&alpha);
  if (beta == zero) {
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
      for (int i = 0; i < MV; ++i) V::storeu(c + j * ldc + i * V::W, V::mul(acc[j][i], va));
  } else if (beta == one) {
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
      for (int i = 0; i < MV; ++i) {
        typename V::T* cp = c + j * ldc + i * V::W;
        V::storeu(cp, V::fma(acc[j][i], va, V::loadu(cp)));
      }
  } else {
    const Reg vb = V::bcast(&beta);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
      for (int i = 0; i < MV; ++i) {
        typename V::T* cp = c + j * ldc + i * V::W;
        V::storeu(cp, V::fma(acc[j][i], va, V::mul(V::loadu(cp), vb)));
      }
  }
}

// The first NR columns of a packed panel of width Panel (NR == Panel: the full tile).
// flatten: the tile must be inlined (GCC declines it for some instantiations), and
// GCC 12 drops every _mm_prefetch from an always_inline simd_tile.
template <class V, int MR, int NR, int Panel = NR>
__attribute__((flatten)) void simd_microkernel(index_t k, typename V::T alpha, const typename V::T* a, index_t a_step,
                      const typename V::T* b, typename V::T beta, typename V::T* c, index_t ldc) {
  simd_tile<V, MR, NR>(k, alpha, a, a_step, PackedB<typename V::T, Panel>{b}, beta, c, ldc);
}

template <class V, int MR, int NR>
__attribute__((flatten)) void simd_microkernel_unpacked_b(index_t k, typename V::T alpha, const typename V::T* a, index_t a_step,
                                 const typename V::T* b, index_t b_rs, index_t b_cs, typename V::T beta,
                                 typename V::T* c, index_t ldc) {
  simd_tile<V, MR, NR>(k, alpha, a, a_step, StridedB<typename V::T>{b, b_rs, b_cs}, beta, c, ldc);
}

// An ISA's MR x NR micro-kernel with its narrow and unpacked-B variants.
template <class V, int MR, int NR, int... J>
constexpr MicroKernel<typename V::T> make_microkernel(std::integer_sequence<int, J...>) {
  static_assert(NR <= kMaxNr, "NR above kMaxNr");
  MicroKernel<typename V::T> uk;
  uk.fn = &simd_microkernel<V, MR, NR>;
  uk.mr = MR;
  uk.nr = NR;
  ((uk.narrow[J + 1] = J + 1 < NR ? &simd_microkernel<V, MR, J + 1, NR> : nullptr), ...);
  ((uk.unpacked_b[J + 1] = &simd_microkernel_unpacked_b<V, MR, J + 1>), ...);
  if constexpr ((MR / 2) % V::W == 0) {
    uk.half_rows = &simd_microkernel<V, MR / 2, NR>;
    uk.half_rows_unpacked_b = &simd_microkernel_unpacked_b<V, MR / 2, NR>;
  }
  return uk;
}
template <class V, int MR, int NR>
constexpr MicroKernel<typename V::T> make_microkernel() {
  return make_microkernel<V, MR, NR>(std::make_integer_sequence<int, NR>{});
}

// y[i] = alpha * t[i] + beta * y[i] for i < n, never reading y when beta == 0.
template <class T>
inline void scale_into(index_t n, T alpha, const T* t, T beta, T* y) {
  if (beta == T(0))
    for (index_t i = 0; i < n; ++i) y[i] = alpha * t[i];
  else
    for (index_t i = 0; i < n; ++i) y[i] = alpha * t[i] + beta * y[i];
}

// y[row0:row1) = alpha * A[row0:row1, :] x + beta * y: four columns per pass, the
// partial result for a chunk of rows held in a stack buffer that stays in L1.
template <class V>
void simd_gemv_n(index_t /*rows*/, index_t cols, typename V::T alpha, const typename V::T* a,
                 index_t lda, const typename V::T* x, typename V::T beta, typename V::T* y,
                 index_t row0, index_t row1) {
  using T = typename V::T;
  constexpr index_t kChunk = 1024;
  alignas(64) T t[kChunk];
  for (index_t r = row0; r < row1; r += kChunk) {
    const index_t len = row1 - r < kChunk ? row1 - r : kChunk;
    const index_t vec_end = len - len % V::W;
    for (index_t i = 0; i < len; ++i) t[i] = 0;
    index_t p = 0;
    for (; p + 4 <= cols; p += 4) {
      const T* a0 = a + r + p * lda;
      const T *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
      const auto x0 = V::bcast(x + p), x1 = V::bcast(x + p + 1), x2 = V::bcast(x + p + 2),
                 x3 = V::bcast(x + p + 3);
      index_t i = 0;
      for (; i < vec_end; i += V::W) {
        auto s = V::load(t + i);
        s = V::fma(V::loadu(a0 + i), x0, s);
        s = V::fma(V::loadu(a1 + i), x1, s);
        s = V::fma(V::loadu(a2 + i), x2, s);
        s = V::fma(V::loadu(a3 + i), x3, s);
        V::storeu(t + i, s);
      }
      for (; i < len; ++i) t[i] += a0[i] * x[p] + a1[i] * x[p + 1] + a2[i] * x[p + 2] + a3[i] * x[p + 3];
    }
    for (; p < cols; ++p) {
      const T* ap = a + r + p * lda;
      for (index_t i = 0; i < len; ++i) t[i] += ap[i] * x[p];
    }
    scale_into(len, alpha, t, beta, y + r);
  }
}

// y[j] = alpha * dot(A[:, j], x) + beta * y[j] for j in [col0, col1): four columns per
// pass share each load of x; two accumulators per column hide the FMA latency.
template <class V>
void simd_gemv_t(index_t rows, index_t /*cols*/, typename V::T alpha, const typename V::T* a,
                 index_t lda, const typename V::T* x, typename V::T beta, typename V::T* y,
                 index_t col0, index_t col1) {
  using T = typename V::T;
  const index_t vec_end = rows - rows % (2 * V::W);
  index_t j = col0;
  for (; j + 4 <= col1; j += 4) {
    const T* a0 = a + j * lda;
    const T *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
    auto s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
    auto u0 = V::zero(), u1 = V::zero(), u2 = V::zero(), u3 = V::zero();
    index_t i = 0;
    for (; i < vec_end; i += 2 * V::W) {
      const auto xa = V::loadu(x + i), xb = V::loadu(x + i + V::W);
      s0 = V::fma(V::loadu(a0 + i), xa, s0);
      s1 = V::fma(V::loadu(a1 + i), xa, s1);
      s2 = V::fma(V::loadu(a2 + i), xa, s2);
      s3 = V::fma(V::loadu(a3 + i), xa, s3);
      u0 = V::fma(V::loadu(a0 + i + V::W), xb, u0);
      u1 = V::fma(V::loadu(a1 + i + V::W), xb, u1);
      u2 = V::fma(V::loadu(a2 + i + V::W), xb, u2);
      u3 = V::fma(V::loadu(a3 + i + V::W), xb, u3);
    }
    T d[4] = {V::hsum(V::add(s0, u0)), V::hsum(V::add(s1, u1)), V::hsum(V::add(s2, u2)),
              V::hsum(V::add(s3, u3))};
    for (; i < rows; ++i) {
      d[0] += a0[i] * x[i];
      d[1] += a1[i] * x[i];
      d[2] += a2[i] * x[i];
      d[3] += a3[i] * x[i];
    }
    scale_into<T>(4, alpha, d, beta, y + j);
  }
  for (; j < col1; ++j) {
    const T* aj = a + j * lda;
    auto s = V::zero();
    index_t i = 0;
    for (; i + V::W <= rows; i += V::W) s = V::fma(V::loadu(aj + i), V::loadu(x + i), s);
    T d = V::hsum(s);
    for (; i < rows; ++i) d += aj[i] * x[i];
    scale_into<T>(1, alpha, &d, beta, y + j);
  }
}

}  // namespace
}  // namespace taihu::gemm::kernels
