// Five loops (jc, pc, ic, jr, ir) around the micro-kernel. Two ways to share them
// among threads:
//  - rows (BLIS's parallel ic loop; the default when every thread gets a row panel):
//    each thread owns a contiguous range of C's rows and packs its own A
//    blocks into a private buffer that stays in its own L2; the threads share the
//    packed B panel. One barrier per kc block of B (two when a second B buffer would
//    exceed 4 MiB), none after the last, none per A block.
//  - tiles (few rows): the threads share the packed B panel and the packed A block:
//    each packs a share of the panels, a barrier, then each runs a contiguous range of
//    micro-tiles (column panels first, so a thread keeps its B micro-panels in L1
//    while the A block stays in L2), a barrier.
// Every C element is computed in the same order whatever the thread count, so the
// result is bitwise identical with 1 or N threads.
#include "driver.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string>

#include "block_sizes.hpp"
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

// One rows x cols tile of C: a full tile goes straight to the kernel; an edge tile runs
// the kernel into a scratch tile, then merges the valid part into C.
template <class T>
void micro_tile(const kernels::MicroKernel<T>& uk, index_t kc, T alpha, const T* ap, index_t a_step,
                const T* bp, T beta, T* c, index_t ldc, index_t rows, index_t cols) {
  if (rows == uk.mr && cols == uk.nr) {
    uk.fn(kc, alpha, ap, a_step, bp, beta, c, ldc);
    return;
  }
  alignas(64) T tile[32 * 16];
  uk.fn(kc, alpha, ap, a_step, bp, T(0), tile, uk.mr);
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      T& cij = c[i + j * ldc];
      cij = beta == T(0) ? tile[i + j * uk.mr] : tile[i + j * uk.mr] + beta * cij;
    }
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
const T* b_block(const Problem<T>& pr, index_t q, index_t pc, index_t kc, index_t jc, index_t nc, int nr,
                 T* b_buf, int tid, int nt) {
  if (pr.packed_b) return pr.packed_b->blocks[q].data() + (jc / nr) * nr * kc;
  index_t lo, hi;
  share(ceil_div(nc, nr), tid, nt, lo, hi);
  pack_b(pr.b, pc, kc, jc, nc, nr, b_buf, lo, hi);
  return b_buf;
}

// A's mc x kc block the same way: pre-packed, or micro-panels [lo, hi) packed into a_buf.
template <class T>
const T* a_block(const Problem<T>& pr, index_t q, index_t ic, index_t mc, index_t pc, index_t kc, int mr,
                 T* a_buf, index_t lo, index_t hi) {
  if (pr.packed_a) return pr.packed_a->blocks[q].data() + (ic / mr) * mr * kc;
  pack_a(pr.a, ic, mc, pc, kc, mr, a_buf, lo, hi);
  return a_buf;
}

// Micro-tiles [t0, t1) of the mc x nc block of C at (ic, jc), numbered column panel
// first (t = jr * a_panels + ir), so consecutive tiles share B's micro-panel in L1.
template <class T>
void run_tiles(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, index_t kc, T beta, const T* ap,
               const T* bp, index_t ic, index_t mc, index_t jc, index_t nc, index_t t0, index_t t1) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t a_panels = ceil_div(mc, mr);
  for (index_t t = t0; t < t1; ++t) {
    const index_t jr = t / a_panels, ir = t % a_panels;
    const index_t rows = std::min<index_t>(mr, mc - ir * mr);
    const index_t cols = std::min<index_t>(nr, nc - jr * nr);
    T* c = pr.c + (ic + ir * mr) + (jc + jr * nr) * pr.ldc;
    micro_tile(uk, kc, pr.alpha, ap + ir * mr * kc, mr, bp + jr * nr * kc, beta, c, pr.ldc, rows, cols);
  }
}

