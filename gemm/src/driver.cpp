// Five loops around the micro-kernel, in the A-resident order (block_sizes.hpp):
// ic (A's mc x kc block, packed once, in L3) > pc > jc (B's kc x nc block, packed into
// this thread's L2) > ir (A's wide micro-panel, held in L1) > jr (B's narrow
// micro-panels, streaming from L2); products large in both m and n take the B-resident
// order instead (BLIS's, see b_resident_body). Threads split C's columns and share A's blocks
// (one barrier per block), or, with narrow C, split the rows with no barrier. Beside
// it: the skinny path (A read in place, or strip by strip packed into L1), its no-pack form (op(B) in place too), the
// depth split of deep products with a small C, and, in gemv.cpp, m or n == 1.
// Every C element is computed in the same order whatever the thread count, so the
// result is bitwise identical with 1 or N threads.
#include "driver.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string>

#include "block_sizes.hpp"
#include "taihu/arch/environment.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::gemm {
namespace {

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

// A block size no larger than `block` that cuts `extent` into equal blocks (rounded up
// to `multiple`): 196 rows with mc = 192 become 112 + 84 rather than 192 + a 4-row
// block that runs only edge tiles.
index_t balanced(index_t extent, index_t block, index_t multiple) {
  if (extent <= 0) return block;
  const index_t blocks = ceil_div(extent, block);
  return std::min(block, ceil_div(ceil_div(extent, blocks), multiple) * multiple);
}

// [begin, end) of `count` items for thread `tid` of `nt`.
void share(index_t count, int tid, int nt, index_t& begin, index_t& end) {
  begin = count * tid / nt;
  end = count * (tid + 1) / nt;
}

// C's rows x cols corner := scratch tile (leading dimension ld) + beta C, never reading
// C when beta == 0. Two loops, so that each column's merge vectorizes (a 64-column C has
// an edge tile in every row strip: a per-element branch took 4% of a 64^3 SGEMM).
template <class T>
void merge_tile(const T* tile, index_t ld, T beta, T* c, index_t ldc, index_t rows, index_t cols) {
  if (beta == T(0)) {
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i) c[i + j * ldc] = tile[i + j * ld];
  } else {
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i) c[i + j * ldc] = tile[i + j * ld] + beta * c[i + j * ldc];
  }
}

// One rows x cols tile of C: a full tile goes straight to the kernel; an edge tile runs
// the kernel into a scratch tile, then merges the valid part into C.
template <class T>
void micro_tile(const kernels::MicroKernel<T>& uk, index_t kc, T alpha, const T* ap, index_t a_step,
                const T* bp, T beta, T* c, index_t ldc, index_t rows, index_t cols) {
  if (rows == uk.mr && cols == uk.nr) {
    uk.fn(kc, alpha, ap, a_step, bp, beta, c, ldc);
    return;
  }
  if (rows == uk.mr && uk.narrow[cols] != nullptr) {  // a column edge, straight into C
    uk.narrow[cols](kc, alpha, ap, a_step, bp, beta, c, ldc);
    return;
  }
  // A row edge of at most mr / 2 rows runs the half-height kernel (m = 196: the last
  // 4-row strip did a whole 16-row tile's work).
  const bool half = 2 * rows <= uk.mr && uk.half_rows != nullptr;
  if (half && 2 * rows == uk.mr && cols == uk.nr) {
    uk.half_rows(kc, alpha, ap, a_step, bp, beta, c, ldc);
    return;
  }
  alignas(64) T tile[32 * 16];
  (half ? uk.half_rows : uk.fn)(kc, alpha, ap, a_step, bp, T(0), tile, uk.mr);
  merge_tile(tile, uk.mr, beta, c, ldc, rows, cols);
}

// The same for op(B) read in place (step p, column j at b[p * b_rs + j * b_cs]).
template <class T>
void unpacked_tile(const kernels::MicroKernel<T>& uk, index_t kc, T alpha, const T* ap, index_t a_step,
                   const T* b, index_t b_rs, index_t b_cs, T beta, T* c, index_t ldc, index_t rows,
                   index_t cols) {
  if (rows == uk.mr) {
    uk.unpacked_b[cols](kc, alpha, ap, a_step, b, b_rs, b_cs, beta, c, ldc);
    return;
  }
  alignas(64) T tile[32 * 16];
  if (2 * rows <= uk.mr && cols == uk.nr && uk.half_rows_unpacked_b != nullptr)
    uk.half_rows_unpacked_b(kc, alpha, ap, a_step, b, b_rs, b_cs, T(0), tile, uk.mr);
  else
    uk.unpacked_b[cols](kc, alpha, ap, a_step, b, b_rs, b_cs, T(0), tile, uk.mr);
  merge_tile(tile, uk.mr, beta, c, ldc, rows, cols);
}

template <class T>
struct Workspace {
  arch::AlignedBuffer<T> a_block, b_panel;
  void reserve(std::size_t a_elems, std::size_t b_elems) {
    if (a_block.size() < a_elems) a_block = arch::AlignedBuffer<T>(a_elems, 4096);
    if (b_panel.size() < b_elems) b_panel = arch::AlignedBuffer<T>(b_elems, 4096);
  }
};

// B's kc x nc block (depth block q): the pre-packed one, or this thread's share of its
// micro-panels packed into b_buf (the caller synchronises before using the rest).
template <class T>
const T* b_block(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, index_t q, index_t pc, index_t kc,
                 index_t jc, index_t nc, T* b_buf, int tid, int nt) {
  const int nr = uk.nr;
  if (pr.packed_b) return pr.packed_b->blocks[q].data() + (jc / nr) * nr * kc;
  index_t lo, hi;
  share(ceil_div(nc, nr), tid, nt, lo, hi);
  pack_b(pr.b, pc, kc, jc, nc, nr, b_buf, lo, hi, uk.pack_b_lines);
  return b_buf;
}

