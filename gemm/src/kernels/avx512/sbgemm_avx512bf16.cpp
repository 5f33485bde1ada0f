// bf16 GEMM with AVX-512 BF16 (vdpbf16ps): Goto/BLIS loops over packed blocks and a
// 32x12 register tile (24 fp32 accumulators, 2 loads of A and 12 broadcasts of B per
// pair of k steps). vdpbf16ps multiplies 16 lanes of bf16 pairs and adds both products
// to an fp32 lane, so the packed panels keep k in pairs:
//   A micro-panel: for each k pair, 32 rows x (k, k+1)   (two ZMM loads)
//   B micro-panel: for each k pair, 12 cols x (k, k+1)   (one 32-bit broadcast each)
// An odd k, and rows/columns past the edge, are zero-padded, so the kernel always runs
// the whole tile; the C update masks rows and stops at the last valid column.
// Threads (one OpenMP region per call) pack each B block together, then each takes its
// own rows of C, packing its own A blocks.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "level3/sbgemm.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::gemm::level3 {
namespace {

constexpr int kMr = 32;
constexpr int kNr = 12;
constexpr index_t kKc = 512;   // k per block (256 pairs): B micro-panel 12 KiB, in L1
constexpr index_t kMc = 256;   // A block 256 x 512 bf16 = 256 KiB, in L2
constexpr index_t kNc = 3072;  // B block 3 MiB

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

bf16 a_at(const Bf16Problem& p, index_t i, index_t l) {
  return p.trans_a ? p.a[l + i * p.lda] : p.a[i + l * p.lda];
}
bf16 b_at(const Bf16Problem& p, index_t l, index_t j) {
  return p.trans_b ? p.b[j + l * p.ldb] : p.b[l + j * p.ldb];
}

// Rows [i0, i0 + mb) x depth [l0, l0 + kb) of op(A) into micro-panels of kMr rows.
void pack_a(const Bf16Problem& p, index_t i0, index_t mb, index_t l0, index_t kb, bf16* out) {
  const index_t pairs = ceil_div(kb, 2);
  for (index_t r = 0; r < mb; r += kMr) {
    bf16* panel = out + r * pairs * 2;
    const index_t rows = std::min<index_t>(kMr, mb - r);
    for (index_t q = 0; q < pairs; ++q) {
      bf16* dst = panel + q * kMr * 2;
      const index_t l = l0 + 2 * q;
      const bool second = 2 * q + 1 < kb;
      if (!p.trans_a && rows == kMr && second) {
        // Two contiguous columns of A, interleaved 16-bit-wise.
        const bf16* c0 = p.a + (i0 + r) + l * p.lda;
        const bf16* c1 = c0 + p.lda;
        for (int i = 0; i < kMr; ++i) dst[2 * i] = c0[i], dst[2 * i + 1] = c1[i];
        continue;
      }
      for (index_t i = 0; i < kMr; ++i) {
        const bool in = i < rows;
        dst[2 * i] = in ? a_at(p, i0 + r + i, l) : bf16{0};
        dst[2 * i + 1] = in && second ? a_at(p, i0 + r + i, l + 1) : bf16{0};
      }
    }
  }
}

// Depth [l0, l0 + kb) x columns [j0, j0 + nb) of op(B), micro-panels [jp0, jp1) of kNr.
void pack_b(const Bf16Problem& p, index_t l0, index_t kb, index_t j0, index_t nb, index_t jp0,
            index_t jp1, bf16* out) {
  const index_t pairs = ceil_div(kb, 2);
  for (index_t jp = jp0; jp < jp1; ++jp) {
    bf16* panel = out + jp * kNr * pairs * 2;
    const index_t cols = std::min<index_t>(kNr, nb - jp * kNr);
    for (index_t q = 0; q < pairs; ++q) {
      bf16* dst = panel + q * kNr * 2;
      const index_t l = l0 + 2 * q;
      const bool second = 2 * q + 1 < kb;
      for (index_t j = 0; j < kNr; ++j) {
        const bool in = j < cols;
        const index_t col = j0 + jp * kNr + j;
        dst[2 * j] = in ? b_at(p, l, col) : bf16{0};
        dst[2 * j + 1] = in && second ? b_at(p, l + 1, col) : bf16{0};
      }
    }
  }
}

__mmask16 row_mask(int rows) {
  if (rows >= 16) return 0xffff;
  if (rows <= 0) return 0;
  return static_cast<__mmask16>((1u << rows) - 1u);
}

// C (rows x cols of a 32 x 12 tile) := alpha Ap Bp + beta C over `pairs` k pairs.
void kernel(index_t pairs, const bf16* a, const bf16* b, float alpha, float beta, float* c,
            index_t ldc, int rows, int cols) {
  __m512 acc0[kNr], acc1[kNr];
  for (int j = 0; j < kNr; ++j) acc0[j] = _mm512_setzero_ps(), acc1[j] = _mm512_setzero_ps();
  for (index_t q = 0; q < pairs; ++q, a += kMr * 2, b += kNr * 2) {
    _mm_prefetch(reinterpret_cast<const char*>(a + 8 * kMr * 2), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(a + 8 * kMr * 2 + 32), _MM_HINT_T0);
    const __m512bh a0 = (__m512bh)_mm512_loadu_si512(a);
    const __m512bh a1 = (__m512bh)_mm512_loadu_si512(a + 32);
#pragma GCC unroll 12
    for (int j = 0; j < kNr; ++j) {
      std::int32_t pair;
      std::memcpy(&pair, b + 2 * j, sizeof pair);
      const __m512bh bj = (__m512bh)_mm512_set1_epi32(pair);
      acc0[j] = _mm512_dpbf16_ps(acc0[j], a0, bj);
      acc1[j] = _mm512_dpbf16_ps(acc1[j], a1, bj);
    }
  }
  const __mmask16 m0 = row_mask(rows), m1 = row_mask(rows - 16);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
  for (int j = 0; j < kNr; ++j) {
    if (j >= cols) break;
    float* cj = c + j * ldc;
    __m512 r0 = _mm512_mul_ps(va, acc0[j]), r1 = _mm512_mul_ps(va, acc1[j]);
    if (beta != 0.0f) {
      r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cj), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cj + 16), r1);
    }
    _mm512_mask_storeu_ps(cj, m0, r0);
    _mm512_mask_storeu_ps(cj + 16, m1, r1);
  }
}

}  // namespace

