// The micro-kernel contract (BLIS style) and the per-ISA kernel sets.
//
// A micro-kernel computes one MR x NR tile of C (column major, leading dimension ldc):
//     C := alpha * Ap * Bp + beta * C
// where Ap holds k steps of MR contiguous values of A, step p starting at
// a + p * a_step (a_step == MR: a packed micro-panel; a_step == lda: MR rows read in
// place from a column-major A, the no-pack path for skinny products), and Bp is a
// packed micro-panel of B (k steps of NR contiguous values). Panels are zero-padded by
// the packing routines, so a kernel may always compute its whole tile; edges either run
// a variant that computes and writes only part of it (narrow, half_rows, unpacked_b
// below) or point C at a scratch tile. beta == 0 means C is written, never read (so NaN
// or Inf already in C cannot leak). k may be 0 (then C := beta * C, or 0 when beta == 0).
//
// A GEMV kernel computes y := alpha * op(A) x + beta * y for a column-major A with
// unit-stride x and y (the driver copies strided vectors); rows [row0, row1) of y for
// op = no transpose, and entries [row0, row1) of y for op = transpose.
#pragma once
#include "taihu/arch/isa.hpp"
#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm::kernels {

template <class T>
using MicroKernelFn = void (*)(index_t k, T alpha, const T* a, index_t a_step, const T* b_panel,
                               T beta, T* c, index_t ldc);

template <class T>
using GemvFn = void (*)(index_t rows, index_t cols, T alpha, const T* a, index_t lda, const T* x,
                        T beta, T* y, index_t row0, index_t row1);

// The same tile reading op(B) in place: step p of column j at b[p * b_rs + j * b_cs]
// (b_rs = 1, b_cs = ldb for a column-major B; b_rs = ldb, b_cs = 1 for its transpose).
template <class T>
using UnpackedBKernelFn = void (*)(index_t k, T alpha, const T* a, index_t a_step, const T* b,
                                   index_t b_rs, index_t b_cs, T beta, T* c, index_t ldc);

// Packs one full micro-panel whose lines run along k: width w lines (the mr rows of a
// transposed A, or the nr columns of a no-transpose B), line i at src + i * ld, into
// dst[p * w + i] for p < kc.
template <class T>
using PackLinesFn = void (*)(const T* src, index_t ld, index_t kc, T* dst);

inline constexpr int kMaxNr = 16;

template <class T>
struct MicroKernel {
  MicroKernelFn<T> fn = nullptr;
  int mr = 0;  // rows of the register tile (the vector direction)
  int nr = 0;  // columns of the register tile (broadcast direction)
  // Optional (nullptr where an ISA has none): narrow[j] computes only the first j < nr
  // columns of a packed panel, writing C directly (no scratch tile for column edges);
  // unpacked_b[j] computes the first j <= nr columns of an in-place op(B).
  MicroKernelFn<T> narrow[kMaxNr + 1] = {};
  UnpackedBKernelFn<T> unpacked_b[kMaxNr + 1] = {};
  // The first mr / 2 rows only (all nr columns), for row edges of at most mr / 2 rows:
  // half the work of a full tile on a zero-padded panel.
  MicroKernelFn<T> half_rows = nullptr;
  UnpackedBKernelFn<T> half_rows_unpacked_b = nullptr;
  // Optional: a transposing packer for full micro-panels of a transposed A, in this
  // ISA's registers (nullptr: the portable packer in packing.cpp).
  PackLinesFn<T> pack_a_transposed = nullptr;
  // Optional: the same for full nr-column micro-panels of a no-transpose B.
  PackLinesFn<T> pack_b_lines = nullptr;
};

// Everything one ISA level provides.
struct KernelSet {
  MicroKernel<float> sgemm;
  MicroKernel<double> dgemm;
  GemvFn<float> sgemv_n, sgemv_t;    // y = A x, y = A^T x
  GemvFn<double> dgemv_n, dgemv_t;
};

// Registered by kernels/<isa>/gemm_<isa>.cpp.
extern const KernelSet kGenericKernels;
extern const KernelSet kAvx2Kernels;
extern const KernelSet kAvx512Kernels;
// AVX-512 with the 24x8 DGEMM tile (TAIHU_GEMM_DGEMM_TILE=24x8).
extern const KernelSet kAvx512Kernels24x8;
// AVX-512 with the inline-asm 24x8 DGEMM tile, B broadcast into registers
// (TAIHU_GEMM_DGEMM_TILE=24x8asm) or as embedded {1to8} FMA operands (24x8asmemb).
extern const KernelSet kAvx512Kernels24x8Asm;
extern const KernelSet kAvx512Kernels24x8AsmEmb;
extern const KernelSet kAvx512Kernels16x14Pipe;  // x14 asm, embedded B, A one step ahead
// AVX-512 with the inline-asm 16x14 DGEMM tile: the default (registry.cpp);
// kAvx512Kernels above has the 16x12 template tile (TAIHU_GEMM_DGEMM_TILE=16x12).
extern const KernelSet kAvx512Kernels16x14;
// The inline-asm SGEMM 32x14 tile (TAIHU_GEMM_SGEMM_TILE=32x14; the sets above have the
// 32x12 template tile).
extern const MicroKernel<float> kAvx512Sgemm32x14;
extern const MicroKernel<float> kAvx512Sgemm32x14Pipe;

// The micro-kernel and GEMV kernels of a set for element type T.
template <class T>
const MicroKernel<T>& microkernel_of(const KernelSet& ks);
template <>
inline const MicroKernel<float>& microkernel_of<float>(const KernelSet& ks) { return ks.sgemm; }
template <>
inline const MicroKernel<double>& microkernel_of<double>(const KernelSet& ks) { return ks.dgemm; }
template <class T>
GemvFn<T> gemv_of(const KernelSet& ks, bool transposed);
template <>
inline GemvFn<float> gemv_of<float>(const KernelSet& ks, bool t) { return t ? ks.sgemv_t : ks.sgemv_n; }
template <>
inline GemvFn<double> gemv_of<double>(const KernelSet& ks, bool t) { return t ? ks.dgemv_t : ks.dgemv_n; }

// The set for this process (TAIHU_ISA aware), chosen once via arch's dispatch.
const KernelSet& active_kernels();
// The set for one level, for tests that cover every path in one process.
const KernelSet& kernels_for(arch::Isa level);
const char* active_kernels_name();

}  // namespace taihu::gemm::kernels