// Micro-panels [lo, hi) of op(A)'s rows [ic, ic + mc) x depth [pc, pc + kc) into
// a_buf: a transposed A's full panels through the ISA's transposing packer where it
// has one.
template <class T>
void pack_a_panels(const MatrixView<T>& a, const kernels::MicroKernel<T>& uk, index_t ic, index_t mc, index_t pc,
                   index_t kc, T* a_buf, index_t lo, index_t hi) {
  pack_a(a, ic, mc, pc, kc, uk.mr, a_buf, lo, hi, uk.pack_a_transposed);
}

// A's mc x kc block the same way: pre-packed, or micro-panels [lo, hi) packed into a_buf.
template <class T>
const T* a_block(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, index_t q, index_t ic, index_t mc,
                 index_t pc, index_t kc, T* a_buf, index_t lo, index_t hi) {
  if (pr.packed_a) return pr.packed_a->blocks[q].data() + (ic / uk.mr) * uk.mr * kc;
  pack_a_panels(pr.a, uk, ic, mc, pc, kc, a_buf, lo, hi);
  return a_buf;
}

// The part of C one call of the body computes: rows [row_lo, row_hi) and columns
// [col_lo, col_hi) (summed over the problem's depth range [k_lo, k)).
struct Region {
  index_t row_lo, row_hi, col_lo, col_hi;
};

// The default order, A-resident (see block_sizes.hpp): A's mc x kc block is packed
// once; then B's kc x nc blocks are packed one at a time into a buffer that stays in
// this core's L2, and every A micro-panel (held in L1 while it meets the block's B
// micro-panels) runs against every B micro-panel (streaming from L2).
// This function computes rows [row_lo, row_hi) x columns [col_lo, col_hi) of C.
// Threads either split the columns and share A's blocks (shared_a: each packs a share
// of the micro-panels, then a barrier; consecutive blocks alternate between two
// buffers, so a thread packing block s+1 overwrites block s-1, which every thread
// finished before the barrier of block s), or split the rows, each thread then
// packing its own A blocks into its own buffer with no barrier at all.
// With unpacked_b, op(B) (not transposed) is read in place instead of packed: for C
// blocks of at most 8 A micro-panels a packed B block would serve too few of them to
// repay its copy (128^3 on 2 threads: 4 panels a thread, 10% of the time packing B).
template <class T>
void a_resident_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                     T* const a_bufs[2], T* b_buf, const Region& rg, bool shared_a, bool unpacked_b, int tid,
                     int nt) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t row_lo = rg.row_lo, row_hi = rg.row_hi, col_lo = rg.col_lo, col_hi = rg.col_hi;
  const index_t nc_step = balanced(col_hi - col_lo, bs.nc, nr);
  const index_t mc_step = balanced(row_hi - row_lo, bs.mc, mr);
  index_t a_blocks = 0;  // A blocks so far: picks the buffer
  for (index_t ic = row_lo; ic < row_hi; ic += mc_step) {
    const index_t mc = std::min<index_t>(mc_step, row_hi - ic);
    const index_t a_panels = ceil_div(mc, mr);
    index_t q = pr.k_lo / bs.kc;  // kc block index (k_lo is a multiple of kc)
    for (index_t pc = pr.k_lo; pc < pr.k; pc += bs.kc, ++q, ++a_blocks) {
      const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
      const T beta = pc == pr.k_lo ? pr.beta : T(1);
      index_t lo = 0, hi = a_panels;
      if (shared_a) share(a_panels, tid, nt, lo, hi);
      const T* ap = a_block(pr, uk, q, ic, mc, pc, kc, a_bufs[a_blocks % 2], lo, hi);
      // Barriers only inside taihu's own team: with nt == 1 this may run inside a
      // caller's parallel region, where a barrier would bind to the caller's team.
      if (shared_a && nt > 1 && !pr.packed_a) {
#pragma omp barrier
      }
      for (index_t jc = col_lo; jc < col_hi; jc += nc_step) {
        const index_t nc = std::min<index_t>(nc_step, col_hi - jc);
        const index_t b_panels = ceil_div(nc, nr);
        const T* bp = unpacked_b ? nullptr : b_block(pr, uk, q, pc, kc, jc, nc, b_buf, 0, 1);
        for (index_t ir = 0; ir < a_panels; ++ir) {
          const index_t rows = std::min<index_t>(mr, mc - ir * mr);
          const T* a_micro = ap + ir * mr * kc;
          T* c_row = pr.c + ic + ir * mr;
          // Prefetches one step ahead of the kernel, which fetches its own C tile only
          // as it starts: the next tile's C lines (C comes from memory once per depth
          // block; 2048^3 on 1 thread under load 80 -> 88 GFLOP/s), and a share of the
          // next A micro-panel's lines during each tile (it comes from L3; -> 90).
          const char* a_next = reinterpret_cast<const char*>(a_micro + mr * kc);
          const index_t a_lines = ir + 1 < a_panels ? mr * kc * static_cast<index_t>(sizeof(T)) / 64 : 0;
          const index_t lines_per_tile = ceil_div(a_lines, b_panels);
          for (index_t jr = 0; jr < b_panels; ++jr) {
            const index_t cols = std::min<index_t>(nr, nc - jr * nr);
            T* c = c_row + (jc + jr * nr) * pr.ldc;
            for (index_t l = jr * lines_per_tile; l < std::min(a_lines, (jr + 1) * lines_per_tile); ++l)
              __builtin_prefetch(a_next + l * 64, 0, 2);
            if (jr + 1 < b_panels)
              for (index_t j = nr; j < 2 * nr; ++j) {
                __builtin_prefetch(c + j * pr.ldc, 1, 3);
                __builtin_prefetch(c + j * pr.ldc + mr - 1, 1, 3);
              }
            if (unpacked_b)
              unpacked_tile(uk, kc, pr.alpha, a_micro, mr, pr.b.data + pc + (jc + jr * nr) * pr.b.ld, 1, pr.b.ld,
                            beta, c, pr.ldc, rows, cols);
            else
              micro_tile(uk, kc, pr.alpha, a_micro, mr, bp + jr * nr * kc, beta, c, pr.ldc, rows, cols);
          }
        }
      }
    }
  }
}

