// AVX-512 kernels: sgemm 32x12 and dgemm 16x12 register tiles (24 accumulators of the
// 32 ZMM registers, 2 vector loads of A and 12 broadcasts of B per k step), GEMV, and
// the transposing packers for panels stored along k (a transposed A, a no-transpose B:
// 16x16 float / 8x8 double blocks transposed in registers, pack_lines_simd.hpp).
// Also the DGEMM tiles 16x14 (the inline-asm kernel of gemm_asm_x14.hpp for full
// packed tiles, the template for the rest: the default set, registry.cpp) and 24x8 (the
// same template; 24x8asm / 24x8asmemb, the inline-asm kernel of gemm_asm_24x8.hpp), and
// the SGEMM tile 32x14 (the same asm in single precision).
#include <immintrin.h>

#include "kernels/avx512/gemm_asm_24x8.hpp"
#include "kernels/avx512/gemm_asm_x14.hpp"
#include "kernels/pack_lines_simd.hpp"
#include "kernels/simd_kernels.hpp"

namespace taihu::gemm::kernels {
namespace {

struct Avx512F32 {
  using T = float;
  using Reg = __m512;
  static constexpr int W = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const T* p) { return _mm512_load_ps(p); }
  static Reg loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg bcast(const T* p) { return _mm512_set1_ps(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static T hsum(Reg v) {  // via memory: GCC 12's 512-bit extracts trip -Wuninitialized
    alignas(64) T lanes[W];
    _mm512_store_ps(lanes, v);
    T s = 0;
    for (T x : lanes) s += x;
    return s;
  }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

struct Avx512F64 {
  using T = double;
  using Reg = __m512d;
  static constexpr int W = 8;
  static Reg zero() { return _mm512_setzero_pd(); }
  static Reg load(const T* p) { return _mm512_load_pd(p); }
  static Reg loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, Reg v) { _mm512_storeu_pd(p, v); }
  static Reg bcast(const T* p) { return _mm512_set1_pd(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_pd(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
  static Reg add(Reg a, Reg b) { return _mm512_add_pd(a, b); }
  static T hsum(Reg v) {
    alignas(64) T lanes[W];
    _mm512_store_pd(lanes, v);
    T s = 0;
    for (T x : lanes) s += x;
    return s;
  }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

// GCC 12's 512-bit unpack and lane-shuffle intrinsics pass an undefined vector as the
// unused merge source, which trips -Wuninitialized (as its extracts do in hsum above).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__  // GCC only: clang -Werror rejects the unknown group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// dst[p * dst_step + i] = rows[i][p] for p < 16: the 16 x 16 block in four shuffle stages
// (pairs of floats, pairs of doubles, then two 128-bit lane shuffles).
TAIHU_PACK_INLINE void transpose16x16(const float* src, index_t ld, float* dst, index_t dst_step) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ld);
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane L: rows 4i..4i+3 at k = 4L + c.
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 v = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88), w = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
    const __m512 v2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    const __m512 w2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);
    _mm512_storeu_ps(dst + c * dst_step, _mm512_shuffle_f32x4(v, v2, 0x88));
    _mm512_storeu_ps(dst + (4 + c) * dst_step, _mm512_shuffle_f32x4(w, w2, 0x88));
    _mm512_storeu_ps(dst + (8 + c) * dst_step, _mm512_shuffle_f32x4(v, v2, 0xdd));
    _mm512_storeu_ps(dst + (12 + c) * dst_step, _mm512_shuffle_f32x4(w, w2, 0xdd));
  }
}

// dst[p * dst_step + i] = rows[i][p] for an 8 x 8 block of doubles. The loads pair row
// i's and row i + 4's 256-bit halves (vinsertf64x4 from memory: ports 0 and 5, where
// 512-bit shuffles have port 5 only), then one in-lane unpack and one two-source permute
// per output row: 16 port-5 shuffles for the 24 of the all-shuffle transpose.
TAIHU_PACK_INLINE void transpose8x8(const double* src, index_t ld, double* dst, index_t dst_step) {
  __m512d r[8];
  for (int i = 0; i < 4; ++i) {  // r[i]: k 0-3 of rows i, i + 4; r[4 + i]: k 4-7
    r[i] = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(src + i * ld)),
                              _mm256_loadu_pd(src + (i + 4) * ld), 1);
    r[4 + i] = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(src + i * ld + 4)),
                                  _mm256_loadu_pd(src + (i + 4) * ld + 4), 1);
  }
  // unpacklo(rows i, i+1) lanes: (i,i+1 at k0) (k2) | (i+4,i+5 at k0) (k2); unpackhi: k1, k3.
  const __m512i even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);   // lanes 0, 2 of a then b: k0 / k1
  const __m512i odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);  // lanes 1, 3: k2 / k3
  for (int h = 0; h < 2; ++h) {  // k 0-3, k 4-7
    const __m512d* q = r + 4 * h;
    const __m512d lo01 = _mm512_unpacklo_pd(q[0], q[1]), hi01 = _mm512_unpackhi_pd(q[0], q[1]);
    const __m512d lo23 = _mm512_unpacklo_pd(q[2], q[3]), hi23 = _mm512_unpackhi_pd(q[2], q[3]);
    double* d = dst + 4 * h * dst_step;
    _mm512_storeu_pd(d, _mm512_permutex2var_pd(lo01, even, lo23));
    _mm512_storeu_pd(d + dst_step, _mm512_permutex2var_pd(hi01, even, hi23));
    _mm512_storeu_pd(d + 2 * dst_step, _mm512_permutex2var_pd(lo01, odd, lo23));
    _mm512_storeu_pd(d + 3 * dst_step, _mm512_permutex2var_pd(hi01, odd, hi23));
  }
}

