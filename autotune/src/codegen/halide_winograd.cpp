// Winograd F(m x m, 3 x 3) and F(2 x 2, 5 x 5) in Halide (see halide_winograd.hpp). Halide
// dimensions are listed innermost first. With alpha = m + r - 1, TH x TW tiles per image, tiles of an
// image flattened as t = th TW + tw, input channels c = CW cb + ci (CW = 8, or 16 on AVX-512 where 16 divides C; zero padded to Cp):
//   U(kk, c, kp, b, a) = sum_{r,s} G[a][r] W[kp kt + kk][c][r][s] G[b][s]   (weights pipeline,
//                    panels of the k tile kt)
//   Xcb(ci, x, y, cb, n) = X[n][CW cb + ci][y][x], zero outside the image
//   T1(ci, tw, th, cb, n, j, a) = sum_i BT[a][i] Xcb(ci, tw m + j + ox, th m + i + oy, cb, n)
//   V(ci, tw, th, cb, n, b, a)  = sum_j BT[b][j] T1(ci, tw, th, cb, n, j, a)
//   M(k, t, n, b, a)  = sum_c U(k % kt, c, k / kt, b, a) V(t, n, c, b, a)   (the tuned GEMMs)
//   O1(k, t, n, b, i) = sum_a AT[i][a] M(k, t, n, b, a)
//   Yt(k, j, i, t, n) = sum_b AT[j][b] O1(k, t, n, b, i)
//   Y[n][k][y][x]  = Yt(k, x % m, y % m, (y / m) TW + x / m, n)
// The transform indices (a, b, i, j) are unrolled loops, so each `mux` over them folds
// to one constant-coefficient sum; the input transform is vectorized over the CW
// channels of a block (dense loads). Task structures (WinogradSchedule in space.hpp):
// per stage; the input transform at root, then tasks of k_block output channels; or
// one parallel loop over blocks of `rows` tile rows (x images, x k_block output
// channels), where a block reorders its zero-padded input rows, transforms its tiles,
// runs the alpha^2 GEMMs on them (register tile of k_tile channels (8-lane vectors; 16-lane where 16 divides it on AVX-512) x
// t_tile tiles of the block flattened across its rows, accumulated over the channels)
// and transforms the result to its output rows per block of 8 output channels
// (vectorized over them), all in per-task scratch: one fork/join per call, and no
// intermediate crosses cores.
#include "codegen/halide_winograd.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>

#include "codegen/halide_jit_hooks.hpp"
#include "codegen/halide_lower.hpp"
#include "codegen/halide_prepacked.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune::halide {
namespace {

using namespace Halide;
using Matrix = std::vector<std::vector<double>>;

struct Transforms {
  int m = 0, r = 0, alpha = 0;
  Matrix bt, g, at;  // alpha x alpha, alpha x r, m x alpha (Lavin & Gray 2016)
};

// F(m x m, r x r) for a 3x3 window (m = 2 or 4) or a 5x5 one (m = 2: F(2x2,5x5) on
// F(4x4,3x3)'s points 0, 1, -1, 2, -2, inf, as dnn's winograd_2x2 runs 5x5 kernels:
// the same B^T, G = the points' Vandermonde rows scaled to match it, A^T its first two
// rows; 9 multiplies per output instead of 25).
Transforms transforms(int m, int r) {
  Transforms t;
  t.m = m;
  t.r = r;
  t.alpha = m + r - 1;
  const Matrix bt6 = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                      {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  if (r == 3 && m == 2) {
    t.bt = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
    t.g = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    t.at = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  } else if (r == 3 && m == 4) {
    t.bt = bt6;
    t.g = {{1.0 / 4, 0, 0},
           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
           {1.0 / 24, 1.0 / 12, 1.0 / 6},
           {1.0 / 24, -1.0 / 12, 1.0 / 6},
           {0, 0, 1}};
    t.at = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  } else if (r == 5 && m == 2) {
    t.bt = bt6;
    t.g = {{1.0 / 4, 0, 0, 0, 0},
           {-1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6},
           {-1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6},
           {1.0 / 24, 2.0 / 24, 4.0 / 24, 8.0 / 24, 16.0 / 24},
           {1.0 / 24, -2.0 / 24, 4.0 / 24, -8.0 / 24, 16.0 / 24},
           {0, 0, 0, 0, 1}};
    t.at = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 1}};
  } else {
    throw Error("winograd m=" + std::to_string(m) + " on a " + std::to_string(r) + "x" + std::to_string(r) +
                " window: only F(2x2,3x3), F(4x4,3x3) and F(2x2,5x5) are generated");
  }
  return t;
}