// True unless the environment variable `name` is "0": the switches that turn a path
// off for comparisons.
bool switched_on(const char* name) {
  const char* env = std::getenv(name);
  return env == nullptr || std::string(env) != "0";
}

// TAIHU_GEMM_UNPACKED=0 turns off reading op(B) in place (the no-pack path and the
// unpacked B blocks).
bool unpacked_enabled() {
  static const bool enabled = switched_on("TAIHU_GEMM_UNPACKED");
  return enabled;
}

enum class Split { model, rows, columns, depth };  // after model: the order of split_choice()'s words

// TAIHU_GEMM_THREADING=rows|columns|depth (unset: the model decides); a bad value is
// reported once and the model decides.
const arch::EnvironmentChoice& split_choice() {
  static const arch::EnvironmentChoice c("TAIHU_GEMM_THREADING", {"rows", "columns", "depth"},
                                         "the threading model's choice");
  return c;
}
[[maybe_unused]] const bool g_split_check_registered = (split_choice(), true);

Split forced_split() { return static_cast<Split>(split_choice().index() + 1); }

// Threads split rows when a column split would leave each fewer than 8 B micro-panels
// (A's micro-panel would then meet too few of them to pay for its trip into L1) and
// there are more rows than columns to go round; or when C is narrow (fewer than 32 B
// micro-panels a thread) and every thread still gets 4 or more A micro-panels: there
// the column split's barrier per A block and its A panels packed on the other core
// cost more than packing B twice (2 threads, SGEMM: 128^3 157 vs 143 GFLOP/s,
// 256x196x2304 171 vs 156, 128x128x4096 157 vs 148; but 128x1024x1024 157 vs 168).
// TAIHU_GEMM_THREADING=rows|columns forces one (and depth the depth split), for comparisons.
template <class T>
bool a_resident_splits_rows(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, int nt) {
  const Split forced = forced_split();
  const index_t n_panels = ceil_div(pr.n, uk.nr), m_panels = ceil_div(pr.m, uk.mr);
  if ((forced == Split::rows || forced == Split::columns) && n_panels >= nt) return forced == Split::rows;
  const auto per_thread = static_cast<index_t>(nt);
  if (n_panels < per_thread) return true;
  if (n_panels < 8 * per_thread && m_panels > n_panels) return true;
  return n_panels < 32 * per_thread && m_panels >= 4 * per_thread;
}

index_t sets_touched(const CacheGeometry& g, index_t stride_bytes);

// Whether B's micro-panel, read in place (nr columns ld apart), can stay in L1: the
// columns must start in enough different sets that each set holds at most half its ways
// of them. At ld = 4096 doubles (32 KiB, a multiple of the L1's way) all 14 fall into
// the same sets and thrash: 128x128x4096's upper depth half read B in place at 0.89x
// the best anchor, packed at 0.96-0.99 (Zen 4, bench/results/2026-11-28-zen4-gemm-kernel3.md).
template <class T>
bool in_place_b_fits_l1(const Problem<T>& pr, const kernels::MicroKernel<T>& uk) {
  static const CacheGeometry l1 = cache_geometry(1);
  const index_t starts = std::min<index_t>(uk.nr, sets_touched(l1, pr.b.ld * static_cast<index_t>(sizeof(T))));
  return starts * std::max(1, l1.ways / 2) >= uk.nr;
}

template <class T>
void run_a_resident(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                    int threads, Workspace<T>& ws) {
  // Workspaces sized to the problem, not to the largest block the model allows.
  const index_t mc_max = std::min<index_t>(bs.mc, ceil_div(pr.m, uk.mr) * uk.mr);
  const index_t nc_max = std::min<index_t>(bs.nc, ceil_div(pr.n, uk.nr) * uk.nr);
  const std::size_t a_elems = static_cast<std::size_t>(mc_max * bs.kc);
  const std::size_t b_elems = static_cast<std::size_t>(nc_max * bs.kc);
  const bool split_rows = threads > 1 && a_resident_splits_rows(pr, uk, threads);
  const bool two_a = threads > 1 && !split_rows && (pr.m > bs.mc || pr.k > bs.kc);
  // B is read in place when every thread's rows make at most 8 A micro-panels and its
  // columns stay in L1.
  const index_t rows_per_thread = split_rows ? ceil_div(pr.m, threads) : pr.m;
  const bool unpacked_b = !pr.packed_b && !pr.b.trans && uk.unpacked_b[uk.nr] != nullptr &&
                          rows_per_thread <= 8 * static_cast<index_t>(uk.mr) && in_place_b_fits_l1(pr, uk) &&
                          unpacked_enabled();
  ws.reserve(pr.packed_a ? 0 : (two_a ? 2 : 1) * a_elems, pr.packed_b ? 0 : b_elems);
  if (threads <= 1) {
    T* const a_bufs[2] = {ws.a_block.data(), ws.a_block.data()};
    a_resident_body(pr, uk, bs, a_bufs, ws.b_panel.data(), Region{0, pr.m, 0, pr.n}, false, unpacked_b, 0,
                    1);
    return;
  }
  T* const shared_a[2] = {ws.a_block.data(), two_a ? ws.a_block.data() + a_elems : ws.a_block.data()};
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    // This thread's B block (in its own L2) and, when it owns rows, its A blocks.
    thread_local Workspace<T> own;
    if (tid != 0) own.reserve(split_rows && !pr.packed_a ? a_elems : 0, pr.packed_b ? 0 : b_elems);
    Workspace<T>& mine = tid == 0 ? ws : own;
    if (nt > 1 && split_rows) {
      index_t lo, hi;
      share(ceil_div(pr.m, uk.mr), tid, nt, lo, hi);
      T* const a_bufs[2] = {mine.a_block.data(), mine.a_block.data()};
      a_resident_body(pr, uk, bs, a_bufs, mine.b_panel.data(),
                      Region{lo * uk.mr, std::min<index_t>(pr.m, hi * uk.mr), 0, pr.n}, false, unpacked_b, tid,
                      nt);
    } else {
      index_t lo, hi;
      share(ceil_div(pr.n, uk.nr), tid, nt, lo, hi);
      a_resident_body(pr, uk, bs, shared_a, mine.b_panel.data(),
                      Region{0, pr.m, lo * uk.nr, std::min<index_t>(pr.n, hi * uk.nr)}, nt > 1, unpacked_b,
                      tid, nt);
    }
  }
}