void sbgemm_avx512bf16(const Bf16Problem& p) {
  const double work = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  int threads = arch::threads_for_call();
  if (work < 96.0 * 96.0 * 96.0) threads = 1;
  threads = static_cast<int>(std::min<index_t>(threads, ceil_div(p.m, kMr)));
  const index_t nc = std::min<index_t>(kNc, ceil_div(p.n, kNr) * kNr);
  const index_t kc = std::min<index_t>(kKc, p.k + (p.k & 1));
  std::vector<bf16> b_buf(static_cast<size_t>(nc * kc) + 64);
  // Rows of C per thread, whole micro-panels.
  const index_t rows_per_thread = ceil_div(ceil_div(p.m, threads), kMr) * kMr;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int tid = omp_get_thread_num();
    const index_t my_lo = std::min(p.m, tid * rows_per_thread);
    const index_t my_hi = std::min(p.m, my_lo + rows_per_thread);
    std::vector<bf16> a_buf(static_cast<size_t>(kMc * kc) + 64);
    for (index_t j0 = 0; j0 < p.n; j0 += nc) {
      const index_t nb = std::min(nc, p.n - j0);
      const index_t panels = ceil_div(nb, kNr);
      for (index_t l0 = 0; l0 < p.k; l0 += kc) {
        const index_t kb = std::min(kc, p.k - l0);
        const index_t pairs = ceil_div(kb, 2);
        const float beta = l0 == 0 ? p.beta : 1.0f;
        const int nt = omp_get_num_threads();
        pack_b(p, l0, kb, j0, nb, panels * tid / nt, panels * (tid + 1) / nt, b_buf.data());
#pragma omp barrier
        for (index_t i0 = my_lo; i0 < my_hi; i0 += kMc) {
          const index_t mb = std::min(kMc, my_hi - i0);
          pack_a(p, i0, mb, l0, kb, a_buf.data());
          for (index_t jp = 0; jp < panels; ++jp) {
            const bf16* bp = b_buf.data() + jp * kNr * pairs * 2;
            const int cols = static_cast<int>(std::min<index_t>(kNr, nb - jp * kNr));
            for (index_t r = 0; r < mb; r += kMr) {
              const int rows = static_cast<int>(std::min<index_t>(kMr, mb - r));
              kernel(pairs, a_buf.data() + r * pairs * 2, bp, p.alpha, beta,
                     p.c + (i0 + r) + (j0 + jp * kNr) * p.ldc, p.ldc, rows, cols);
            }
          }
        }
#pragma omp barrier
      }
    }
  }
}

}  // namespace taihu::gemm::level3