template <class T>
void driver_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                 T* a_buf, T* b_buf, int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  for (index_t jc = 0; jc < pr.n; jc += bs.nc) {
    const index_t nc = std::min<index_t>(bs.nc, pr.n - jc);
    const index_t b_panels = ceil_div(nc, nr);
    index_t q = 0;  // kc block index
    for (index_t pc = 0; pc < pr.k; pc += bs.kc, ++q) {
      const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
      const T beta = pc == 0 ? pr.beta : T(1);
      const T* bp = b_block(pr, q, pc, kc, jc, nc, nr, b_buf, tid, nt);
      const index_t mc_step = balanced(pr.m, bs.mc, mr);
      for (index_t ic = 0; ic < pr.m; ic += mc_step) {
        const index_t mc = std::min<index_t>(mc_step, pr.m - ic);
        const index_t a_panels = ceil_div(mc, mr);
        index_t lo, hi;
        share(a_panels, tid, nt, lo, hi);
        const T* ap = a_block(pr, q, ic, mc, pc, kc, mr, a_buf, lo, hi);
        // Barriers only inside taihu's own team: with nt == 1 this may run inside a
        // caller's parallel region, where a barrier would bind to the caller's team.
        if (nt > 1) {
#pragma omp barrier
        }
        index_t t0, t1;
        share(b_panels * a_panels, tid, nt, t0, t1);
        run_tiles(pr, uk, kc, beta, ap, bp, ic, mc, jc, nc, t0, t1);
        // The last block needs no barrier: the parallel region's end is one.
        const bool last = jc + nc >= pr.n && pc + kc >= pr.k && ic + mc >= pr.m;
        if (nt > 1 && !last) {
#pragma omp barrier
        }
      }
    }
  }
}

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
template <class T>
void a_resident_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                     T* const a_bufs[2], T* b_buf, index_t row_lo, index_t row_hi, index_t col_lo,
                     index_t col_hi, bool shared_a, int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t nc_step = balanced(col_hi - col_lo, bs.nc, nr);
  const index_t mc_step = balanced(row_hi - row_lo, bs.mc, mr);
  index_t a_blocks = 0;  // A blocks so far: picks the buffer
  for (index_t ic = row_lo; ic < row_hi; ic += mc_step) {
    const index_t mc = std::min<index_t>(mc_step, row_hi - ic);
    const index_t a_panels = ceil_div(mc, mr);
    index_t q = 0;  // kc block index
    for (index_t pc = 0; pc < pr.k; pc += bs.kc, ++q, ++a_blocks) {
      const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
      const T beta = pc == 0 ? pr.beta : T(1);
      index_t lo = 0, hi = a_panels;
      if (shared_a) share(a_panels, tid, nt, lo, hi);
      const T* ap = a_block(pr, q, ic, mc, pc, kc, mr, a_bufs[a_blocks % 2], lo, hi);
      // Barriers only inside taihu's own team: with nt == 1 this may run inside a
      // caller's parallel region, where a barrier would bind to the caller's team.
      if (shared_a && nt > 1 && !pr.packed_a) {
#pragma omp barrier
      }
      for (index_t jc = col_lo; jc < col_hi; jc += nc_step) {
        const index_t nc = std::min<index_t>(nc_step, col_hi - jc);
        const index_t b_panels = ceil_div(nc, nr);
        const T* bp = b_block(pr, q, pc, kc, jc, nc, nr, b_buf, 0, 1);
        for (index_t ir = 0; ir < a_panels; ++ir) {
          const index_t rows = std::min<index_t>(mr, mc - ir * mr);
          const T* a_micro = ap + ir * mr * kc;
          T* c_row = pr.c + ic + ir * mr;
          for (index_t jr = 0; jr < b_panels; ++jr) {
            const index_t cols = std::min<index_t>(nr, nc - jr * nr);
            micro_tile(uk, kc, pr.alpha, a_micro, mr, bp + jr * nr * kc, beta,
                       c_row + (jc + jr * nr) * pr.ldc, pr.ldc, rows, cols);
          }
        }
      }
    }
  }
}

// Threads split rows when a column split would leave each fewer than 8 B micro-panels
// (A's micro-panel would then meet too few of them to pay for its trip into L1) and
// there are more rows than columns to go round.
template <class T>
bool a_resident_splits_rows(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, int nt) {
  const index_t n_panels = ceil_div(pr.n, uk.nr), m_panels = ceil_div(pr.m, uk.mr);
  if (n_panels < nt) return true;
  return n_panels < 8 * static_cast<index_t>(nt) && m_panels > n_panels;
}