// How a rows x cols tile of C at (r0, c0) meets the problem's part: wholly outside,
// wholly inside, or cut by the diagonal.
enum class Cover { outside, inside, cut };
Cover tile_cover(Part part, index_t r0, index_t rows, index_t c0, index_t cols) {
  if (part == Part::all) return Cover::inside;
  const index_t r1 = r0 + rows - 1, c1 = c0 + cols - 1;
  if (part == Part::lower) {
    if (r1 < c0) return Cover::outside;
    return r0 >= c1 ? Cover::inside : Cover::cut;
  }
  if (r0 > c1) return Cover::outside;
  return r1 <= c0 ? Cover::inside : Cover::cut;
}

// A tile cut by the diagonal: the kernel into a scratch tile, then only the entries
// of the part (i >= j lower, i <= j upper, in C's coordinates) merged into C.
template <class T>
void cut_tile(const kernels::MicroKernel<T>& uk, index_t kc, T alpha, const T* ap, const T* bp, T beta, T* c,
              index_t ldc, Part part, index_t r0, index_t rows, index_t c0, index_t cols) {
  // C's lines first, so that they arrive while the kernel runs (the tile on the
  // diagonal is the first of its column strip: nothing prefetched it, and waiting for
  // it made gemmt 2048 25% slower).
  if (beta != T(0))
    for (index_t j = 0; j < cols; ++j) {
      __builtin_prefetch(c + j * ldc, 1, 3);
      __builtin_prefetch(c + j * ldc + rows - 1, 1, 3);
    }
  alignas(64) T tile[32 * 16];
  uk.fn(kc, alpha, ap, uk.mr, bp, T(0), tile, uk.mr);
  for (index_t j = 0; j < cols; ++j) {
    const index_t diag = c0 + j - r0;  // the tile row on C's diagonal in this column
    const index_t lo = part == Part::lower ? std::max<index_t>(0, diag) : 0;
    const index_t hi = part == Part::lower ? rows : std::min<index_t>(rows, diag + 1);
    T* col = c + j * ldc;
    const T* t = tile + j * uk.mr;
    if (beta == T(0))
      for (index_t i = lo; i < hi; ++i) col[i] = t[i];
    else
      for (index_t i = lo; i < hi; ++i) col[i] = t[i] + beta * col[i];
  }
}

// The B-resident order (BLIS's), for products large in both m and n: jc (B's kc x nc
// block, packed once, in L3) > pc > ic (A's mc x kc block, packed into this thread's
// L2) > jr (B's nr x kc micro-panel, held in L1) > ir (A's micro-panels, streaming from
// L2; the kernel prefetches them). C is swept down its columns, one nr-column strip at a
// time, so a tile's lines and pages are those of the tile before it (the A-resident
// order walks along C's rows: on 2048^3 SGEMM each tile touched 12 new pages and the
// kernel waited on C). Threads share B's blocks (each packs a share of its
// micro-panels, then a barrier; two buffers alternate as A's do above) and split the
// rows, each packing its own A blocks. With a triangular part (one thread), each B
// block meets only the rows of A that reach the triangle, and tiles outside it are
// skipped.
template <class T>
void b_resident_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs, T* a_buf,
                     T* const b_bufs[2], const Region& rg, int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t nc_step = balanced(rg.col_hi - rg.col_lo, bs.nc, nr);
  const index_t mc_step = balanced(rg.row_hi - rg.row_lo, bs.mc, mr);
  index_t b_blocks = 0;  // B blocks so far: picks the buffer
  for (index_t jc = rg.col_lo; jc < rg.col_hi; jc += nc_step) {
    const index_t nc = std::min<index_t>(nc_step, rg.col_hi - jc);
    const index_t b_panels = ceil_div(nc, nr);
    index_t q = pr.k_lo / bs.kc;
    for (index_t pc = pr.k_lo; pc < pr.k; pc += bs.kc, ++q, ++b_blocks) {
      const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
      const T beta = pc == pr.k_lo ? pr.beta : T(1);
      const T* bp = b_block(pr, uk, q, pc, kc, jc, nc, b_bufs[b_blocks % 2], tid, nt);
      if (nt > 1 && !pr.packed_b) {
#pragma omp barrier
      }
      // The rows of this B block's columns that reach the part.
      index_t row_lo = rg.row_lo, row_hi = rg.row_hi, ic_step = mc_step;
      if (pr.part == Part::lower) row_lo = std::max(row_lo, jc / mr * mr);
      if (pr.part == Part::upper) row_hi = std::min(row_hi, jc + nc);
      if (pr.part != Part::all) ic_step = balanced(row_hi - row_lo, bs.mc, mr);
      for (index_t ic = row_lo; ic < row_hi; ic += ic_step) {
        const index_t mc = std::min<index_t>(ic_step, row_hi - ic);
        const index_t a_panels = ceil_div(mc, mr);
        const T* ap = a_block(pr, uk, q, ic, mc, pc, kc, a_buf, 0, a_panels);
        for (index_t jr = 0; jr < b_panels; ++jr) {
          const index_t cols = std::min<index_t>(nr, nc - jr * nr);
          const T* b_micro = bp + jr * nr * kc;
          T* c_col = pr.c + (jc + jr * nr) * pr.ldc;
          for (index_t ir = 0; ir < a_panels; ++ir) {
            const index_t rows = std::min<index_t>(mr, mc - ir * mr);
            T* c = c_col + ic + ir * mr;
            const Cover cover = tile_cover(pr.part, ic + ir * mr, rows, jc + jr * nr, cols);
            if (cover == Cover::outside) continue;
            // The next tile's C lines (just below this one in the same columns), which
            // the kernel would otherwise only fetch as it stores.
            if (ir + 1 < a_panels)
              for (index_t j = 0; j < cols; ++j) {
                __builtin_prefetch(c + j * pr.ldc + mr, 1, 3);
                __builtin_prefetch(c + j * pr.ldc + 2 * mr - 1, 1, 3);
              }
            if (cover == Cover::cut) {
              cut_tile(uk, kc, pr.alpha, ap + ir * mr * kc, b_micro, beta, c, pr.ldc, pr.part, ic + ir * mr, rows,
                       jc + jr * nr, cols);
              continue;
            }
            micro_tile(uk, kc, pr.alpha, ap + ir * mr * kc, mr, b_micro, beta, c, pr.ldc, rows, cols);
          }
        }
      }
    }
  }
}

