// Output-channel-vectorised direct convolution in Halide (see halide_ocvec.hpp). Halide
// dimensions are listed innermost first; V = vector_lanes(), T = k_vectors, X = x_tile.
//   wp(kv, s, r, c, ko)     = W[ko V + kv][c][r][s], zero for ko V + kv >= K
//   xin(x, y, c, n)         = X[n][c][y + oy][x + ox] (zero padded at root when the
//                             window reads outside the image)
//   acc(kv, x, ko, y, n)    = sum_{c,r,s} wp(kv, s, r, c, ko) xin(x + s, y + r, c, n)
//   Y(x, y, k, n)           = acc(k % V, x, k / V, y, n)
// The output loops: (x in tiles of X, channels in tiles of T V; rows and channel tiles
// in either order, the outer of the two fused with the images and run in parallel).
// c_block = 0: acc is the register tile itself (T x X vectors), computed per output
// tile over the whole reduction (s, r innermost, then c), then transposed into the
// tile's NCHW rows. c_block > 0: acc is a whole output row of the tile's channels, its
// reduction split into blocks of c_block input channels, each block swept over the row
// in register tiles before the next (the block's weights stay in L1).
// pixel_lanes 1 / 2 (pixels in the lanes, weights broadcast): build_pixel_lanes /
// build_row_lanes below.
#include "codegen/halide_ocvec.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "codegen/halide_jit_hooks.hpp"
#include "codegen/halide_lower.hpp"
#include "codegen/halide_prepacked.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::autotune::halide {
namespace {

using namespace Halide;

class OcvecKernel final : public PrepackedConvKernel {
 public:
  // jit = false: the pipelines are only built (for compile_aot), not JIT-compiled.
  OcvecKernel(const Problem& p, const Schedule& s, int threads, bool jit = true) : PrepackedConvKernel("ocvec", threads) {
    const std::string why = p.conv_unsupported(s.algorithm);
    if (!why.empty()) throw Error(why);
    const ConvPattern& cv = p.conv_pattern(s.algorithm);
    const OcvecSchedule& os = s.ocvec;
    const int V = vector_lanes();
    const int N = static_cast<int>(cv.n), C = static_cast<int>(cv.c), H = static_cast<int>(cv.h), W = static_cast<int>(cv.w);
    const int K = static_cast<int>(cv.k), OH = static_cast<int>(cv.oh), OW = static_cast<int>(cv.ow);
    const int R = static_cast<int>(cv.r), S = static_cast<int>(cv.s);
    const int KV = (K + V - 1) / V;
    const int T = std::max(1, std::min(os.k_vectors, KV));
    const int X = std::max(1, std::min(os.x_tile, OW));
    const int KVp = static_cast<int>(round_up(KV, T));
    const int cb = os.c_block > 0 && os.c_block < C ? static_cast<int>(os.c_block) : 0;
    static std::atomic<int> count{0};
    const std::string sfx = "_o" + std::to_string(count.fetch_add(1));
    for (std::size_t i = 0; i < p.inputs().size(); ++i) {
      if (p.inputs()[i] == cv.image) image_ = i;
      if (p.inputs()[i] == cv.weight) weight_ = i;
    }
    if (os.pixel_lanes == 2) {
      build_row_lanes(cv, os, sfx, jit);
      return;
    }
    if (os.pixel_lanes != 0) {
      build_pixel_lanes(cv, os, sfx, jit);
      return;
    }
    x_sizes_ = {W, H, C, N};
    w_sizes_ = {S, R, C, K};
    y_sizes_ = {OW, OH, K, N};
    packed_sizes_ = {V, S, R, C, KVp};
    if (jit) packed_ = Buffer<float>(packed_sizes_);

    Var kv("kv"), ko("ko"), k("k"), c("c"), r("r"), sv("sv"), x("x"), y("y"), n("n");
    {  // Weights: packed [ko][c][r][s][kv], zero past K.
      w_in_ = ImageParam(Float(32), 4, "ocv_w" + sfx);
      set_dense(w_in_, w_sizes_);
      Func wz = BoundaryConditions::constant_exterior(w_in_, 0.0f);
      Func wp("ocv_wp" + sfx);
      wp(kv, sv, r, c, ko) = wz(sv, r, c, ko * V + kv);
      wp.reorder(kv, sv, r, c, ko).vectorize(kv).parallel(ko);
      set_dense(wp.output_buffer(), packed_sizes_);
      weights_ = Pipeline(wp);
      if (jit) weights_.compile_jit(target_for_this_cpu());
    }
    x_in_ = ImageParam(Float(32), 4, "ocv_x" + sfx);
    set_dense(x_in_, x_sizes_);
    packed_in_ = ImageParam(Float(32), 5, "ocv_wpin" + sfx);
    set_dense(packed_in_, packed_sizes_);
    const int x_span = cb > 0 ? static_cast<int>(round_up(OW, X)) : OW;  // a row tile may run past OW
    Func xin = window_input(cv, x_span, V, sfx, x, y, c, n);
    RDom rd(0, S, 0, R, 0, C, "ocv_rd" + sfx);
    Func acc("ocv_acc" + sfx), out("ocv_y" + sfx);
    acc(kv, x, ko, y, n) = 0.0f;
    acc(kv, x, ko, y, n) += packed_in_(kv, rd.x, rd.y, rd.z, ko) * xin(x + rd.x, y + rd.y, rd.z, n);
    out(x, y, k, n) = acc(k % V, x, k / V, y, n);
    set_dense(out.output_buffer(), y_sizes_);

    // Output loops: (xi, kv, koi) in a tile, then xo, then rows and channel tiles.
    Var kq("kq"), kr("kr"), koi("koi"), kvo("kvo"), xo("xo"), xi("xi"), task("task");
    out.split(k, kq, kr, T * V, TailStrategy::GuardWithIf).split(kr, koi, kvo, V, TailStrategy::GuardWithIf);
    out.split(x, xo, xi, X, X <= OW ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
    const bool rows_outer = os.rows_outer != 0;
    if (rows_outer) out.reorder(xi, kvo, koi, xo, kq, y, n).fuse(y, n, task);
    else out.reorder(xi, kvo, koi, xo, y, kq, n).fuse(kq, n, task);
    out.parallel(task);
    // The tile's store: X pixels of a row per output channel (the register tile
    // transposed), vectorized over the pixels when the tile is a vector or more.
    // Every index into the register tile must be a constant (koi unrolled too): one
    // loop index into it made LLVM keep the whole tile on the stack, and the FMA loop
    // loaded and stored each accumulator (k 2 x 14: 1.65 ms against 0.48 for k 1 x 28
    // at 64->256, 56x56).
    if (X >= 4) out.vectorize(xi);
    else out.unroll(xi);
    out.unroll(kvo).unroll(koi);
    if (cb == 0) {
      // acc = the register tile: T vectors of output channels x X pixels.
      acc.compute_at(out, xo).store_in(MemoryType::Register).bound_extent(kv, V).bound_extent(ko, T).bound_extent(x, X);
      acc.reorder(kv, x, ko, y, n).vectorize(kv).unroll(x).unroll(ko);
      // Pixels outside channel vectors in the unrolled body: each pixel's input value is
      // broadcast once and FMA'd into its T accumulators, so T weight vectors and a
      // broadcast are live beside the tile (Space::why_invalid's rule). With the channel
      // vectors outside, LLVM kept all X broadcasts live across them: k 2 x 14 needed 28 +
      // 14 + 1 registers and spilled 13 accumulators to the stack in the FMA loop.
      acc.update().reorder(kv, ko, x, rd.x, rd.y, rd.z, y, n).vectorize(kv).unroll(x).unroll(ko);
    } else {
      // acc = one output row of the tile's channels; the reduction in blocks of cb input
      // channels, each swept over the row in register tiles before the next.
      acc.compute_at(out, rows_outer ? kq : y).bound_extent(kv, V).bound_extent(ko, T).bound_extent(x, x_span);
      acc.reorder(kv, x, ko, y, n).vectorize(kv);
      RVar rco("rco"), rci("rci");
      Var axo("axo"), axi("axi");
      acc.update()
          .split(x, axo, axi, X, TailStrategy::GuardWithIf)
          .split(rd.z, rco, rci, cb, TailStrategy::GuardWithIf)
          .reorder(kv, ko, axi, rd.x, rd.y, rci, axo, rco, y, n)  // (pixels outside channel vectors, as above)
          .vectorize(kv)
          .unroll(axi)
          .unroll(ko);
    }
    main_ = Pipeline(out);
    install_jit_hooks(main_);
    if (jit) main_.compile_jit(target_for_this_cpu());
  }

 private:
  // The input as the window reads it, xin(x, y, c, n) = X[n][c][y + oy][x + ox], for
  // output columns x < x_span (l 0, l 2): read in place when every read stays inside the
  // image; else a zero-padded copy at root (no boundary tests in the FMA loop),
  // vectorized `lanes` wide.
  Func window_input(const ConvPattern& cv, int x_span, int lanes, const std::string& sfx, Var x, Var y, Var c, Var n) {
    const int S = static_cast<int>(cv.s), R = static_cast<int>(cv.r);
    const bool inside = cv.off_x >= 0 && cv.off_y >= 0 && cv.off_x + x_span + S - 1 <= cv.w &&
                        cv.off_y + cv.oh + R - 1 <= cv.h;
    Func xin("ocv_xin" + sfx);
    if (inside) {
      xin(x, y, c, n) = x_in_(x + static_cast<int>(cv.off_x), y + static_cast<int>(cv.off_y), c, n);
    } else {
      Func xz = BoundaryConditions::constant_exterior(x_in_, 0.0f);
      xin(x, y, c, n) = xz(x + static_cast<int>(cv.off_x), y + static_cast<int>(cv.off_y), c, n);
      Var cn("cn");
      xin.compute_root().fuse(c, n, cn).parallel(cn);
      if (x_span + S - 1 >= lanes) xin.vectorize(x, lanes);
    }
    return xin;
  }

  // The pixel-lanes forms' weights (l 1, l 2): w_in_ packed by weights_ into
  // [kt][c][r][s][ki] panels of M output channels (packed_sizes_), zero past K.
  void build_weight_panels(int M, const std::string& sfx, bool jit) {
    Var ki("ki"), kt("kt"), c("c"), sv("sv"), r("r");
    w_in_ = ImageParam(Float(32), 4, "ocv_w" + sfx);
    set_dense(w_in_, w_sizes_);
    Func wz = BoundaryConditions::constant_exterior(w_in_, 0.0f);
    Func wp("ocv_wp" + sfx);
    wp(ki, sv, r, c, kt) = wz(sv, r, c, kt * M + ki);
    wp.reorder(ki, sv, r, c, kt).parallel(kt);
    set_dense(wp.output_buffer(), packed_sizes_);
    weights_ = Pipeline(wp);
    if (jit) weights_.compile_jit(target_for_this_cpu());
  }

  // ocvec l=2: output-row strips in the lanes. L = ocvec_row_lanes(OW), PT = k_vectors L
  // pixels of one output row, M = x_tile output channels (dimensions innermost first):
  //   wp(ki, s, r, c, kt)  = W[kt M + ki][c][r][s], zero for kt M + ki >= K (as l 1)
  //   xin(x, y, c, n)      = X[n][c][y + oy][x + ox] (zero padded at root if the window
  //                          reads outside the image, as l 0)
  //   acc(x, ki, kt, y, n) = sum_{c,r,s} wp(ki, s, r, c, kt) xin(x + s, y + r, c, n)
  //   Y(x, y, k, n)        = acc(x, k % M, k / M, y, n)
  // Per (c, r, s): k_vectors unaligned loads of the row, M broadcast weights, each FMA'd
  // into its channel's k_vectors accumulators; the tile is stored straight into Y's rows.
  void build_row_lanes(const ConvPattern& cv, const OcvecSchedule& os, const std::string& sfx, bool jit) {
    const int N = static_cast<int>(cv.n), C = static_cast<int>(cv.c), K = static_cast<int>(cv.k);
    const int H = static_cast<int>(cv.h), W = static_cast<int>(cv.w), R = static_cast<int>(cv.r), S = static_cast<int>(cv.s);
    const int OH = static_cast<int>(cv.oh), OW = static_cast<int>(cv.ow);
    const int L = ocvec_row_lanes(cv.ow);
    const int M = std::max(1, std::min(os.x_tile, K));
    const int KT = (K + M - 1) / M;
    const int PT = std::max(1, os.k_vectors) * L;
    x_sizes_ = {W, H, C, N};
    w_sizes_ = {S, R, C, K};
    y_sizes_ = {OW, OH, K, N};
    packed_sizes_ = {M, S, R, C, KT};
    if (jit) packed_ = Buffer<float>(packed_sizes_);

    Var ki("ki"), kt("kt"), k("k"), c("c"), x("x"), y("y"), n("n");
    build_weight_panels(M, sfx, jit);
    x_in_ = ImageParam(Float(32), 4, "ocv_x" + sfx);
    set_dense(x_in_, x_sizes_);
    packed_in_ = ImageParam(Float(32), 5, "ocv_wpin" + sfx);
    set_dense(packed_in_, packed_sizes_);
    // A strip wider than the row (guarded stores) still computes PT pixels.
    Func xin = window_input(cv, std::max(OW, PT), L, sfx, x, y, c, n);
    RDom rc(0, S, 0, R, 0, C, "ocv_rc" + sfx);
    Func acc("ocv_acc" + sfx), out("ocv_y" + sfx);
    acc(x, ki, kt, y, n) = 0.0f;
    acc(x, ki, kt, y, n) += packed_in_(ki, rc.x, rc.y, rc.z, kt) * xin(x + rc.x, y + rc.y, rc.z, n);
    out(x, y, k, n) = acc(x, k % M, k / M, y, n);
    set_dense(out.output_buffer(), y_sizes_);

    Var ko("ko"), kq("kq"), xo("xo"), xi("xi"), pv("pv"), pw("pw"), task("task");
    out.split(k, ko, kq, M, TailStrategy::GuardWithIf);
    out.split(x, xo, xi, PT, PT <= OW ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
    const bool strips_outer = os.rows_outer != 0;
    if (strips_outer) out.reorder(xi, kq, ko, xo, y, n).fuse(y, n, task);  // a row's strips reused from L1 by every tile
    else out.reorder(xi, kq, xo, y, ko, n).fuse(ko, n, task);             // a tile's weights reused over the image
    out.parallel(task);
    // Constant indices into the register tile (the strip's vectors and kq unrolled).
    out.split(xi, pw, pv, L, TailStrategy::GuardWithIf).vectorize(pv).unroll(pw).unroll(kq);
    Var av("av"), aw("aw");
    acc.compute_at(out, strips_outer ? ko : xo).store_in(MemoryType::Register).bound_extent(x, PT).bound_extent(ki, M).bound_extent(kt, 1);
    acc.split(x, aw, av, L).reorder(av, aw, ki, kt, y, n).vectorize(av).unroll(aw).unroll(ki);
    // The strip's vectors innermost in the unrolled body: one broadcast weight live.
    acc.update().split(x, aw, av, L).reorder(av, aw, ki, rc.x, rc.y, rc.z, kt, y, n).vectorize(av).unroll(aw).unroll(ki);
    main_ = Pipeline(out);
    install_jit_hooks(main_);
    if (jit) main_.compile_jit(target_for_this_cpu());
  }

  // ocvec l=1: dnn's pointwise tile on the flattened plane. A 1x1, stride-1, unpadded
  // conv is Y[n] = W X[n] with pixels q = y W + x; an unpadded R x S window reads
  // X[c][q + r W + s] for the same q over whole input rows (q's columns x >= OW are
  // computed and dropped: (W - OW) / W of the work), so the q range ends at the last
  // valid pixel, Q = (OH - 1) W + OW, where the last read is the plane's last value.
  // Halide dimensions innermost first; M = x_tile output channels, PT = k_vectors * V:
  //   wp(ki, s, r, c, kt)  = W[kt M + ki][c][r][s], zero for kt M + ki >= K
  //   acc(q, ki, kt, n)    = sum_{c,r,s} wp(ki, s, r, c, kt) X[n][c][q + r W + s]
  //   flat(q, k, n)        = acc(q, k % M, k / M, n)
  //   Y(x, y, k, n)        = flat(y W + x, k, n)   (1x1: Y is flat itself)
  void build_pixel_lanes(const ConvPattern& cv, const OcvecSchedule& os, const std::string& sfx, bool jit) {
    const int V = vector_lanes();
    const int N = static_cast<int>(cv.n), C = static_cast<int>(cv.c), K = static_cast<int>(cv.k);
    const int H = static_cast<int>(cv.h), W = static_cast<int>(cv.w), R = static_cast<int>(cv.r), S = static_cast<int>(cv.s);
    const int OH = static_cast<int>(cv.oh), OW = static_cast<int>(cv.ow);
    const bool pointwise = R == 1 && S == 1;
    const int P = (OH - 1) * W + OW;  // flattened pixels computed (H W for a 1x1)
    const int M = std::max(1, std::min(os.x_tile, K));
    const int KT = (K + M - 1) / M;
    const int PT = std::max(1, os.k_vectors) * V;
    const int cb = os.c_block > 0 && os.c_block < C ? static_cast<int>(os.c_block) : 0;
    x_sizes_ = {H * W, C, N};
    w_sizes_ = {S, R, C, K};
    y_sizes_ = pointwise ? std::vector<int>{P, K, N} : std::vector<int>{OW, OH, K, N};
    packed_sizes_ = {M, S, R, C, KT};
    if (jit) packed_ = Buffer<float>(packed_sizes_);

    Var ki("ki"), kt("kt"), k("k"), c("c"), p("p"), n("n");
    build_weight_panels(M, sfx, jit);
    x_in_ = ImageParam(Float(32), 3, "ocv_x" + sfx);
    set_dense(x_in_, x_sizes_);
    packed_in_ = ImageParam(Float(32), 5, "ocv_wpin" + sfx);
    set_dense(packed_in_, packed_sizes_);
    // A strip wider than the plane reads zeros past it (the output's guard drops them).
    Func xin("ocv_xin" + sfx);
    if (PT <= P) xin(p, c, n) = x_in_(p, c, n);
    else xin(p, c, n) = BoundaryConditions::constant_exterior(x_in_, 0.0f)(p, c, n);
    // Strips outside the channel tiles (1x1): the strip's input copied to a contiguous
    // [C][PT] buffer per strip (as dnn copies its strips). Read in place, a channel's
    // row of the strip lies a plane apart from the next (12.5 KiB at 56x56): the 2 C
    // lines fall into few L1 sets and miss again for every channel tile.
    const bool strips_outer = os.rows_outer != 0 || cb > 0;
    const bool staged = strips_outer && pointwise;
    Func xs("ocv_xs" + sfx);
    xs(p, c, n) = xin(p, c, n);
    RDom rc(0, S, 0, R, 0, C, "ocv_rc" + sfx);
    Func acc("ocv_acc" + sfx), out("ocv_flat" + sfx);
    acc(p, ki, kt, n) = 0.0f;
    acc(p, ki, kt, n) += packed_in_(ki, rc.x, rc.y, rc.z, kt) * (staged ? xs : xin)(p + rc.y * W + rc.x, rc.z, n);
    out(p, k, n) = acc(p, k % M, k / M, n);
    Func y4("ocv_y" + sfx);
    if (pointwise) {
      set_dense(out.output_buffer(), y_sizes_);
    } else {  // whole rows computed per tile of M output channels, the valid columns copied out
      Var x("x"), yy("yy"), kn("kn"), yko("yko"), yki("yki");
      y4(x, yy, k, n) = out(yy * W + x, k, n);
      set_dense(y4.output_buffer(), y_sizes_);
      y4.split(k, yko, yki, M, TailStrategy::GuardWithIf).reorder(x, yy, yki, yko, n).fuse(yko, n, kn).parallel(kn);
      if (OW >= V) y4.vectorize(x, V, TailStrategy::ShiftInwards);
      // The tile's rows (M x P floats) on the stack, copied out while still in L1 (at
      // root: a heap buffer of every channel per call, written and read back from L2).
      out.compute_at(y4, kn).store_in(MemoryType::Stack);
    }
    Var ko("ko"), kq("kq"), po("po"), pi("pi"), pv("pv"), pw("pw"), task("task");
    out.split(k, ko, kq, M, TailStrategy::GuardWithIf);
    out.split(p, po, pi, PT, PT <= P ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
    const int strips = (P + PT - 1) / PT;
    const int chunk = os.chunk > 0 && os.chunk < strips ? os.chunk : 0;
    Var pc("pc"), ps("ps");
    if (strips_outer) {
      out.reorder(pi, kq, ko, po, n).fuse(po, n, task);
    } else if (chunk > 0) {  // chunks of strips, channel tiles outside the chunk's strips
      out.split(po, pc, ps, chunk, TailStrategy::GuardWithIf).reorder(pi, kq, ps, ko, pc, n).fuse(pc, n, task);
    } else {
      out.reorder(pi, kq, po, ko, n).fuse(ko, n, task);
    }
    out.parallel(task);
    // Chunks of a 1x1: each strip's pass prefetches the input of the strip 2 on (the
    // first channel tile's pass over a chunk otherwise takes its 2 C input lines a strip
    // as demand misses, 256 rows a plane apart, too many streams for the hardware
    // prefetchers). ResNet-50 res2 1x1 256 -> 64, 14 x 2 in chunks of 4, Zen 4, 1 thread:
    // batch 32 44.6 -> 38.5-39.5 ms, batch 1 1.06-1.15 -> 1.00-1.08 ms (dnn's pointwise
    // prefetches its strips 2 on as well).
    if (chunk > 0 && !strips_outer && pointwise) out.prefetch(x_in_, ps, ps, 2);
    // Constant indices into the register tile (pi's vectors and kq unrolled; see above).
    out.split(pi, pw, pv, V, TailStrategy::GuardWithIf).vectorize(pv).unroll(pw).unroll(kq);
    Var av("av"), aw("aw");
    if (staged) xs.compute_at(out, task).bound_extent(p, PT).vectorize(p, V);
    if (cb == 0) {
      // acc = the register tile: k_vectors vectors of pixels x M output channels, over
      // the whole reduction. Per input channel: k_vectors loads of the strip, M
      // broadcasts of a weight, each FMA'd into its channel's k_vectors accumulators
      // (the pixel vectors innermost in the unrolled body, so one broadcast is live).
      acc.compute_at(out, strips_outer ? ko : chunk > 0 ? ps : po).store_in(MemoryType::Register).bound_extent(p, PT).bound_extent(ki, M).bound_extent(kt, 1);
      acc.split(p, aw, av, V).reorder(av, aw, ki, kt, n).vectorize(av).unroll(aw).unroll(ki);
      acc.update().split(p, aw, av, V).reorder(av, aw, ki, rc.x, rc.y, rc.z, kt, n).vectorize(av).unroll(aw).unroll(ki);
    } else {
      // k-blocking: acc = the strip's outputs of every channel tile (PT x M x KT floats,
      // in L1); per block of cb input channels every tile's register tile is swept
      // before the next block, so a block of the strip's input is reused from L1.
      RVar rco("rco"), rci("rci");
      acc.compute_at(out, task).bound_extent(p, PT).bound_extent(ki, M).bound_extent(kt, KT);  // (task: the strip fused with the image)
      acc.split(p, aw, av, V).reorder(av, aw, ki, kt, n).vectorize(av).unroll(aw);
      acc.update()
          .split(p, aw, av, V)
          .split(rc.z, rco, rci, cb, TailStrategy::GuardWithIf)
          .reorder(av, aw, ki, rc.x, rc.y, rci, kt, rco, n)
          .vectorize(av)
          .unroll(aw)
          .unroll(ki);
    }
    main_ = pointwise ? Pipeline(out) : Pipeline(y4);
    install_jit_hooks(main_);
    if (jit) main_.compile_jit(target_for_this_cpu());
  }
};

}  // namespace

std::unique_ptr<Kernel> make_ocvec_kernel(const Problem& p, const Schedule& s, int threads) {
  return std::make_unique<OcvecKernel>(p, s, threads);
}

std::vector<std::string> emit_ocvec_aot(const Problem& p, const Schedule& s, const std::string& dir, const std::string& function) {
  return OcvecKernel(p, s, 0, false).compile_aot(dir, function);
}

}  // namespace taihu::autotune::halide