template <class T>
void run_a_resident(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                    int threads) {
  // Workspaces sized to the problem, not to the largest block the model allows.
  const index_t mc_max = std::min<index_t>(bs.mc, ceil_div(pr.m, uk.mr) * uk.mr);
  const index_t nc_max = std::min<index_t>(bs.nc, ceil_div(pr.n, uk.nr) * uk.nr);
  const std::size_t a_elems = static_cast<std::size_t>(mc_max * bs.kc);
  const std::size_t b_elems = static_cast<std::size_t>(nc_max * bs.kc);
  thread_local Workspace<T> ws;
  const bool split_rows = threads > 1 && a_resident_splits_rows(pr, uk, threads);
  const bool two_a = threads > 1 && !split_rows && (pr.m > bs.mc || pr.k > bs.kc);
  ws.reserve(pr.packed_a ? 0 : (two_a ? 2 : 1) * a_elems, pr.packed_b ? 0 : b_elems);
  if (threads <= 1) {
    T* const a_bufs[2] = {ws.a_block.data(), ws.a_block.data()};
    a_resident_body(pr, uk, bs, a_bufs, ws.b_panel.data(), 0, pr.m, 0, pr.n, false, 0, 1);
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
      a_resident_body(pr, uk, bs, a_bufs, mine.b_panel.data(), lo * uk.mr,
                      std::min<index_t>(pr.m, hi * uk.mr), 0, pr.n, false, tid, nt);
    } else {
      index_t lo, hi;
      share(ceil_div(pr.n, uk.nr), tid, nt, lo, hi);
      a_resident_body(pr, uk, bs, shared_a, mine.b_panel.data(), 0, pr.m, lo * uk.nr,
                      std::min<index_t>(pr.n, hi * uk.nr), nt > 1, tid, nt);
    }
  }
}

// Row-split threading (see the file comment). `a_buf` is this thread's own block.
// With `b_next` (a second B buffer) consecutive blocks of B (every kc block of every
// nc panel, counted across panels) alternate between the two, so only the barrier
// after packing is needed: a thread packing block s+1 overwrites block s-1, which
// every thread finished before the barrier of block s.
template <class T>
void rows_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
               T* a_buf, T* b_buf, T* b_next, int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  index_t panel_lo, panel_hi;
  share(ceil_div(pr.m, mr), tid, nt, panel_lo, panel_hi);
  const index_t row_lo = panel_lo * mr, row_hi = std::min<index_t>(pr.m, panel_hi * mr);
  index_t packed_blocks = 0;  // B blocks so far, all panels: picks the buffer
  for (index_t jc = 0; jc < pr.n; jc += bs.nc) {
    const index_t nc = std::min<index_t>(bs.nc, pr.n - jc);
    const index_t b_panels = ceil_div(nc, nr);
    index_t q = 0;
    for (index_t pc = 0; pc < pr.k; pc += bs.kc, ++q, ++packed_blocks) {
      const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
      const T beta = pc == 0 ? pr.beta : T(1);
      T* b_cur = b_next != nullptr && packed_blocks % 2 == 1 ? b_next : b_buf;
      const T* bp = b_block(pr, q, pc, kc, jc, nc, nr, b_cur, tid, nt);
      if (!pr.packed_b) {
#pragma omp barrier
      }
      const index_t mc_step = balanced(row_hi - row_lo, bs.mc, mr);
      for (index_t ic = row_lo; ic < row_hi; ic += mc_step) {
        const index_t mc = std::min<index_t>(mc_step, row_hi - ic);
        const index_t a_panels = ceil_div(mc, mr);
        const T* ap = a_block(pr, q, ic, mc, pc, kc, mr, a_buf, 0, a_panels);
        run_tiles(pr, uk, kc, beta, ap, bp, ic, mc, jc, nc, 0, b_panels * a_panels);
      }
      // The last block needs no barrier: the parallel region's end is one.
      if (!pr.packed_b && b_next == nullptr && !(jc + nc >= pr.n && pc + kc >= pr.k)) {
#pragma omp barrier
      }
    }
  }
}