// TAIHU_GEMM_ORDER=a|b forces the A- or B-resident order on the products that may take
// either (unset: the model decides), for comparisons; a bad value is reported once and
// the model decides.
const arch::EnvironmentChoice& order_choice() {
  static const arch::EnvironmentChoice c("TAIHU_GEMM_ORDER", {"a", "b"}, "the loop-order model's choice");
  return c;
}
[[maybe_unused]] const bool g_order_check_registered = (order_choice(), true);

// 'a', 'b', or '\0' when the model decides.
char forced_order() {
  const int i = order_choice().index();
  return i < 0 ? '\0' : "ab"[i];
}

// The B-resident order runs products whose rows make at least 8 A micro-panels per
// thread and whose columns make at least 8 B micro-panels (below that the A-resident
// loops, with their unpacked-B and row-split forms, do better), unless forced.
template <class T>
bool use_b_resident(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, int threads) {
  if (pr.k_lo != 0) return false;  // a depth split's upper half keeps the other order's kc
  const char forced = forced_order();
  if (forced != '\0') return forced == 'b';
  const index_t m_panels = ceil_div(pr.m, uk.mr), n_panels = ceil_div(pr.n, uk.nr);
  return m_panels >= 8 * static_cast<index_t>(std::max(1, threads)) && n_panels >= 8;
}