// sum_i coef[i] * term(i), zero coefficients left out.
template <class F>
Halide::Expr weighted_sum(const std::vector<double>& coef, F term) {
  Halide::Expr e;
  for (std::size_t i = 0; i < coef.size(); ++i) {
    if (coef[i] == 0) continue;
    Halide::Expr t = coef[i] == 1 ? term(static_cast<int>(i)) : static_cast<float>(coef[i]) * term(static_cast<int>(i));
    e = e.defined() ? e + t : t;
  }
  return e.defined() ? e : Halide::Expr(0.0f);
}

Halide::Expr select_by(const Var& v, const std::vector<Halide::Expr>& values) {
  return values.size() == 1 ? values[0] : mux(v, values);
}

class WinogradKernel final : public PrepackedConvKernel {
 public:
  // jit = false: the pipelines are only built (for compile_aot), not JIT-compiled.
  WinogradKernel(const Problem& p, const Schedule& s, int threads, bool jit = true) : PrepackedConvKernel("winograd", threads) {
    const std::string why = p.winograd_unsupported(s.algorithm);
    if (!why.empty()) throw Error(why);
    const ConvPattern& cv = p.winograd_conv(s.algorithm);
    const WinogradSchedule& ws = s.winograd;
    if (ws.k_tile % 8 != 0 || ws.k_tile < 8 || ws.t_tile < 1) throw Error("winograd: k tile must be a multiple of 8, t tile >= 1");
    const Transforms tr = transforms(ws.m, static_cast<int>(cv.r));
    const int m = tr.m, alpha = tr.alpha;
    static std::atomic<int> count{0};
    const std::string sfx = "_w" + std::to_string(count.fetch_add(1));
    for (std::size_t i = 0; i < p.inputs().size(); ++i) {
      if (p.inputs()[i] == cv.image) image_ = i;
      if (p.inputs()[i] == cv.weight) weight_ = i;
    }
    const int N = static_cast<int>(cv.n), C = static_cast<int>(cv.c), H = static_cast<int>(cv.h), W = static_cast<int>(cv.w);
    const int K = static_cast<int>(cv.k), OH = static_cast<int>(cv.oh), OW = static_cast<int>(cv.ow);
    const int Kp = static_cast<int>(round_up(K, ws.k_tile));
    // The GEMMs' vector width: 16-lane zmm accumulators on AVX-512 where 16 divides the
    // k tile (with 8 lanes the AVX-512 GEMM ran on ymm at half the FMA width).
    const int gl = winograd_gemm_lanes(ws.k_tile);
    const int TH = (OH + m - 1) / m, TW = (OW + m - 1) / m;
    // Channel blocks of the transforms: 16 (one zmm) on AVX-512 where 16 divides the
    // channels (and the output-channel task blocks), else 8 (one ymm; zero padded): with
    // 8 the AVX-512 transforms ran at half width, as dnn's 8-channel set does on AVX2.
    const bool zmm = vector_lanes() == 16;
    const int CW = zmm && C % 16 == 0 ? 16 : 8;
    const int KW = zmm && K % 16 == 0 && ws.k_block % 16 == 0 ? 16 : 8;
    const int CB = (C + CW - 1) / CW, Cp = CB * CW;  // input channels in blocks of CW (zero padded)
    x_sizes_ = {W, H, C, N};
    w_sizes_ = {static_cast<int>(cv.s), static_cast<int>(cv.r), C, K};
    y_sizes_ = {OW, OH, K, N};
    // U in panels of k_tile output channels: the panel a register tile reads (Cp x
    // k_tile floats) is contiguous, so it streams from L2 and, swept over all the tiles,
    // stays in L1; with k innermost over all of Kp its rows lay Kp floats apart (1 KiB at
    // K = 256) and fell into a few L1 sets.
    const int kt = ws.k_tile;
    packed_sizes_ = {kt, Cp, Kp / kt, alpha, alpha};
    if (jit) packed_ = Buffer<float>(packed_sizes_);

    Var k("k"), c("c"), a("a"), b("b"), i("i"), j("j"), t("t"), x("x"), y("y"), n("n");
    // Weights: U(kk, c, kp, b, a) in panels of the k tile, zero for the padding channels k >= K and c >= C.
    {
      w_in_ = ImageParam(Float(32), 4, "wino_w" + sfx);
      set_dense(w_in_, w_sizes_);
      Func wz = BoundaryConditions::constant_exterior(w_in_, 0.0f);
      Func u("wino_u" + sfx);
      std::vector<Halide::Expr> by_a;
      for (int ai = 0; ai < alpha; ++ai) {
        std::vector<Halide::Expr> by_b;
        for (int bi = 0; bi < alpha; ++bi)
          by_b.push_back(weighted_sum(tr.g[static_cast<std::size_t>(ai)], [&](int r) {
            return weighted_sum(tr.g[static_cast<std::size_t>(bi)], [&](int s2) { return wz(s2, r, c, k); });
          }));
        by_a.push_back(select_by(b, by_b));
      }
      Var kk("kk"), kp("kp"), ko("ko"), ki("ki");
      Func ukc("wino_ukc" + sfx);
      ukc(k, c, b, a) = select_by(a, by_a);
      u(kk, c, kp, b, a) = ukc(kp * kt + kk, c, b, a);
      u.split(kk, ko, ki, 8).reorder(ki, b, a, ko, c, kp).vectorize(ki).unroll(b).unroll(a);
      set_dense(u.output_buffer(), packed_sizes_);
      weights_ = Pipeline(u);
      if (jit) weights_.compile_jit(target_for_this_cpu());
    }
    // Main pipeline. rows = 0: per stage (three parallel loops: the input transform
    // over channels, the alpha^2 GEMMs, the output transform over channel blocks; each
    // GEMM sees all tiles, its U slice stays in L1). rows >= 1: one parallel loop over
    // blocks of `rows` tile rows (transforms and GEMMs per block, per-task scratch).
    x_in_ = ImageParam(Float(32), 4, "wino_x" + sfx);
    set_dense(x_in_, x_sizes_);
    packed_in_ = ImageParam(Float(32), 5, "wino_uin" + sfx);
    set_dense(packed_in_, packed_sizes_);
    // Input transform, the same in every structure: the input reordered into blocks of
    // 8 channels, zero padded (xcb(ci, x, y, cb, n) = X[n][CW cb + ci][y][x]), then
    // V(ci, tw, th, cb, n, b, a) = B^T d B of each tile vectorized over the CW channels of
    // a block: dense 32-byte loads (over tiles of a row, the loads were strided by m and
    // the transform cost about a fifth of the kernel).
    Func xp = BoundaryConditions::constant_exterior(x_in_, 0.0f);
    Func xcb("wino_xcb" + sfx);
    Var ci("ci"), cb("cb");
    xcb(ci, x, y, cb, n) = xp(x, y, cb * CW + ci, n);
    Var tw("tw"), th("th");
    Func t1("wino_t1" + sfx), v("wino_v" + sfx), macc("wino_macc" + sfx), mm("wino_m" + sfx);
    Func o1("wino_o1" + sfx), yt("wino_yt" + sfx);
    Func out("wino_y" + sfx);
    {
      std::vector<Halide::Expr> rows;
      for (int ai = 0; ai < alpha; ++ai)
        rows.push_back(weighted_sum(tr.bt[static_cast<std::size_t>(ai)], [&](int ii) {
          return xcb(ci, tw * m + j + static_cast<int>(cv.off_x), th * m + ii + static_cast<int>(cv.off_y), cb, n);
        }));
      t1(ci, tw, th, cb, n, j, a) = select_by(a, rows);
      std::vector<Halide::Expr> cols;
      for (int bi = 0; bi < alpha; ++bi)
        cols.push_back(weighted_sum(tr.bt[static_cast<std::size_t>(bi)], [&](int jj) { return t1(ci, tw, th, cb, n, jj, a); }));
      v(ci, tw, th, cb, n, b, a) = select_by(b, cols);
    }
    // The GEMMs' reduction over the channels, c = 8 rc.y + rc.x (affine in both, where
    // one channel index would need c % 8 and c / 8 in the inner loop).
    RDom rc(0, CW, 0, CB, "wino_rc" + sfx);
    // In blocks of c_block channels when set (whole channel blocks of CW: c_block / CW of them),
    // the register tile (k, `tile`) innermost.
    auto schedule_reduction = [&](Var tile) {
      Stage upd = macc.update();
      const int blocks_per_step = static_cast<int>(std::max<std::int64_t>(1, ws.c_block / CW));
      if (ws.c_block > 0 && blocks_per_step < CB) {
        RVar rco("rco"), rcm("rcm");
        upd.split(rc.y, rco, rcm, blocks_per_step).reorder(k, tile, rc.x, rcm, rco);
      } else {
        upd.reorder(k, tile, rc.x, rc.y);
      }
      upd.vectorize(k, gl).unroll(k).unroll(tile);
    };
    // The channel-block reorder computed at `at`.
    auto schedule_reorder = [&](const LoopLevel& at) {
      // Gathers of 8 channels (vectorizing x too, as 8 x 8 transposes, was 5% slower).
      xcb.compute_at(at).vectorize(ci);
    };
    // The input transform's schedule (its loops nest inside whatever computes v).
    auto schedule_input_transform = [&] {
      v.reorder(ci, b, a, tw, th, cb, n).vectorize(ci).unroll(b).unroll(a);
      if (vector_lanes() == 8) {
        // 16 ymm: the row pass for a whole row of tiles into a stack buffer (per tile and
        // column j: alpha loads -> alpha vectors of T1), then the column pass (per tile and
        // row a: alpha T1 loads -> alpha vectors of V). With T1 per tile (at tw) LLVM
        // promoted its alpha^2 vectors to registers and interleaved the passes: 136 ymm
        // spills per 6 x 6 tile, and ~10% slower on CIFAR-10 quick conv2 (Zen 3).
        t1.compute_at(v, th).reorder(ci, a, j, tw).vectorize(ci).unroll(a).unroll(j);
      } else {
        t1.compute_at(v, tw).vectorize(ci).unroll(j).unroll(a);
      }
    };
    if (ws.rows <= 0 && ws.k_block <= 0) {
      // The GEMMs see the tiles flattened: t = (n TH + th) TW + tw. Their t loop is
      // rounded up to the t tile: the extra tiles reread image N-1 (results unused)
      // rather than making V cover another image.
      Func vt("wino_vt" + sfx);
      vt(t, ci, cb, b, a) = v(ci, t % TW, (t / TW) % TH, cb, min(t / (TW * TH), N - 1), b, a);
      macc(k, t, b, a) = 0.0f;
      macc(k, t, b, a) += packed_in_(k % kt, rc.y * CW + rc.x, k / kt, b, a) * vt(t, rc.x, rc.y, b, a);
      mm(k, t, b, a) = macc(k, t, b, a);
      {
        std::vector<Halide::Expr> rows;
        for (int ii = 0; ii < m; ++ii)
          rows.push_back(weighted_sum(tr.at[static_cast<std::size_t>(ii)], [&](int ai) { return mm(k, t, b, ai); }));
        o1(k, t, b, i) = select_by(i, rows);
        std::vector<Halide::Expr> cols;
        for (int jj = 0; jj < m; ++jj)
          cols.push_back(weighted_sum(tr.at[static_cast<std::size_t>(jj)], [&](int bi) { return o1(k, t, bi, i); }));
        yt(k, j, i, t) = select_by(j, cols);
      }
      out(x, y, k, n) = yt(k, x % m, y % m, (n * TH + y / m) * TW + x / m);
      set_dense(out.output_buffer(), y_sizes_);

      // Schedule. Input transform: per block of 8 channels (parallel), on their 8 lanes.
      Var to("to"), ti("ti"), ko("ko"), ki("ki"), e("e"), kn("kn");
      Var cbn("cbn");
      v.compute_root();
      schedule_input_transform();
      v.fuse(cb, n, cbn).parallel(cbn);
      schedule_reorder(LoopLevel(v, cbn));  // the padded planes of 8 channels, per task
      // The GEMMs: register tile k_tile x t_tile, accumulated over the channels.
      mm.compute_root()
          .split(k, ko, ki, ws.k_tile, TailStrategy::RoundUp)  // U is padded to the k tile
          .split(t, to, ti, ws.t_tile, TailStrategy::RoundUp)
          .reorder(ki, ti, ko, to, b, a)
          .fuse(b, a, e)
          .parallel(e)
          .vectorize(ki, gl)
          .unroll(ki)
          .unroll(ti);
      macc.compute_at(mm, ko).vectorize(k, gl).unroll(k).unroll(t);
      schedule_reduction(t);
      // Output transform: vectorized over 8 output channels, computed per block of 8
      // channels of the output (one parallel loop for both; 6% faster on one core than
      // Yt at root with its own parallel loop).
      if (K >= 8) {
        out.split(k, ko, ki, KW).reorder(x, y, ki, ko, n).fuse(ko, n, kn).parallel(kn);
        yt.compute_at(out, kn).split(k, ko, ki, KW, TailStrategy::RoundUp).reorder(ki, j, i, ko, t).vectorize(ki).unroll(j).unroll(i);
      } else {
        yt.compute_root().split(k, ko, ki, KW, TailStrategy::RoundUp).reorder(ki, j, i, ko, t).vectorize(ki).unroll(j).unroll(i).parallel(t);
        out.fuse(k, n, kn).parallel(kn);
      }
      o1.compute_at(yt, ko).vectorize(k, KW, TailStrategy::RoundUp).unroll(b).unroll(i);
      if (OW >= 8) out.vectorize(x, 8);
    } else {
      // The GEMMs run over the block's tiles flattened, tt = th TW + tw, so a register
      // tile may span tile rows (as dnn's blocks of tiles do): any t tile keeps its
      // accumulators busy, where a tile within a row (TW = 7 at 28x28, F(4x4)) wasted up
      // to 5 of 12 columns by overlapping.
      Func vt("wino_vt" + sfx);
      vt(t, n, ci, cb, b, a) = v(ci, t % TW, t / TW, cb, n, b, a);
      macc(k, t, n, b, a) = 0.0f;
      macc(k, t, n, b, a) += packed_in_(k % kt, rc.y * CW + rc.x, k / kt, b, a) * vt(t, n, rc.x, rc.y, b, a);
      mm(k, t, n, b, a) = macc(k, t, n, b, a);
      {
        std::vector<Halide::Expr> rows;
        for (int ii = 0; ii < m; ++ii)
          rows.push_back(weighted_sum(tr.at[static_cast<std::size_t>(ii)], [&](int ai) { return mm(k, t, n, b, ai); }));
        o1(k, t, n, b, i) = select_by(i, rows);
        std::vector<Halide::Expr> cols;
        for (int jj = 0; jj < m; ++jj)
          cols.push_back(weighted_sum(tr.at[static_cast<std::size_t>(jj)], [&](int bi) { return o1(k, t, n, bi, i); }));
        yt(k, j, i, t, n) = select_by(j, cols);
      }
      out(x, y, k, n) = yt(k, x % m, y % m, (y / m) * TW + x / m, n);
      set_dense(out.output_buffer(), y_sizes_);
    }
    // The per-image structures (k_block >= 1, or rows >= 1) share two pieces:
    // The output loops split into tasks of k_block output channels: x, `rows_var` and the
    // task's blocks of KW channels (k8, each kv = 0..KW-1) inside, the k block kq and
    // `outer` fused into blk. k_block is a multiple of the k tile and at most K rounded up to it; a short
    // last block shifts inwards (recomputes channels; its k region stays inside U's
    // padding).
    Var blk("blk"), k8("k8"), kv("kv");
    auto split_output_channels = [&](const Var& rows_var, const Var& outer) {
      Var kq("kq"), kr("kr");
      const int k_block = ws.k_block;
      out.split(k, kq, kr, k_block, k_block <= K ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
      if (K >= 8) out.split(kr, k8, kv, KW, TailStrategy::ShiftInwards).reorder(x, rows_var, kv, k8, kq, outer);
      else out.reorder(x, rows_var, kr, kq, outer);
      out.fuse(kq, outer, blk);
    };
    // A task's GEMMs: register tile k_tile x t_tile over its tiles flattened, accumulated
    // over the channels (a short last t tile shifts inwards: the task has >= t_tile
    // tiles), and its output transform vectorized over 8 output channels per block of 8
    // channels of the output (the task's transformed tiles of 8 channels stay in L1 for
    // the scatter; all channels at once were 115-200 KB).
    auto schedule_task_gemms = [&](int t_tile) {
      Var to("to"), ti("ti"), ko("ko"), ki("ki");
      mm.compute_at(out, blk)
          .split(k, ko, ki, ws.k_tile, TailStrategy::RoundUp)  // U is padded to the k tile
          .split(t, to, ti, t_tile, TailStrategy::ShiftInwards)
          .reorder(ki, ti, ko, to, n, b, a)
          .vectorize(ki, gl)
          .unroll(ki)
          .unroll(ti);
      macc.compute_at(mm, ko).store_in(MemoryType::Register).vectorize(k, gl).unroll(k).unroll(t);
      schedule_reduction(t);
      yt.compute_at(out, K >= 8 ? k8 : blk).split(k, ko, ki, KW, TailStrategy::RoundUp).reorder(ki, j, i, ko, t, n).vectorize(ki).unroll(j).unroll(i);
      o1.compute_at(yt, ko).vectorize(k, KW, TailStrategy::RoundUp).unroll(b).unroll(i);
    };
    if (ws.rows <= 0 && ws.k_block > 0) {
      // Schedule: the input transform in its own parallel loop over channels (as per
      // stage), then one parallel task per block of k_block output channels of an image:
      // its alpha^2 GEMMs over all the image's tiles flattened (any t tile, no tile row
      // rounding) and its output transform. Every task does the same work (K = 64 on 2
      // threads: 32 channels each), where blocks of whole tile rows split an odd number
      // of rows unevenly (7 rows of F(4x4) at 28x28: 4 + 4 computed for 3.5 + 3.5).
      Var cbn("cbn");
      v.compute_root();
      schedule_input_transform();
      v.fuse(cb, n, cbn).parallel(cbn);
      schedule_reorder(LoopLevel(v, cbn));  // the padded planes of 8 channels, per task
      split_output_channels(y, n);
      out.parallel(blk);
      if (OW >= 8) out.vectorize(x, 8);
      schedule_task_gemms(std::max(1, std::min(ws.t_tile, TH * TW)));
    } else if (ws.rows > 0) {
      // Schedule: one parallel loop over blocks of `rows` tile rows (of every image), and
      // with k_block >= 1 of k_block output channels; a block transforms its input tiles
      // (all channels), runs the alpha^2 GEMMs on them and transforms the result to its
      // output rows, all in per-task scratch: one fork/join per call, and V and M never
      // cross cores (three parallel stages cost a wake-up and a join each, and with the
      // two cores slow to share data -- phases of seconds on this VM -- the per-stage
      // kernel ran slower on 2 threads than on 1; V at root, read by every channel
      // block's task, ran at 0.2 or 0.4 ms by the round). Channel blocks repeat the
      // input transform, but every task does the same work: 7 tile rows (F(4x4) at
      // 28x28) split into row blocks of 4 + 4 (3 recomputed), into channel halves evenly.
      const int rows = std::max(1, std::min(OH / m, ws.rows));
      Var yo("yo"), yi("yi"), yn("yn");
      // A short last block shifts inwards (recomputes rows; the regions stay constant)
      // where OH is whole tiles; else it is guarded: shifted to OH - m rows it would
      // start inside a tile and span one tile row more (res4 14x14, F(4x4), 2 rows:
      // rows 6-13 = tile rows 1-3, 3 + 2 tile rows for 4, the 2-thread split 0.75x).
      const bool shift = m * rows <= OH && OH % m == 0;
      out.split(y, yo, yi, m * rows, shift ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
      out.fuse(yo, n, yn);
      if (ws.k_block > 0) {
        split_output_channels(yi, yn);
      } else {
        if (K >= 8) out.split(k, k8, kv, KW).reorder(x, yi, kv, k8, yn);
        else out.reorder(x, yi, k, yn);
        out.rename(yn, blk);
      }
      out.parallel(blk);
      if (OW >= 8) out.vectorize(x, 8);
      // Input transform: per block of 8 channels, on their 8 lanes.
      v.compute_at(out, blk);
      schedule_input_transform();
      // The padded rows are copied per block, all channels at once (heap scratch): copied
      // per channel (0.8 KB at one tile row, a stack buffer in Halide 14, and still with
      // store_in(Heap)) the strided tile loads read it with aligned 32-byte loads from a
      // 16-byte aligned slot and crashed (SIGSEGV in vmovaps; C=K=64, 28x28, F(4x4)).
      schedule_reorder(LoopLevel(out, blk));
      schedule_task_gemms(std::max(1, std::min(ws.t_tile, rows * TW)));
    }
    main_ = Pipeline(out);
    install_jit_hooks(main_);
    if (jit) main_.compile_jit(target_for_this_cpu());
  }
};

}  // namespace

std::unique_ptr<Kernel> make_winograd_kernel(const Problem& p, const Schedule& s, int threads) {
  return std::make_unique<WinogradKernel>(p, s, threads);
}

std::vector<std::string> emit_winograd_aot(const Problem& p, const Schedule& s, const std::string& dir, const std::string& function) {
  return WinogradKernel(p, s, 0, false).compile_aot(dir, function);
}

}  // namespace taihu::autotune::halide