// Row split whenever every thread gets a row panel: measured faster on every shape
// tried, 96^3 to 2048^3 and the skinny ones (e.g. 128^3 at 2 threads: 104-112 vs 83-89
// GFLOP/s). TAIHU_GEMM_THREADING=tiles|rows forces one, for comparisons.
template <class T>
bool use_rows(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, int nt) {
  static const int forced = [] {
    const char* env = std::getenv("TAIHU_GEMM_THREADING");
    if (env == nullptr || *env == '\0') return 0;
    const std::string v(env);
    if (v == "tiles") return 1;
    if (v == "rows") return 2;
    throw Error("TAIHU_GEMM_THREADING='" + v + "': use tiles or rows");
  }();
  if (forced != 0) return forced == 2;
  return ceil_div(pr.m, uk.mr) >= static_cast<index_t>(nt);
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
void skinny_body(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs,
                 T* b_buf, int tid, int nt) {
  const int mr = uk.mr, nr = uk.nr;
  const index_t b_panels = ceil_div(pr.n, nr);
  const index_t a_panels = ceil_div(pr.m, mr);
  thread_local arch::AlignedBuffer<T> edge_buf;  // one packed MR x kc panel, ragged rows
  if (edge_buf.size() < static_cast<std::size_t>(mr * bs.kc))
    edge_buf = arch::AlignedBuffer<T>(static_cast<std::size_t>(mr * bs.kc));
  T* edge_a = edge_buf.data();
  index_t q = 0;  // kc block index
  for (index_t pc = 0; pc < pr.k; pc += bs.kc, ++q) {
    const index_t kc = std::min<index_t>(bs.kc, pr.k - pc);
    const T beta = pc == 0 ? pr.beta : T(1);
    T* b_cur = nt > 1 && q % 2 == 1 ? b_buf + skinny_b_elems(pr, uk, bs) : b_buf;
    index_t lo, hi;
    share(b_panels, tid, nt, lo, hi);
    pack_b(pr.b, pc, kc, 0, pr.n, nr, b_cur, lo, hi);
    if (nt > 1) {
#pragma omp barrier
    }
    share(a_panels, tid, nt, lo, hi);
    for (index_t ir = lo; ir < hi; ++ir) {
      const index_t row = ir * mr;
      const index_t rows = std::min<index_t>(mr, pr.m - row);
      const T* a_strip = pr.a.data + row + pc * pr.a.ld;
      index_t a_step = pr.a.ld;
      if (rows < mr) {
        pack_a(pr.a, row, rows, pc, kc, mr, edge_a, 0, 1);
        a_strip = edge_a;
        a_step = mr;
      }
      for (index_t jr = 0; jr < b_panels; ++jr) {
        const index_t cols = std::min<index_t>(nr, pr.n - jr * nr);
        const T* b_micro = b_cur + jr * nr * kc;
        T* c = pr.c + row + jr * nr * pr.ldc;
        micro_tile(uk, kc, pr.alpha, a_strip, a_step, b_micro, beta, c, pr.ldc, rows, cols);
      }
    }
  }
}

// True when the skinny path should run: A is read in place (column-major, not
// transposed, not pre-packed), B's kc block is small enough to stay in L2, and there
// are at least two full row strips.
// (TAIHU_GEMM_SKINNY=0 turns the path off, for comparisons.)
template <class T>
bool use_skinny(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, const BlockSizes& bs) {
  static const bool enabled = [] {
    const char* env = std::getenv("TAIHU_GEMM_SKINNY");
    return env == nullptr || std::string(env) != "0";
  }();
  if (!enabled) return false;
  // B's kc block may take three quarters of this core's L2 (the A strip and C share it).
  static const double kMaxPanelBytes = [] {
    const auto* l2 = arch::topology().cache(2);
    return 0.75 * double(l2 != nullptr && l2->size_bytes > 0 ? l2->size_bytes : 512 * 1024);
  }();  // well inside a 256 KiB+ L2
  const double panel_bytes =
      double(bs.kc) * double(ceil_div(pr.n, uk.nr) * uk.nr) * double(sizeof(T));
  // A strip (kc columns, stride lda) is re-read from L2 by every micro-panel of B. A
  // stride that is a multiple of many cache lines maps all its lines to few L2 sets
  // (4096 floats: 4 sets of a 1024-set L2), which thrashes; pack in that case.
  const index_t stride_bytes = pr.a.ld * static_cast<index_t>(sizeof(T));
  index_t sets_touched = 1024;
  if (stride_bytes % 64 == 0) sets_touched = 1024 / std::gcd<index_t>(1024, stride_bytes / 64);
  const bool strip_fits_l2 = sets_touched * 8 >= 4 * bs.kc;
  return !pr.packed_a && !pr.packed_b && !pr.a.trans && panel_bytes <= kMaxPanelBytes &&
         strip_fits_l2 && pr.m >= 2 * uk.mr;
}

template <class T>
BlockSizes effective_block_sizes(const Problem<T>& pr, const kernels::MicroKernel<T>& uk) {
  BlockSizes bs = block_sizes_for(uk.mr, uk.nr, static_cast<int>(sizeof(T)));
  if (pr.packed_a) bs.kc = pr.packed_a->kc;
  if (pr.packed_b) bs.kc = pr.packed_b->kc;
  return bs;
}

}  // namespace