template <class T>
void run_b_resident(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs, int threads,
                    Workspace<T>& ws) {
  const index_t nc_max = std::min<index_t>(bs.nc, ceil_div(pr.n, uk.nr) * uk.nr);
  const index_t rows_per_thread = ceil_div(ceil_div(pr.m, uk.mr), std::max(1, threads)) * uk.mr;
  const index_t mc_max = std::min<index_t>(bs.mc, rows_per_thread);
  const auto a_elems = static_cast<std::size_t>(mc_max * bs.kc);
  const auto b_elems = static_cast<std::size_t>(nc_max * bs.kc);
  const bool two_b = threads > 1 && (pr.n > bs.nc || pr.k > bs.kc);
  ws.reserve(pr.packed_a ? 0 : a_elems, pr.packed_b ? 0 : (two_b ? 2 : 1) * b_elems);
  T* const b_bufs[2] = {ws.b_panel.data(), two_b ? ws.b_panel.data() + b_elems : ws.b_panel.data()};
  if (threads <= 1) {
    b_resident_body(pr, uk, bs, ws.a_block.data(), b_bufs, Region{0, pr.m, 0, pr.n}, 0, 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    thread_local Workspace<T> own;  // this thread's A blocks, in its own L2
    if (tid != 0) own.reserve(pr.packed_a ? 0 : a_elems, 0);
    T* a_buf = tid == 0 ? ws.a_block.data() : own.a_block.data();
    index_t lo, hi;
    share(ceil_div(pr.m, uk.mr), tid, nt, lo, hi);
    b_resident_body(pr, uk, bs, a_buf, b_bufs, Region{lo * uk.mr, std::min<index_t>(pr.m, hi * uk.mr), 0, pr.n},
                    tid, nt);
  }
}

// This thread's buffer for one packed mr x kc panel of ragged rows.
template <class T>
T* edge_panel(int mr, index_t kc) {
  thread_local arch::AlignedBuffer<T> edge;
  const auto elems = static_cast<std::size_t>(mr * kc);
  if (edge.size() < elems) edge = arch::AlignedBuffer<T>(elems);
  return edge.data();
}

// How the skinny paths read A's row strips: in place, or each packed into a micro-panel
// that stays in L1 while it meets every micro-panel of B (see use_skinny).
enum class Strips { none, in_place, packed };

// A's row strip at `row` for depth block [pc, pc + kc): read in place (a_step = lda),
// or, when packed or when it has fewer than mr rows, packed zero-padded into `edge`
// (a_step = mr).
template <class T>
const T* strip_of_a(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, index_t row, index_t rows, index_t pc,
                    index_t kc, T* edge, Strips strips, index_t& a_step) {
  a_step = pr.a.ld;
  if (rows == uk.mr && strips == Strips::in_place) return pr.a.data + row + pc * pr.a.ld;
  pack_a_panels(pr.a, uk, row, rows, pc, kc, edge, 0, 1);
  a_step = uk.mr;
  return edge;
}

// Elements of one packed kc x n block of B on the skinny path.
template <class T>
index_t skinny_b_elems(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs) {
  return bs.kc * ceil_div(pr.n, uk.nr) * uk.nr;
}

// The skinny path (BLIS's "sup" idea): when op(B) has few columns, A's block would be
// reused by only a few micro-panels of B, so packing A costs about as much memory
// traffic as the product saves. Instead B's kc block is packed once (it fits in L2)
// and each thread walks its own rows of A in place: one MR-row strip of A (kc steps,
// a_step = lda) meets every micro-panel of B while it is hot in L1/L2. Rows left over
// below a full MR go through a small packed panel and the edge tile.
// With several threads B alternates between two buffers (b_buf holds two blocks), so
// one barrier per kc block suffices: a thread packing block q+1 overwrites block q-1,
// which every thread finished before the barrier of block q.
template <class T>
void skinny_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs, Strips strips,
                 T* b_buf, int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t b_panels = ceil_div(pr.n, nr);
  const index_t a_panels = ceil_div(pr.m, mr);
  T* edge_a = edge_panel<T>(mr, bs.kc);
  index_t q = 0;  // kc block index (picks the buffer)
  for (index_t pc = pr.k_lo; pc < pr.k; pc += bs.kc, ++q) {
    const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
    const T beta = pc == pr.k_lo ? pr.beta : T(1);
    T* b_cur = nt > 1 && q % 2 == 1 ? b_buf + skinny_b_elems(pr, uk, bs) : b_buf;
    index_t lo, hi;
    share(b_panels, tid, nt, lo, hi);
    pack_b(pr.b, pc, kc, 0, pr.n, nr, b_cur, lo, hi, uk.pack_b_lines);
    if (nt > 1) {
#pragma omp barrier
    }
    share(a_panels, tid, nt, lo, hi);
    for (index_t ir = lo; ir < hi; ++ir) {
      const index_t row = ir * mr;
      const index_t rows = std::min<index_t>(mr, pr.m - row);
      index_t a_step;
      const T* a_strip = strip_of_a(pr, uk, row, rows, pc, kc, edge_a, strips, a_step);
      for (index_t jr = 0; jr < b_panels; ++jr) {
        const index_t cols = std::min<index_t>(nr, pr.n - jr * nr);
        const T* b_micro = b_cur + jr * nr * kc;
        T* c = pr.c + row + jr * nr * pr.ldc;
        micro_tile(uk, kc, pr.alpha, a_strip, a_step, b_micro, beta, c, pr.ldc, rows, cols);
      }
    }
  }
}

// The no-pack path for small skinny products (at most 8 row strips): A and op(B) are
// both read in place, so nothing is copied and threads (each its own row strips) never
// wait for each other; B's kc x n block is re-read from L1/L2 by every strip, which
// pays only while the strips are few (64^3 SGEMM spent 10% of its time packing B).
// Ragged rows go through a small packed A panel and a scratch tile.
template <class T>
void unpacked_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs, Strips strips,
                   int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t b_panels = ceil_div(pr.n, nr);
  const index_t b_rs = pr.b.trans ? pr.b.ld : 1, b_cs = pr.b.trans ? 1 : pr.b.ld;
  T* edge_a = edge_panel<T>(mr, bs.kc);
  index_t lo, hi;
  share(ceil_div(pr.m, mr), tid, nt, lo, hi);
  for (index_t pc = pr.k_lo; pc < pr.k; pc += bs.kc) {
    const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
    const T beta = pc == pr.k_lo ? pr.beta : T(1);
    for (index_t ir = lo; ir < hi; ++ir) {
      const index_t row = ir * mr;
      const index_t rows = std::min<index_t>(mr, pr.m - row);
      index_t a_step;
      const T* a_strip = strip_of_a(pr, uk, row, rows, pc, kc, edge_a, strips, a_step);
      for (index_t jr = 0; jr < b_panels; ++jr) {
        const index_t col = jr * nr;
        const index_t cols = std::min<index_t>(nr, pr.n - col);
        unpacked_tile(uk, kc, pr.alpha, a_strip, a_step, pr.b.data + pc * b_rs + col * b_cs, b_rs, b_cs, beta,
                      pr.c + row + col * pr.ldc, pr.ldc, rows, cols);
      }
    }
  }
}

// Sets of `g` that lines `stride_bytes` apart fall into (all of them unless the stride
// is a whole number of lines).
index_t sets_touched(const CacheGeometry& g, index_t stride_bytes) {
  const index_t sets = static_cast<index_t>(g.bytes) / (static_cast<index_t>(g.line) * std::max(1, g.ways));
  if (sets <= 0 || stride_bytes % g.line != 0) return std::max<index_t>(sets, 1);
  return sets / std::gcd<index_t>(sets, stride_bytes / g.line);
}

