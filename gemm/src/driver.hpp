// The Goto/BLIS five-loop driver for column-major C = alpha op(A) op(B) + beta C, and
// the pre-packed operand form it can take instead of packing on the fly.
#pragma once
#include <vector>

#include "kernels/microkernel.hpp"
#include "packing.hpp"
#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::gemm {

// An operand packed once over its whole extent: for each kc block of the depth, all
// of its rows (A) or columns (B) as zero-padded micro-panels. `width` is mr or nr.
template <class T>
struct PrepackedPanels {
  int width = 0;
  index_t extent = 0;  // rows of op(A) or columns of op(B)
  index_t depth = 0;   // k
  index_t kc = 0;      // depth block the panels were cut with
  std::vector<arch::AlignedBuffer<T>> blocks;  // one per kc block
};

// Which part of C a product writes: all of it, or only its lower (i >= j) or upper
// (i <= j) triangle relative to C's own origin (gemmt/syrk's diagonal blocks).
// Entries outside the part are never read or written; micro-tiles wholly outside it
// are not computed.
enum class Part { all, lower, upper };

template <class T>
struct Problem {
  index_t m = 0, n = 0, k = 0;
  index_t k_lo = 0;  // the product sums over depth [k_lo, k) (a depth split's upper half)
  T alpha{}, beta{};
  MatrixView<T> a, b;
  T* c = nullptr;
  index_t ldc = 0;
  const PrepackedPanels<T>* packed_a = nullptr;  // overrides `a` when set
  const PrepackedPanels<T>* packed_b = nullptr;  // overrides `b` when set
  Part part = Part::all;  // not all: one thread, B-resident loops, no pre-packed operands
};

// Runs the five loops with `threads` threads (1: no parallel region). Requires
// m, n, k >= 1; the API layer handles the degenerate cases.
template <class T>
void run_driver(const Problem<T>& problem, const kernels::MicroKernel<T>& kernel, int threads);

// Packs all of op(A) (as_b = false, panels of kernel.mr) or op(B) (as_b = true,
// panels of kernel.nr) with the block sizes run_driver uses, into p: its blocks are
// reused when they already have this shape (a repack), else allocated.
template <class T>
void prepack(const MatrixView<T>& x, index_t extent, index_t depth, bool as_b, const kernels::MicroKernel<T>& kernel,
             PrepackedPanels<T>& p);

// C := beta * C over an m x n column-major matrix; beta == 0 writes zeros (never
// reads C). The k == 0 and alpha == 0 cases of every entry point.
template <class T>
void scale_c(index_t m, index_t n, T beta, T* c, index_t ldc);

// The number of threads worth using for an m x n x k product.
int threads_for_gemm(index_t m, index_t n, index_t k);

}  // namespace taihu::gemm