int threads_for_gemm(index_t m, index_t n, index_t k) {
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

template <class T>
void run_driver(const Problem<T>& pr, const kernels::MicroKernel<T>& uk, int threads) {
  BlockSizes bs = effective_block_sizes(pr, uk);
  thread_local Workspace<T> ws;
  if (use_skinny(pr, uk, bs)) {
    const int buffers = threads > 1 && pr.k > bs.kc ? 2 : 1;
    ws.reserve(0, static_cast<std::size_t>(buffers * skinny_b_elems(pr, uk, bs)));
    T* b_buf = ws.b_panel.data();
    if (threads <= 1) {
      skinny_body(pr, uk, bs, b_buf, 0, 1);
      return;
    }
#pragma omp parallel num_threads(threads)
    skinny_body(pr, uk, bs, b_buf, omp_get_thread_num(), omp_get_num_threads());
    return;
  }
  const char* order = std::getenv("TAIHU_GEMM_ORDER");
  if (order == nullptr || std::string(order) != "b") {
    run_a_resident(pr, uk, bs, threads);
    return;
  }
  bs = block_sizes_b_resident(uk.mr, uk.nr, static_cast<int>(sizeof(T)));
  if (pr.packed_a) bs.kc = pr.packed_a->kc;
  if (pr.packed_b) bs.kc = pr.packed_b->kc;
  ws.reserve(static_cast<std::size_t>(bs.mc * bs.kc), static_cast<std::size_t>(bs.kc * bs.nc));
  T* a_buf = ws.a_block.data();
  T* b_buf = ws.b_panel.data();
  if (threads <= 1) {
    driver_body(pr, uk, bs, a_buf, b_buf, 0, 1);
    return;
  }
  if (use_rows(pr, uk, threads)) {
    // A second B buffer saves a barrier per kc block; worth its memory up to 4 MiB.
    const std::size_t b_elems = static_cast<std::size_t>(bs.kc * std::min<index_t>(bs.nc, ceil_div(pr.n, uk.nr) * uk.nr));
    T* b_next = nullptr;
    if (!pr.packed_b && pr.k > bs.kc && b_elems * sizeof(T) <= (4u << 20)) {
      ws.reserve(0, 2 * b_elems);
      b_buf = ws.b_panel.data();
      b_next = b_buf + b_elems;
    }
#pragma omp parallel num_threads(threads)
    {
      const int nt = omp_get_num_threads();
      if (nt == 1) {
        driver_body(pr, uk, bs, a_buf, b_buf, 0, 1);
      } else {
        // Each thread's own A block, in its own L2; the calling thread already has one.
        const int tid = omp_get_thread_num();
        thread_local Workspace<T> own;
        if (tid != 0) own.reserve(static_cast<std::size_t>(bs.mc * bs.kc), 0);
        rows_body(pr, uk, bs, tid == 0 ? a_buf : own.a_block.data(), b_buf, b_next, tid, nt);
      }
    }
    return;
  }
#pragma omp parallel num_threads(threads)
  driver_body(pr, uk, bs, a_buf, b_buf, omp_get_thread_num(), omp_get_num_threads());
}

template <class T>
PrepackedPanels<T> prepack(const MatrixView<T>& x, index_t extent, index_t depth, bool as_b,
                           const kernels::MicroKernel<T>& uk) {
  const BlockSizes bs = block_sizes_for(uk.mr, uk.nr, static_cast<int>(sizeof(T)));
  PrepackedPanels<T> p;
  p.width = as_b ? uk.nr : uk.mr;
  p.extent = extent;
  p.depth = depth;
  p.kc = bs.kc;
  const index_t panels = ceil_div(extent, p.width);
  for (index_t pc = 0; pc < depth; pc += bs.kc) {
    const index_t kc = std::min<index_t>(bs.kc, depth - pc);
    arch::AlignedBuffer<T> block(static_cast<std::size_t>(panels * p.width * kc), 4096);
    if (as_b)
      pack_b(x, pc, kc, 0, extent, p.width, block.data(), 0, panels);
    else
      pack_a(x, 0, extent, pc, kc, p.width, block.data(), 0, panels);
    p.blocks.push_back(std::move(block));
  }
  return p;
}

template void scale_c<float>(index_t, index_t, float, float*, index_t);
template void scale_c<double>(index_t, index_t, double, double*, index_t);
template void run_driver<float>(const Problem<float>&, const kernels::MicroKernel<float>&, int);
template void run_driver<double>(const Problem<double>&, const kernels::MicroKernel<double>&, int);
template PrepackedPanels<float> prepack<float>(const MatrixView<float>&, index_t, index_t, bool,
                                               const kernels::MicroKernel<float>&);
template PrepackedPanels<double> prepack<double>(const MatrixView<double>&, index_t, index_t, bool,
                                                 const kernels::MicroKernel<double>&);

}  // namespace taihu::gemm