// Whether the skinny path runs, and how it reads A's strips: B's kc block is small
// enough to stay in L2, there are at least two full row strips, and A is either read
// in place (column-major, strips that stay in L1) or, when a strip would not stay in
// L1 or A is transposed, packed strip by strip into L1 (C too narrow for the
// B-resident order: fewer than 8 B micro-panels).
// (TAIHU_GEMM_SKINNY=0 turns the path off, for comparisons.)
template <class T>
Strips use_skinny(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs) {
  static const bool enabled = switched_on("TAIHU_GEMM_SKINNY");
  if (!enabled) return Strips::none;
  static const CacheGeometry l1 = cache_geometry(1), l2 = cache_geometry(2);
  // B's kc block may take three quarters of this core's L2 (the A strip and C share it).
  const double panel_bytes =
      double(bs.kc) * double(ceil_div(pr.n, uk.nr) * uk.nr) * double(sizeof(T));
  if (pr.packed_a || pr.packed_b || panel_bytes > 0.75 * double(l2.bytes) || pr.m < 2 * uk.mr)
    return Strips::none;
  const bool narrow = ceil_div(pr.n, uk.nr) < 8;
  if (pr.a.trans) return narrow ? Strips::packed : Strips::none;
  // The A strip (min(kc, k) steps at a stride of lda) must stay in L1 while it meets
  // every micro-panel of B: a stride that is a multiple of several cache lines maps the
  // strip to few L1 sets (lda = 128 floats: 8 of 64 sets), where it thrashes and comes
  // back from L2 for every micro-panel (128^3 SGEMM ran at 70 instead of 86 GFLOP/s).
  // It may take half the ways of the sets it touches.
  const index_t stride_bytes = pr.a.ld * static_cast<index_t>(sizeof(T));
  const index_t strip = std::min<index_t>(bs.kc, pr.k - pr.k_lo);
  const bool strip_fits_l1 = sets_touched(l1, stride_bytes) * (l1.ways / 2) >= strip;
  if (strip_fits_l1) return Strips::in_place;
  // With at most 64 columns packing A costs more than an L1-thrashing strip that L2
  // still holds (3136x64x576: 77 vs 61 GFLOP/s), unless the stride crowds the strip
  // into a few L2 sets too (lda = 4096 floats: 24 vs 40).
  const bool strip_fits_l2 = sets_touched(l2, stride_bytes) * (l2.ways / 2) >= strip;
  return pr.n <= 64 && strip_fits_l2 ? Strips::in_place : Strips::none;
}

// kc for a product of depth k: from k >= 4 kc on, the depth is cut into an even number
// of equal blocks (2304 = 10 x 232 rather than 9 x 256), so that the depth split falls
// on a block boundary and halves the work.
index_t depth_block(index_t kc, index_t k) {
  if (k < 4 * kc) return kc;
  index_t blocks = ceil_div(k, kc);
  blocks += blocks % 2;
  return ceil_div(ceil_div(k, blocks), 8) * 8;
}

// The no-pack path runs skinny products of at most 8 row strips, where the ISA has the
// unpacked-B kernels.
template <class T>
bool use_unpacked(const Problem<T>& pr, const kernels::MicroKernel<T>& uk) {
  return unpacked_enabled() && uk.unpacked_b[uk.nr] != nullptr && pr.m <= 8 * static_cast<index_t>(uk.mr);
}

template <class T>
BlockSizes effective_block_sizes(const Problem<T>& pr, const kernels::MicroKernel<T>& uk) {
  BlockSizes bs = block_sizes_for(uk.mr, uk.nr, static_cast<int>(sizeof(T)));
  bs.kc = depth_block(bs.kc, pr.k);
  if (pr.packed_a) bs.kc = pr.packed_a->kc;
  if (pr.packed_b) bs.kc = pr.packed_b->kc;
  return bs;
}

}  // namespace

int threads_for_gemm(index_t m, index_t n, index_t k) {
  // Read at the first call whatever path it takes, so a bad value is reported at once.
  static const Split forced = forced_split();
  static const char order = forced_order();
  (void)forced;
  (void)order;
  const int available = arch::threads_for_call();
  // Below ~64^3 multiply-adds a parallel region costs more than it saves.
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (available <= 1 || work < 64.0 * 64.0 * 64.0) return 1;
  const double per_thread = 32.0 * 32.0 * 64.0;
  return static_cast<int>(std::max(1.0, std::min<double>(available, work / per_thread)));
}

template <class T>
void scale_c(index_t m, index_t n, T beta, T* c, index_t ldc) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < n; ++j) {
    T* col = c + j * ldc;
    if (beta == T(0))
      std::fill(col, col + m, T(0));
    else
      for (index_t i = 0; i < m; ++i) col[i] *= beta;
  }
}