#pragma GCC diagnostic pop

// The line packers of a tile: A's MR rows by 16x16 (float) / 8x8 (double) blocks; B's
// NR columns by 8x8 blocks (NR = 12 floats: AVX 8x8 blocks at columns 0 and 4).
template <class T, int Width>
constexpr PackLinesFn<T> lines_packer() {
  if constexpr (sizeof(T) == 8)
    return &pack_lines_blocked<double, Width, 8, transpose8x8>;
  else if constexpr (Width >= 16)
    return &pack_lines_blocked<float, Width, 16, transpose16x16>;
  else
    return &pack_lines_blocked<float, Width, 8, transpose8x8_ps>;
}

template <class T>
constexpr MicroKernel<T> with_packers(MicroKernel<T> uk, PackLinesFn<T> a_packer, PackLinesFn<T> b_packer) {
  uk.pack_a_transposed = a_packer;
  uk.pack_b_lines = b_packer;
  return uk;
}

// The template tile MR x NR with its packers.
template <class V, int MR, int NR>
constexpr MicroKernel<typename V::T> template_tile() {
  using T = typename V::T;
  return with_packers(make_microkernel<V, MR, NR>(), lines_packer<T, MR>(), lines_packer<T, NR>());
}

// The 16x14 full tile: the inline-asm kernel on a packed A micro-panel, the template on
// A read in place (a_step == lda, the skinny no-pack path), which the asm does not take.
// Prefetch distances (bytes) and the C-prefetch tail (one column per k step, the last 14
// steps) as measured best on the Xeon (bench/results/2026-11-28-xeon-dgemm-asm.md:
// 1, 2, 4 or 8 steps per column, 1 the best in both passes).
// The SGEMM 32x14 tile takes the same byte distances (A's 4 steps are 512 bytes either
// way; B's 4 steps are 224 bytes of floats, so 1792 bytes is 8 groups ahead).
// kPipelined: B as embedded broadcasts, A loaded one step ahead (gemm_asm_x14.hpp).
template <class V, bool kPipelined = false>
void asm_x14_full_tile(index_t k, typename V::T alpha, const typename V::T* a, index_t a_step,
                       const typename V::T* b, typename V::T beta, typename V::T* c, index_t ldc) {
  using T = typename V::T;
  if (a_step == asm_x14::kMr<T>)
    asm_x14::gemm_x14<T, 1024, 1792, kPipelined>(k, alpha, a, b, beta, c, ldc, 1);
  else
    simd_microkernel<V, asm_x14::kMr<T>, asm_x14::kNr>(k, alpha, a, a_step, b, beta, c, ldc);
}

