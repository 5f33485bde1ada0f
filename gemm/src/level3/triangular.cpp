// trmm and trsm by recursive halving of the triangle (as ReLAPACK and BLIS's trsm
// variants): each split turns the off-diagonal block into one GEMM update of the other
// half of B. trsm solves a diagonal block of at most fused_block() (512 here) in one
// fused pass on the GEMM micro-kernel (solve_block: A's block packed once with its
// inverted mr x mr diagonal triangles, B walked in L1-resident strips); trmm expands a
// diagonal block of at most kDiagonal into a dense square (zeros outside the triangle,
// ones on a unit diagonal) applied to a copy of its slice of B by one more GEMM. Only
// A's `uplo` triangle is read (and not its diagonal when unit); B outside its m x n
// block is never touched.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../block_sizes.hpp"
#include "../kernels/microkernel.hpp"
#include "../packing.hpp"
#include "level3.hpp"
#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::gemm::level3 {
namespace {

constexpr index_t kDiagonal = 64;

index_t split(index_t n) { return std::min(n - 1, (n / 2 + 31) / 32 * 32); }

template <class T>
struct Triangle {
  OpView<T> op;    // op(A)
  bool lower;      // op(A) is lower triangular (uplo and trans together)
  bool unit;
  bool solve;      // trsm (else trmm)
  bool left;
  index_t other;   // B's extent along the side A does not multiply (n if left, m if right)
  std::vector<T> dense;  // kDiagonal^2
  std::vector<T> copy;   // kDiagonal * other
  // The fused solve (solve_block): the packed row panels of one diagonal block, one
  // mr x mr inverse, one row panel's off-diagonal part (as B micro-panels), one strip
  // of B.
  arch::AlignedBuffer<T> panels, strip;
  std::vector<T> inverse, off_diagonal;
};

// The largest diagonal block the recursion stops at: trsm's fused solve takes blocks
// whose packed triangle (s^2 / 2 elements) fills up to half of this core's L2, in
// multiples of 128 up to 512 (2 MiB: 512 float or double; 512 KiB: 256); trmm's expanded
// square kDiagonal. strsm 2048 (1 thread, left lower) with fused blocks of at most 64 /
// 128 / 256 / 512 / 1024 / 2048: 128 / 131 / 136 / 141 / 128 / 120 GFLOP/s.
template <class T>
index_t fused_block() {
  static const index_t s = [] {
    const double l2 = static_cast<double>(cache_geometry(2).bytes);
    const auto side = static_cast<index_t>(std::sqrt(l2 / static_cast<double>(sizeof(T))));
    return std::clamp<index_t>(side / 128 * 128, 128, 512);
  }();
  return s;
}
template <class T>
index_t diagonal_limit(const Triangle<T>& tr) { return tr.solve ? fused_block<T>() : kDiagonal; }

// out (column major, ld >= s) := the inverse of the triangle op(A)(o:o+s, o:o+s), zeros
// elsewhere in its s columns (rows s..ld-1 included), by substitution.
template <class T>
void triangle_inverse(const OpView<T>& op, bool lower, bool unit, index_t o, index_t s, T* out, index_t ld) {
  for (index_t j = 0; j < s; ++j) {
    T* x = out + j * ld;
    std::fill(x, x + ld, T(0));
    x[j] = T(1);
    if (lower) {
      for (index_t l = j; l < s; ++l) {
        if (!unit) x[l] /= op(o + l, o + l);
        for (index_t i = l + 1; i < s; ++i) x[i] -= op(o + i, o + l) * x[l];
      }
    } else {
      for (index_t l = j; l >= 0; --l) {
        if (!unit) x[l] /= op(o + l, o + l);
        for (index_t i = 0; i < l; ++i) x[i] -= op(o + i, o + l) * x[l];
      }
    }
  }
}

// Left-side trsm of one diagonal block, B's slice (s x other) := alpha op(A)^-1 B's
// slice, fused as BLIS's gemmtrsm but on taihu's GEMM micro-kernel alone: A's block is
// packed once into mr-row panels, panel i holding [-D_i^-1 A_i | alpha D_i^-1] (lower;
// upper the other way round), where D_i is its mr x mr diagonal triangle and A_i the
// part left (right) of it. Then for each nr-column strip of B, packed once into an L1
// panel, X_i = alpha D_i^-1 B_i - D_i^-1 A_i X is one kernel call over the panel's
// whole depth, the solved rows already in the packed strip; X_i is written to B and
// packed over B_i in the strip. So every flop of the block runs in the kernel (the
// diagonal triangles as full mr x mr squares), with no GEMM call, copy or C round
// trip between the recursive halves of the block.
// The right side solves the transposed system op(A)^T X^T = alpha B^T the same way:
// B's slice is read and written transposed (through the scratch tile).
template <class T>
void solve_block(Triangle<T>& tr, index_t o, index_t s, T alpha, T* b, index_t ldb) {
  const auto& uk = kernels::microkernel_of<T>(kernels::active_kernels());
  // B-panel packing below takes the kernel's register-transposing packer (the portable
  // one cost dtrsm 512 8%: bench/results/2026-11-28-xeon-gemm-packing.md).
  const index_t mr = uk.mr, nr = uk.nr;
  const index_t panel_count = (s + mr - 1) / mr;
  const bool right = !tr.left;
  const OpView<T> op = right ? OpView<T>{tr.op.p, tr.op.ld, !tr.op.trans} : tr.op;
  const bool lower = right ? !tr.lower : tr.lower;
  const MatrixView<T> a_view{op.p, op.ld, op.trans};
  T* inv = tr.inverse.data();
  T* off = tr.off_diagonal.data();
  alignas(64) T tile[32 * 16];
  // Row panel i: rows [r, r + rows) of the block; depth [first, first + len) of it.
  std::vector<index_t> start(static_cast<size_t>(panel_count) + 1, 0);
  for (index_t i = 0; i < panel_count; ++i) {
    const index_t r = i * mr, rows = std::min(mr, s - r);
    const index_t len = lower ? r + rows : s - r;
    start[static_cast<size_t>(i) + 1] = start[static_cast<size_t>(i)] + mr * len;
    T* dst = tr.panels.data() + start[static_cast<size_t>(i)];
    const index_t depth = len - rows;  // the off-diagonal part
    T* d_inv = dst + (lower ? depth : 0) * mr;
    T* d_off = dst + (lower ? 0 : rows) * mr;
    triangle_inverse(op, lower, tr.unit, o + r, rows, inv, mr);
    for (index_t e = 0; e < rows * mr; ++e) d_inv[e] = alpha * inv[e];
    if (depth == 0) continue;
    // -D_i^-1 A_i by the micro-kernel itself: A_i packed as B micro-panels (depth
    // columns, k = rows), D_i^-1 as the A micro-panel, C the packed panel (ld = mr).
    // (A scalar loop here took 14% of strsm 1024.)
    const index_t first_col = lower ? o : o + r + rows;
    const index_t b_panels = (depth + nr - 1) / nr;
    pack_b(a_view, o + r, rows, first_col, depth, static_cast<int>(nr), off, 0, b_panels, uk.pack_b_lines);
    for (index_t jp = 0; jp < b_panels; ++jp) {
      const index_t cols = std::min(nr, depth - jp * nr);
      T* c = d_off + jp * nr * mr;
      if (cols == nr) {
        uk.fn(rows, T(-1), inv, mr, off + jp * nr * rows, T(0), c, mr);
      } else {
        uk.fn(rows, T(-1), inv, mr, off + jp * nr * rows, T(0), tile, mr);
        std::copy(tile, tile + cols * mr, c);
      }
    }
  }
  const MatrixView<T> b_view{b, ldb, right};
  T* strip = tr.strip.data();
  for (index_t j0 = 0; j0 < tr.other; j0 += nr) {
    const index_t cols = std::min(nr, tr.other - j0);
    pack_b(b_view, 0, s, j0, cols, static_cast<int>(nr), strip, 0, 1, uk.pack_b_lines);
    for (index_t step = 0; step < panel_count; ++step) {
      const index_t i = lower ? step : panel_count - 1 - step;
      const index_t r = i * mr, rows = std::min(mr, s - r);
      const index_t first = lower ? 0 : r, len = lower ? r + rows : s - r;
      const T* ap = tr.panels.data() + start[static_cast<size_t>(i)];
      if (right) {  // X_i^T is B's columns [r, r + rows) of rows [j0, j0 + cols)
        uk.fn(len, T(1), ap, mr, strip + first * nr, T(0), tile, mr);
        for (index_t q = 0; q < rows; ++q)
          for (index_t j = 0; j < cols; ++j) b[j0 + j + (r + q) * ldb] = tile[q + j * mr];
      } else if (rows == mr && cols == nr) {
        uk.fn(len, T(1), ap, mr, strip + first * nr, T(0), b + r + j0 * ldb, ldb);
      } else {
        T* c = b + r + j0 * ldb;
        uk.fn(len, T(1), ap, mr, strip + first * nr, T(0), tile, mr);
        for (index_t j = 0; j < cols; ++j)
          for (index_t q = 0; q < rows; ++q) c[q + j * ldb] = tile[q + j * mr];
      }
      pack_b(b_view, r, rows, j0, cols, static_cast<int>(nr), strip + r * nr, 0, 1, uk.pack_b_lines);
    }
  }
}

// dense (s x s) := op(A)(o:o+s, o:o+s) as a full square (trmm).
template <class T>
void expand_diagonal(Triangle<T>& tr, index_t o, index_t s) {
  T* d = tr.dense.data();
  for (index_t j = 0; j < s; ++j)
    for (index_t i = 0; i < s; ++i) {
      const bool inside = tr.lower ? i > j : i < j;
      d[i + j * s] = inside ? tr.op(o + i, o + j) : T(0);
    }
  for (index_t i = 0; i < s; ++i) d[i + i * s] = tr.unit ? T(1) : tr.op(o + i, o + i);
}

// trmm's diagonal block: B's slice := alpha dense B's slice (left) or alpha B's slice
// dense (right).
template <class T>
void diagonal_block(Triangle<T>& tr, index_t o, index_t s, T alpha, T* b, index_t ldb) {
  expand_diagonal(tr, o, s);
  const index_t rows = tr.left ? s : tr.other;
  const index_t cols = tr.left ? tr.other : s;
  T* copy = tr.copy.data();
  for (index_t j = 0; j < cols; ++j) std::copy(b + j * ldb, b + j * ldb + rows, copy + j * rows);
  const OpView<T> d{tr.dense.data(), s, false};
  const OpView<T> c{copy, rows, false};
  if (tr.left) {
    gemm_cm<T>(s, cols, s, alpha, d, c, T(0), b, ldb);
  } else {
    gemm_cm<T>(rows, s, s, alpha, c, d, T(0), b, ldb);
  }
}

// The triangle op(A)(o:o+s, o:o+s) applied to B's slice starting at b.
template <class T>
void recurse(Triangle<T>& tr, index_t o, index_t s, T alpha, T* b, index_t ldb) {
  if (s <= diagonal_limit(tr)) {
    if (tr.solve) solve_block(tr, o, s, alpha, b, ldb);
    else diagonal_block(tr, o, s, alpha, b, ldb);
    return;
  }
  const index_t s1 = split(s);
  const index_t s2 = s - s1;
  T* b1 = b;
  T* b2 = tr.left ? b + s1 : b + s1 * ldb;
  const OpView<T> a12{tr.op.at(o, o + s1), tr.op.ld, tr.op.trans};  // s1 x s2
  const OpView<T> a21{tr.op.at(o + s1, o), tr.op.ld, tr.op.trans};  // s2 x s1
  const OpView<T> v1{b1, ldb, false};
  const OpView<T> v2{b2, ldb, false};
  const index_t other = tr.other;
  // Whether the first half is done first: the half whose result the other needs.
  // trsm: lower-left and upper-right solve B1 first; trmm the opposite, since it needs
  // the other half's old values.
  const bool first_half_first = tr.solve ? (tr.lower == tr.left) : (tr.lower != tr.left);
  if (tr.solve) {
    if (first_half_first) {
      recurse(tr, o, s1, alpha, b1, ldb);
      if (tr.left) gemm_cm<T>(s2, other, s1, T(-1), a21, v1, alpha, b2, ldb);
      else gemm_cm<T>(other, s2, s1, T(-1), v1, a12, alpha, b2, ldb);
      recurse(tr, o + s1, s2, T(1), b2, ldb);
    } else {
      recurse(tr, o + s1, s2, alpha, b2, ldb);
      if (tr.left) gemm_cm<T>(s1, other, s2, T(-1), a12, v2, alpha, b1, ldb);
      else gemm_cm<T>(other, s1, s2, T(-1), v2, a21, alpha, b1, ldb);
      recurse(tr, o, s1, T(1), b1, ldb);
    }
  } else if (first_half_first) {  // B1 := A11 B1 + A12 B2 (left upper), B1 A11 + B2 A21
    recurse(tr, o, s1, alpha, b1, ldb);
    if (tr.left) gemm_cm<T>(s1, other, s2, alpha, a12, v2, T(1), b1, ldb);
    else gemm_cm<T>(other, s1, s2, alpha, v2, a21, T(1), b1, ldb);
    recurse(tr, o + s1, s2, alpha, b2, ldb);
  } else {  // B2 := A21 B1 + A22 B2 (left lower), B1 A12 + B2 A22 (right upper)
    recurse(tr, o + s1, s2, alpha, b2, ldb);
    if (tr.left) gemm_cm<T>(s2, other, s1, alpha, a21, v1, T(1), b2, ldb);
    else gemm_cm<T>(other, s2, s1, alpha, v1, a12, T(1), b2, ldb);
    recurse(tr, o, s1, alpha, b1, ldb);
  }
}

template <class T>
void triangular_serial(bool solve, bool left, bool upper, bool trans, bool unit, index_t m,
                       index_t n, T alpha, const T* a, index_t lda, T* b, index_t ldb) {
  const index_t order = left ? m : n;
  Triangle<T> tr{OpView<T>{a, lda, trans}, upper == trans, unit, solve, left, left ? n : m, {}, {}, {}, {}, {}, {}};
  if (solve) {
    const index_t mr = kernels::microkernel_of<T>(kernels::active_kernels()).mr;
    const index_t nr = kernels::microkernel_of<T>(kernels::active_kernels()).nr;
    const index_t d = std::min(order, diagonal_limit(tr)) + mr;  // rounded up to panels
    tr.panels = arch::AlignedBuffer<T>(static_cast<size_t>(d * d));
    tr.strip = arch::AlignedBuffer<T>(static_cast<size_t>(d * nr));
    tr.inverse.resize(static_cast<size_t>(mr * mr));
    tr.off_diagonal.resize(static_cast<size_t>(mr * (d + nr)));
  } else {
    const index_t d = std::min(order, kDiagonal);
    tr.dense.resize(static_cast<size_t>(d * d));
    tr.copy.resize(static_cast<size_t>(d * tr.other));
  }
  recurse(tr, 0, order, alpha, b, ldb);
}

// B's columns (left) or rows (right) are independent problems: one slice per thread.
template <class T>
void triangular(bool solve, bool left, bool upper, bool trans, bool unit, index_t m, index_t n,
                T alpha, const T* a, index_t lda, T* b, index_t ldb) {
  if (m == 0 || n == 0) return;
  if (alpha == T(0)) {
    scale(m, n, T(0), b, ldb);
    return;
  }
  const index_t order = left ? m : n, other = left ? n : m;
  const double flops = static_cast<double>(order) * static_cast<double>(order) * static_cast<double>(other);
  const int threads = slice_threads(flops, other, 64);
  if (threads <= 1) {
    triangular_serial(solve, left, upper, trans, unit, m, n, alpha, a, lda, b, ldb);
    return;
  }
  run_slices(even_bounds(other, threads, 16), [&](index_t lo, index_t hi) {
    if (left) {
      triangular_serial(solve, left, upper, trans, unit, m, hi - lo, alpha, a, lda, b + lo * ldb, ldb);
    } else {
      triangular_serial(solve, left, upper, trans, unit, hi - lo, n, alpha, a, lda, b + lo, ldb);
    }
  });
}

}  // namespace

template <class T>
void trmm(bool left, bool upper, bool trans, bool unit, index_t m, index_t n, T alpha,
          const T* a, index_t lda, T* b, index_t ldb) {
  triangular(false, left, upper, trans, unit, m, n, alpha, a, lda, b, ldb);
}

template <class T>
void trsm(bool left, bool upper, bool trans, bool unit, index_t m, index_t n, T alpha,
          const T* a, index_t lda, T* b, index_t ldb) {
  triangular(true, left, upper, trans, unit, m, n, alpha, a, lda, b, ldb);
}

template void trmm<float>(bool, bool, bool, bool, index_t, index_t, float, const float*, index_t,
                          float*, index_t);
template void trmm<double>(bool, bool, bool, bool, index_t, index_t, double, const double*,
                           index_t, double*, index_t);
template void trsm<float>(bool, bool, bool, bool, index_t, index_t, float, const float*, index_t,
                          float*, index_t);
template void trsm<double>(bool, bool, bool, bool, index_t, index_t, double, const double*,
                           index_t, double*, index_t);

}  // namespace taihu::gemm::level3