namespace {

// The skinny or the A-resident path over the problem's depth range.
template <class T>
void run_undivided(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs, int threads) {
  thread_local Workspace<T> ws;
  const Strips strips = pr.part == Part::all ? use_skinny(pr, uk, bs) : Strips::none;
  if (strips != Strips::none && use_unpacked(pr, uk)) {
    if (threads <= 1) {
      unpacked_body(pr, uk, bs, strips, 0, 1);
      return;
    }
#pragma omp parallel num_threads(threads)
    unpacked_body(pr, uk, bs, strips, omp_get_thread_num(), omp_get_num_threads());
    return;
  }
  if (strips != Strips::none) {
    const int buffers = threads > 1 && pr.k - pr.k_lo > bs.kc ? 2 : 1;
    ws.reserve(0, static_cast<std::size_t>(buffers * skinny_b_elems(pr, uk, bs)));
    T* b_buf = ws.b_panel.data();
    if (threads <= 1) {
      skinny_body(pr, uk, bs, strips, b_buf, 0, 1);
      return;
    }
#pragma omp parallel num_threads(threads)
    skinny_body(pr, uk, bs, strips, b_buf, omp_get_thread_num(), omp_get_num_threads());
    return;
  }
  if (pr.part != Part::all || use_b_resident(pr, uk, threads)) {
    // The same kc as the A-resident order (and the pre-packed operands): the sums then
    // run in one order whichever loops compute them, so packed and unpacked calls stay
    // bitwise equal. On 2048^3 SGEMM kc = 192 and 512 ran within 1% of each other.
    const BlockSizes model = b_resident_block_sizes_for(uk.mr, uk.nr, static_cast<int>(sizeof(T)));
    BlockSizes b_bs = bs;
    b_bs.mc = std::max<index_t>(uk.mr, model.mc * model.kc / bs.kc / uk.mr * uk.mr);
    b_bs.nc = std::max<index_t>(uk.nr, model.nc * model.kc / bs.kc / uk.nr * uk.nr);
    run_b_resident(pr, uk, b_bs, pr.part != Part::all ? 1 : threads, ws);
    return;
  }
  run_a_resident(pr, uk, bs, threads, ws);
}

// Deep products with a small C (k >= 4 kc, m x n <= 256 x 256: 128x128x4096,
// 256x196x2304) are summed in two halves of the depth, whatever the thread count:
// the lower half accumulates into C, the upper half into a scratch C that is then
// added. Two threads then share no packed block and meet at one barrier, where
// splitting rows or columns of so small a C leaves tiles unbalanced or costs a barrier
// per block; one thread sums in the same order, so results stay bitwise equal across
// thread counts. The cut falls on a kc block boundary (depth_block makes their number
// even), where pre-packed operands are cut too, so packed and unpacked calls agree.
// More than two threads gain little on so small a product: the split runs on two.
template <class T>
bool splits_depth(const Problem<T>& pr, const BlockSizes& bs) {
  if (pr.k <= bs.kc || pr.part != Part::all) return false;
  const Split forced = forced_split();
  if (forced != Split::model) return forced == Split::depth;
  return pr.k >= 4 * bs.kc && pr.m * pr.n <= 256 * 256;
}

// C += D over this thread's share of C's columns (D is m x n, column major).
template <class T>
void add_partial(const Problem<T>& pr, const T* d, int tid, int nt) {
  index_t lo, hi;
  share(pr.n, tid, nt, lo, hi);
  for (index_t j = lo; j < hi; ++j) {
    T* col = pr.c + j * pr.ldc;
    const T* part = d + j * pr.m;
    for (index_t i = 0; i < pr.m; ++i) col[i] += part[i];
  }
}

template <class T>
void run_depth_split(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                     int threads) {
  thread_local arch::AlignedBuffer<T> partial;
  const auto c_elems = static_cast<std::size_t>(pr.m * pr.n);
  if (partial.size() < c_elems) partial = arch::AlignedBuffer<T>(c_elems, 4096);
  const index_t k_mid = ceil_div(pr.k, bs.kc) / 2 * bs.kc;
  Problem<T> lower = pr, upper = pr;
  lower.k = k_mid;
  upper.k_lo = k_mid;
  upper.c = partial.data();
  upper.ldc = pr.m;
  upper.beta = T(0);
  if (threads <= 1) {
    run_undivided(lower, uk, bs, 1);
    run_undivided(upper, uk, bs, 1);
    add_partial(pr, upper.c, 0, 1);
    return;
  }
#pragma omp parallel num_threads(2)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    if (tid == 0) run_undivided(lower, uk, bs, 1);
    if (tid == 1 || nt == 1) run_undivided(upper, uk, bs, 1);
    if (nt > 1) {
#pragma omp barrier
    }
    add_partial(pr, upper.c, tid, nt);
  }
}

}  // namespace

template <class T>
void run_driver(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, int threads) {
  const BlockSizes bs = effective_block_sizes(pr, uk);
  if (splits_depth(pr, bs))
    run_depth_split(pr, uk, bs, threads);
  else
    run_undivided(pr, uk, bs, threads);
}

template <class T>
void prepack(const MatrixView<T>& x, index_t extent, index_t depth, bool as_b, const kernels::MicroKernel<T>& uk,
             PrepackedPanels<T>& p) {
  BlockSizes bs = block_sizes_for(uk.mr, uk.nr, static_cast<int>(sizeof(T)));
  bs.kc = depth_block(bs.kc, depth);
  const int width = as_b ? uk.nr : uk.mr;
  if (p.width != width || p.extent != extent || p.depth != depth || p.kc != bs.kc) p.blocks.clear();
  p.width = width;
  p.extent = extent;
  p.depth = depth;
  p.kc = bs.kc;
  const index_t panels = ceil_div(extent, p.width);
  std::size_t i = 0;
  for (index_t pc = 0; pc < depth; pc += bs.kc, ++i) {
    const index_t kc = std::min<index_t>(bs.kc, depth - pc);
    if (i == p.blocks.size()) p.blocks.emplace_back(static_cast<std::size_t>(panels * p.width * kc), 4096);
    T* block = p.blocks[i].data();
    if (as_b)
      pack_b(x, pc, kc, 0, extent, p.width, block, 0, panels, uk.pack_b_lines);
    else
      pack_a(x, 0, extent, pc, kc, p.width, block, 0, panels, uk.pack_a_transposed);
  }
}

template void scale_c<float>(index_t, index_t, float, float*, index_t);
template void scale_c<double>(index_t, index_t, double, double*, index_t);
template void run_driver<float>(const Problem<float>&, const kernels::MicroKernel<float>&, int);
template void run_driver<double>(const Problem<double>&, const kernels::MicroKernel<double>&, int);
template void prepack<float>(const MatrixView<float>&, index_t, index_t, bool, const kernels::MicroKernel<float>&,
                             PrepackedPanels<float>&);
template void prepack<double>(const MatrixView<double>&, index_t, index_t, bool, const kernels::MicroKernel<double>&,
                              PrepackedPanels<double>&);

}  // namespace taihu::gemm