// Narrow, half-row and unpacked-B edges from the template, the full tile from the asm.
template <class V, bool kPipelined = false>
constexpr MicroKernel<typename V::T> asm_x14_tile() {
  MicroKernel<typename V::T> uk = template_tile<V, asm_x14::kMr<typename V::T>, asm_x14::kNr>();
  uk.fn = &asm_x14_full_tile<V, kPipelined>;
  return uk;
}

// The 24x8 full tile: the inline-asm kernel on a packed A micro-panel, the template on A
// read in place (a_step == lda), which the asm does not take. kEmbedded: B as {1to8}
// FMA memory operands or register broadcasts. Prefetch 2 groups (1536 bytes) ahead in A,
// 4 groups (1024 bytes) in B: 768/512 and 3072/1024 measured the same alone in L1
// (bench/results/2026-11-28-xeon-gemm-packing.md, section 7).
template <bool kEmbedded>
void asm_24x8_full_tile(index_t k, double alpha, const double* a, index_t a_step, const double* b, double beta,
                        double* c, index_t ldc) {
  if (a_step == asm_24x8::kMr)
    asm_24x8::dgemm_24x8<kEmbedded, 1536, 1024>(k, alpha, a, b, beta, c, ldc);
  else
    simd_microkernel<Avx512F64, asm_24x8::kMr, asm_24x8::kNr>(k, alpha, a, a_step, b, beta, c, ldc);
}

// Narrow, half-row and unpacked-B edges from the template, the full tile from the asm.
template <bool kEmbedded>
constexpr MicroKernel<double> asm_24x8_tile() {
  MicroKernel<double> uk = template_tile<Avx512F64, asm_24x8::kMr, asm_24x8::kNr>();
  uk.fn = &asm_24x8_full_tile<kEmbedded>;
  return uk;
}

// Everything but the DGEMM tile is the same in the three AVX-512 sets.
constexpr KernelSet avx512_set(MicroKernel<double> dgemm) {
  return {template_tile<Avx512F32, 32, 12>(), dgemm,
          &simd_gemv_n<Avx512F32>, &simd_gemv_t<Avx512F32>,
          &simd_gemv_n<Avx512F64>, &simd_gemv_t<Avx512F64>};
}

}  // namespace

const KernelSet kAvx512Kernels = avx512_set(template_tile<Avx512F64, 16, 12>());

// The same set with BLIS skx's DGEMM tile, 24x8: 3 vector loads of A and 8 broadcasts of
// B per k step (11 loads per 24 FMAs against 14 at 16x12), chosen by
// TAIHU_GEMM_DGEMM_TILE=24x8 (registry.cpp).
const KernelSet kAvx512Kernels24x8 = avx512_set(template_tile<Avx512F64, 24, 8>());

// The same set with the hand-scheduled inline-asm 16x14 DGEMM tile (BLIS skx's shape:
// 16 loads per 28 FMAs, C prefetched in the last k steps), chosen by
// default (TAIHU_GEMM_DGEMM_TILE=16x12 or 24x8 pick the others; registry.cpp).
const KernelSet kAvx512Kernels16x14 = avx512_set(asm_x14_tile<Avx512F64>());

// The inline-asm 24x8 DGEMM tile, MKL's panel shape (gemm_asm_24x8.hpp): B broadcast into
// registers (TAIHU_GEMM_DGEMM_TILE=24x8asm) or as embedded {1to8} FMA operands
// (24x8asmemb: 27 load uops per 24 FMAs, 12-15% slower alone here).
const KernelSet kAvx512Kernels24x8Asm = avx512_set(asm_24x8_tile<false>());
const KernelSet kAvx512Kernels24x8AsmEmb = avx512_set(asm_24x8_tile<true>());

// The inline-asm SGEMM 32x14 tile (TAIHU_GEMM_SGEMM_TILE=32x14; registry.cpp).
const MicroKernel<float> kAvx512Sgemm32x14 = asm_x14_tile<Avx512F32>();

// The x14 asm software-pipelined: B as embedded broadcasts, A one k step ahead in a
// second register pair (TAIHU_GEMM_DGEMM_TILE=16x14pipe, TAIHU_GEMM_SGEMM_TILE=32x14pipe).
const KernelSet kAvx512Kernels16x14Pipe = avx512_set(asm_x14_tile<Avx512F64, true>());
const MicroKernel<float> kAvx512Sgemm32x14Pipe = asm_x14_tile<Avx512F32, true>();

}  // namespace taihu::gemm::kernels
