// Packing op(A) and op(B) blocks into the contiguous, zero-padded micro-panels the
// micro-kernels stream through (see kernels/microkernel.hpp).
#pragma once
#include "kernels/microkernel.hpp"
#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm {

// A matrix operand in column-major terms: element (i, p) of op(X).
template <class T>
struct MatrixView {
  const T* data = nullptr;
  index_t ld = 0;
  bool trans = false;
  const T& at(index_t i, index_t p) const { return trans ? data[p + i * ld] : data[i + p * ld]; }
};

// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of op(A) into ceil(mc/mr) panels of
// mr x kc (panel-major, then k, then row), zero-padding the last panel's rows.
// Only panels [panel_begin, panel_end) are written, so threads can share the work.
// `lines_packer` (optional: an ISA's register-transposing packer for width mr, see
// MicroKernel::pack_a_transposed) packs the full panels of a transposed A.
template <class T>
void pack_a(const MatrixView<T>& a, index_t i0, index_t mc, index_t p0, index_t kc, int mr,
            T* packed, index_t panel_begin, index_t panel_end,
            kernels::PackLinesFn<T> lines_packer = nullptr);

// Packs depth [p0, p0+kc) x columns [j0, j0+nc) of op(B) into ceil(nc/nr) panels of
// kc x nr (panel-major, then k, then column), zero-padding the last panel's columns.
// `lines_packer` (optional, width nr: MicroKernel::pack_b_lines) packs the full panels
// of a no-transpose B.
template <class T>
void pack_b(const MatrixView<T>& b, index_t p0, index_t kc, index_t j0, index_t nc, int nr,
            T* packed, index_t panel_begin, index_t panel_end,
            kernels::PackLinesFn<T> lines_packer = nullptr);

}  // namespace taihu::gemm
