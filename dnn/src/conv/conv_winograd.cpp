// Winograd convolution F(2x2,3x3) and F(4x4,3x3) for 3x3 and F(2x2,5x5) (the
// winograd_2x2 algorithm on 5x5 kernels: 9 multiplies per output instead of 25) for
// 5x5, stride 1, dilation 1, pad <= kernel - 1 problems (any groups, any channel counts).
//   forward: per group and chunk of images, the input is reordered once into a
//   zero-padded blocked buffer (nChw8c, or nChw16c with the AVX-512 transforms); per block of tiles, (1) the vectorised input transform
//   writes V[xi][tile][c], (2) alpha^2 GEMMs M_xi = V_xi * U_xi by the kernel set's
//   register tiles (U = G g G^T computed in double, stored in the GEMM's panel layout,
//   cached under WeightsHint::unchanged), (3) the output transform A^T M A writes y (+ bias)
//   (outputs over 64 MiB on AMD: whole cache lines by non-temporal stores).
//   backward-data: the forward pass of the transposed problem (rotated kernel).
//   backward-weights: the exact adjoint of the forward formula,
//   dU_xi += V_xi^T * (A dY A^T)_xi over all tiles, then dw = G^T dU G. The transforms
//   write V and A dY A^T straight into the panels of the kernel set's weight_gemm
//   ([xi][channel block][tile][lanes]: no packing pass), dU is kept c-major
//   ([g][c][xi][k]) so that G^T dU G reads one channel's alpha^2 rows as one block.
// Threads: after the (parallel) input reorder, each thread takes whole tile blocks and
// runs all three steps on them with private V/M buffers (gemm single-threaded inside),
// so a chunk of images costs one barrier; on a loaded machine barriers are what hurts.
// At AVX2, chunks of a handful of tiles on wide layers split U's output channels
// instead (forward_k_split: ResNet-50 res5 at batch 1, where each thread would otherwise
// stream all 36 MiB of U).
// Backward-weights at 2+ threads instead splits the alpha^2 GEMMs after a shared
// transform step where a chunk's transforms fit 8 MiB (backward_weights_xi_split:
// bitwise the 1-thread dw, no per-thread partial dU). Where dU passes 4 MiB (256 x 256
// channels and up) backward-weights goes by superblocks of ~16 MiB of transformed
// tiles at every thread count, each alpha^2 GEMM over the whole superblock, the
// transforms writing the kernel set's weight_gemm panels (backward_weights_superblocks;
// on AMD by non-temporal stores). At AVX2 the 2+ thread backward-weights of 5x5 layers
// with enough output channels splits them instead, each thread transforming every tile block
// into private buffers (backward_weights_k_split: no shared V / dM, dw bitwise too).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <vector>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "winograd_kernels.hpp"

namespace taihu::dnn::conv {

namespace {

// Forward chunks of at most this many tiles split U's output channels among the threads
// where ksplit_ is on (res4 at batch 1: 16 4x4 tiles; res5: 4, or 16 2x2 tiles), given
// at least 4 panels of output channels per thread (narrower layers keep the tile split).
constexpr index_t kKsplitTiles = 16;

// Backward-weights of 5x5 layers at 2+ threads splits the output channels
// (backward_weights_k_split) given at least this many channel blocks per thread: 3
// vectors, weight_gemm's AVX2 register tile (CIFAR-10 conv2's 2 blocks a thread, with
// 1-vector tiles, measured level), and at most kBwdwKsplitMaxC input channels: every
// thread transforms all of them; ResNet-50 res4's 256 (0.8 MiB of V per thread and block,
// past Zen 3's L2) measured level to 20% slower. 3x3 layers (F(4x4): VGG16 conv1_2 5-12%
// slower, res2 / res3 within the spread) keep the xi split.
constexpr index_t kBwdwKsplitBlocks = 3, kBwdwKsplitMaxC = 64;

// Orders the non-temporal stores of the output scatter (stream) before later reads.
inline void store_fence() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#endif
}

// The transforms of the active ISA. The AVX-512 set works on 16-channel blocks; a
// problem whose channels per group pad further at 16 than at 8 (20, 50, 96/2 + 8, ...)
// takes the 8-channel set instead, as the padding is computed in every GEMM.
const WinogradKernelSet& kernel_set(const ConvDesc& d) {
  static const arch::ImplementationList<const WinogradKernelSet*> list(
      "winograd transforms", {{"avx512_16c", arch::Isa::avx512, &winograd_kernels_avx512},
                              {"avx2_8c", arch::Isa::avx2, &winograd_kernels_avx2},
                              {"generic_8c", arch::Isa::generic, &winograd_kernels_generic}});
  static const arch::ImplementationList<const WinogradKernelSet*> list8(
      "winograd transforms (8-channel blocks)", {{"avx2_8c", arch::Isa::avx2, &winograd_kernels_avx2},
                                                 {"generic_8c", arch::Isa::generic, &winograd_kernels_generic}});
  const WinogradKernelSet* set = list.chosen().impl;
  const auto pads_as_8 = [](index_t c, index_t lanes) { return (c + lanes - 1) / lanes * lanes == (c + 7) / 8 * 8; };
  if (!pads_as_8(d.c / d.groups, set->lanes) || !pads_as_8(d.k / d.groups, set->lanes)) set = list8.chosen().impl;
  return *set;
}

// G (alpha x 3) of each tile size, in double for the weight transforms.
// G (alpha x r) of each variant, in double for the weight transforms. Rows: the
// points (0, 1, -1, 2, -2, inf) as Vandermonde rows scaled to match B^T.
const double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
const double kG4[6][3] = {{1.0 / 4, 0, 0},
                          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                          {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                          {1.0 / 24, 1.0 / 12, 1.0 / 6},
                          {1.0 / 24, -1.0 / 12, 1.0 / 6},
                          {0, 0, 1}};
const double kG2R5[6][5] = {{1.0 / 4, 0, 0, 0, 0},
                            {-1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6},
                            {-1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6},
                            {1.0 / 24, 2.0 / 24, 4.0 / 24, 8.0 / 24, 16.0 / 24},
                            {1.0 / 24, -2.0 / 24, 4.0 / 24, -8.0 / 24, 16.0 / 24},
                            {0, 0, 0, 0, 1}};

// Output tile m: 3x3 kernels (m = 2 or 4) and, for m = 2, 5x5 kernels.
bool shape_ok(const ConvDesc& d, int m) {
  const bool kernel = (d.kh == 3 && d.kw == 3) || (m == 2 && d.kh == 5 && d.kw == 5);
  return kernel && d.stride_h == 1 && d.stride_w == 1 && d.dil_h == 1 && d.dil_w == 1 && d.pad_h < d.kh &&
         d.pad_w < d.kw;
}

struct Run {  // consecutive tiles of one tile row
  index_t first;  // tile index within the block
  index_t count;
  index_t image, ty, tx;
};

class Winograd final : public ConvAlgorithm {
 public:
  Winograd(const ConvDesc& d, int m, MakeFn self)
      : d_(d), set_(&kernel_set(d)), b_(set_->lanes), m_(m), r_(static_cast<int>(d.kh)), alpha_(m + r_ - 1), a2_(alpha_ * alpha_), kg_(d.k / d.groups),
        cg_(d.c / d.groups), cbg_(channel_blocks_of(cg_)), kbg_(channel_blocks_of(kg_)),
        cgp_(cbg_ * b_), kgp_(kbg_ * b_), oh_(d.out_h()), ow_(d.out_w()), th_((oh_ + m - 1) / m),
        tw_((ow_ + m - 1) / m), hp_(th_ * m + r_ - 1), wp_(tw_ * m + r_ - 1),
        kernels_(m == 4 ? set_->f4x4 : r_ == 5 ? set_->f2x2_5x5 : set_->f2x2),
        scatter_(set_->scatter_row), gather_(set_->gather_row),
        bwd_data_(d, self) {
    const index_t tiles_img = th_ * tw_;
    const index_t per_tile = a2_ * (cgp_ + kgp_) * 4;
    // Per-thread tile block: V + M within ~2 MiB (L2 + a share of L3), 8..128 tiles.
    tblock_ = std::clamp<index_t>((2 << 20) / per_tile, 8, 128);
    // Forward (and backward-data, the forward of the transposed problem) on AMD: V + M
    // of a block within 256 KiB, a quarter of Zen 4's 1 MiB L2 (the 2 MiB budget is
    // Intel's L2 + a share of L3). Zen 4 interleaved A/B, 2 MiB -> 256 KiB, GFLOP/s:
    // 1 thread res2 batch 32 284.7 -> 299.1, res3 batch 1 235.7 -> 286.8, res4 batch 32
    // 262.1 -> 277.6; 2 threads res2 batch 32 495.1 -> 573.4, conv3_2 backward-data
    // 598.8 -> 689.6 (bench/results/2026-11-28-zen4-dnn-winograd.md). Intel unmeasured:
    // unchanged there.
    fblock_ = arch::cpu_features().amd() ? std::clamp<index_t>((256 << 10) / per_tile, 8, 128)
                                                            : tblock_;
    fblock_ = std::min(fblock_, tblock_);
    // Outputs of more than 64 MiB (twice Zen 4's L3: VGG16 conv1_2 at batch 32 writes
    // 400 MiB) on AMD: the scatter writes whole cache lines by non-temporal stores (no read
    // for ownership of y, and y no longer pushes the reordered input out of L3), the
    // block a multiple of 16 / m tiles so that its runs start on a cache line where the
    // rows do. Zen 4 interleaved A/B (bench/results/2026-11-29-zen4-dnn-winograd.md),
    // conv1_2 batch 32, GFLOP/s best / median: forward 265.7 / 257.1 -> 287.6 / 276.4,
    // backward-data 266.0 / 265.4 -> 291.1 / 288.9; 2 threads forward 420.5 / 410.8 ->
    // 490.9 / 434.2. (Streaming alone, 14-tile blocks whose runs straddle lines: 263.1 /
    // 253.1; 16-tile blocks alone 268.7 / 262.9.) Intel unmeasured: unchanged there.
    // TAIHU_WINOGRAD_STREAM=0 / 1 forces it off / on (tests).
    stream_ = arch::cpu_features().amd() && d.n * d.k * oh_ * ow_ * 4 > (index_t{64} << 20);
    if (const char* env = std::getenv("TAIHU_WINOGRAD_STREAM"); env != nullptr && *env != '\0')
      stream_ = std::atoi(env) != 0;
    if (stream_) {
      const index_t q = 16 / m;
      fblock_ = std::max(q, (fblock_ + q / 2) / q * q);
    }
    // Forward of chunks of <= kKsplitTiles tiles at 2+ threads by output-channel panels
    // (forward_k_split), at AVX2 (unmeasured at AVX-512, where res4 / res5 at batch 1 go
    // to F(2x2) / direct_weight_lanes). TAIHU_WINOGRAD_KSPLIT=0 / 1 forces it off / on (tests).
    ksplit_ = arch::active_isa() == arch::Isa::avx2;
    if (const char* env = std::getenv("TAIHU_WINOGRAD_KSPLIT"); env != nullptr && *env != '\0')
      ksplit_ = std::atoi(env) != 0;
    // Chunk of images: enough tiles for a few blocks per thread, input copy <= 32 MiB.
    const int nt = std::max(1, arch::threads_for_call());
    const index_t want = tblock_ * nt * 3, img_bytes = cbg_ * hp_ * wp_ * b_ * 4;
    chunk_ = std::clamp<index_t>((want + tiles_img - 1) / tiles_img, 1, d.n);
    chunk_ = std::max<index_t>(1, std::min(chunk_, (32 << 20) / std::max<index_t>(img_bytes, 1)));
    // The chunk a 1-thread object takes (backward_weights_xi_split follows its chunks
    // and GEMM blocks, so 2+ threads give its dw bitwise).
    chunk1_ = std::clamp<index_t>((tblock_ * 3 + tiles_img - 1) / tiles_img, 1, d.n);
    chunk1_ = std::max<index_t>(1, std::min(chunk1_, (32 << 20) / std::max<index_t>(img_bytes, 1)));
    // Backward-weights by superblocks where dU of a group passes 4 MiB (see
    // backward_weights_superblocks): 16 MiB of V / dM, about c tiles at c = k.
    // TAIHU_WINOGRAD_SUPERBLOCK_TILES=n (n > 0) forces superblocks of n tiles (tests).
    superblocks_ = a2_ * cgp_ * kgp_ * 4 > (index_t{4} << 20);
    sblock_ = std::max<index_t>(8, (index_t{16} << 20) / per_tile);
    if (const char* env = std::getenv("TAIHU_WINOGRAD_SUPERBLOCK_TILES"); env != nullptr && std::atol(env) > 0) {
      superblocks_ = true;
      sblock_ = std::atol(env);
    }
    // Whole images per chunk within a superblock, the chunks of equal size (14 + 14 + 4
    // images would leave a short last superblock, whose GEMMs pass all of dU for few tiles).
    chunkw_ = std::clamp<index_t>(sblock_ / tiles_img, 1, d.n);
    chunkw_ = std::max<index_t>(1, std::min(chunkw_, (32 << 20) / std::max<index_t>(img_bytes, 1)));
    chunkw_ = (d.n + (d.n + chunkw_ - 1) / chunkw_ - 1) / ((d.n + chunkw_ - 1) / chunkw_);
    // On AMD the superblocks' transforms write V / dM by non-temporal stores (see
    // backward_weights_superblocks); TAIHU_WINOGRAD_NT_TILES=0 / 1 forces it off / on (tests).
    nt_tiles_ = arch::cpu_features().amd();
    if (const char* env = std::getenv("TAIHU_WINOGRAD_NT_TILES"); env != nullptr && *env != '\0')
      nt_tiles_ = std::atoi(env) != 0;
    // Backward-weights at 2+ threads by output channels (backward_weights_k_split) at
    // AVX2; TAIHU_WINOGRAD_BWDW_KSPLIT=0 / 1 forces it off / on (on: every layer, threads
    // without a block of their own idle; tests).
    bwdw_ksplit_ = arch::active_isa() == arch::Isa::avx2;
    if (const char* env = std::getenv("TAIHU_WINOGRAD_BWDW_KSPLIT"); env != nullptr && *env != '\0') {
      bwdw_ksplit_ = std::atoi(env) != 0;
      if (bwdw_ksplit_) {
        ksplit_blocks_ = 0;
        ksplit_max_c_ = cgp_;
        ksplit_min_r_ = 0;
      }
    }
  }

  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) override {
    if (hint == WeightsHint::changed || u_.size() == 0) transform_weights(w);
    const int nt = arch::threads_for_call();
    ensure_buffers(nt);
    for (index_t n0 = 0; n0 < d_.n; n0 += chunk_) {
      const index_t nb = std::min(chunk_, d_.n - n0), tiles = nb * th_ * tw_;
      const index_t tb = block_size(tiles, nt, fblock_), blocks = (tiles + tb - 1) / tb;
      for (index_t g = 0; g < d_.groups; ++g) {
        const float* ug = u_.data() + g * a2_ * cgp_ * kgp_;
        if (nt > 1 && ksplit_ && tiles <= std::min(fblock_, kKsplitTiles) && kgp_ >= 4 * nt * 2 * b_) {
          forward_k_split(n0, nb, g, tiles, ug, x, bias, y, nt);
          continue;
        }
        ops::run_team(nt, [&] {
          reorder_input(x, n0, nb, g);  // ends with the only barrier
          const int t = omp_get_thread_num();
          Scratch& sc = scratch_[static_cast<std::size_t>(t)];
          ops::for_dynamic(blocks, [&](index_t blk) {
            const index_t t0 = blk * tb, cnt = std::min(tb, tiles - t0);
            make_runs(t0, cnt, sc.runs);
            input_step(sc, cnt);
            // M_xi[t][k] = sum_c V_xi[t][c] U_xi[c][k]: the kernel set's register tiles,
            // each panel of U (cgp x 2 vectors) in L1 while all cnt tiles meet it.
            for (index_t xi = 0; xi < a2_; ++xi)
              set_->gemm(sc.v.data() + xi * xi_stride(cnt, cgp_), cgp_, ug + xi * cgp_ * kgp_, cgp_, kgp_, cnt,
                         sc.m.data() + xi * xi_stride(cnt, kgp_), kgp_);
            output_step(sc, cnt, n0, g, bias, y);
          });
        });
      }
    }
  }

  // Forward of a chunk with a handful of tiles (ResNet-50 res4 / res5 at batch 1: 16 / 4
  // 4x4 tiles for 9 / 36 MiB of U) on several threads: splitting the tiles would have
  // every thread stream all of U for a tile or two, so the threads split U's output-channel
  // panels instead. Thread 0 transforms every tile into its V, each thread multiplies the
  // alpha^2 GEMMs of its panels into thread 0's M, thread 0 writes y (bitwise the tile
  // split: the same per-element sums).
  void forward_k_split(index_t n0, index_t nb, index_t g, index_t tiles, const float* ug, const float* x,
                       const float* bias, float* y, int nt) {
    Scratch& sc = scratch_[0];
    const index_t panel = 2 * b_, panels = (kgp_ + panel - 1) / panel;
    ops::run_team(nt, [&] {
      reorder_input(x, n0, nb, g);  // ends with a barrier
      const int t = omp_get_thread_num();
      if (t == 0) {
        make_runs(0, tiles, sc.runs);
        input_step(sc, tiles);
      }
#pragma omp barrier
      index_t p0 = 0, p1 = panels;
      split_range(panels, t, omp_get_num_threads(), p0, p1);
      const index_t k0 = p0 * panel, k1 = std::min(kgp_, p1 * panel);
      if (k1 > k0)
        for (index_t xi = 0; xi < a2_; ++xi)
          set_->gemm(sc.v.data() + xi * xi_stride(tiles, cgp_), cgp_, ug + xi * cgp_ * kgp_ + k0 * cgp_, cgp_,
                     k1 - k0, tiles, sc.m.data() + xi * xi_stride(tiles, kgp_) + k0, kgp_);
#pragma omp barrier
      if (t == 0) output_step(sc, tiles, n0, g, bias, y);
    });
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override {
    bwd_data_.run(dy, w, dx, hint);
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate) override {
    const int nt = arch::threads_for_call();
    ensure_buffers(nt);
    const index_t gsize = a2_ * cgp_ * kgp_;
    if (superblocks_) {
      backward_weights_superblocks(x, dy, dw, dbias, accumulate, nt);
      return;
    }
    if (nt > 1 && chunk1_ * th_ * tw_ * a2_ * (cgp_ + kgp_) * 4 <= (index_t{8} << 20)) {
      if (bwdw_ksplit_ && kbg_ >= ksplit_blocks_ * nt && cgp_ <= ksplit_max_c_ && r_ >= ksplit_min_r_)
        backward_weights_k_split(x, dy, dw, dbias, accumulate, nt);
      else
        backward_weights_xi_split(x, dy, dw, dbias, accumulate, nt);
      return;
    }
    // Thread 0 accumulates straight into du_, the others into zero-kept partials that
    // are summed into du_ per group. Each block's GEMMs by weight_gemm on the block's panels:
    // Zen 4 interleaved A/B against gemm::sgemm on [xi][t][c] (which packed both operands
    // for K = one block of tiles), 1 thread, GFLOP/s best, load 6: res4 batch 1 F(2x2)
    // 106.9 -> 122.3, CIFAR-10 conv2 F(2x2,5x5) 140.0 -> 188.3, res3 batch 1 163.9 -> 188.1,
    // res2 batch 1 196.8 -> 207.9 (bench/results/2026-11-29-zen4-dnn-winograd2.md).
    // Thread 0's first block of a group writes dU (accumulate false): no zeroing pass
    // (dU of res4 is 4 MiB at F(2x2), past the L2), zeroed only if thread 0 got no block.
    du_.resize(static_cast<std::size_t>(d_.groups * gsize));
    if (partial_.size() != static_cast<std::size_t>(gsize * (nt - 1)))
      partial_.assign(static_cast<std::size_t>(gsize * (nt - 1)), 0.0f);
    for (index_t g = 0; g < d_.groups; ++g) {
      float* dug = du_.data() + g * gsize;
      bool wrote0 = false;  // thread 0 has written dug
      for (index_t n0 = 0; n0 < d_.n; n0 += chunk_) {
        const index_t nb = std::min(chunk_, d_.n - n0), tiles = nb * th_ * tw_;
        const index_t tb = block_size(tiles, nt), blocks = (tiles + tb - 1) / tb;
        ops::run_team(nt, [&] {
          reorder_input(x, n0, nb, g);
          const int t = omp_get_thread_num();
          Scratch& sc = scratch_[static_cast<std::size_t>(t)];
          float* mine = t == 0 ? dug : partial_.data() + gsize * (t - 1);
          ops::for_dynamic(blocks, [&](index_t blk) {
            const index_t t0 = blk * tb, cnt = std::min(tb, tiles - t0);
            make_runs(t0, cnt, sc.runs);
            const index_t p = panel_stride(cnt), vs = blocked_xi_stride(cnt, cbg_), ms = blocked_xi_stride(cnt, kbg_);
            input_into(sc, sc.v.data(), vs, stream_, b_, p);
            gradient_into(sc, n0, g, dy, sc.m.data(), ms, b_, p);
            const bool acc = t != 0 || wrote0;
            for (index_t xi = 0; xi < a2_; ++xi)  // dU[c][xi][k] += sum_t V[xi][t][c] dM[xi][t][k]
              set_->weight_gemm(sc.v.data() + xi * vs, p, cgp_, sc.m.data() + xi * ms, p, kgp_, cnt, mine + xi * kgp_,
                                a2_ * kgp_, acc);
            if (t == 0) wrote0 = true;
          });
        });
      }
      if (!wrote0) std::fill(dug, dug + gsize, 0.0f);
      if (nt > 1) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (index_t i = 0; i < gsize; ++i)
          for (int u = 0; u < nt - 1; ++u) {
            float& p = partial_[static_cast<std::size_t>(gsize * u + i)];
            dug[i] += p;
            p = 0.0f;
          }
      }
    }
    inverse_weight_transform(dw, accumulate);
    bias_gradient(d_, dy, dbias, accumulate);
  }

 private:
  // Backward-weights where dU (alpha^2 x c x k floats a group: 9.4 MiB at 256 x 256)
  // passes 4 MiB, at any thread count: per superblock of sblock_ tiles (16 MiB of V and
  // dM, about c tiles at c = k: the dU traffic, 8 bytes per element per superblock, then
  // costs about what streaming V and dM from L3 does) the threads transform tile blocks
  // into shared V / dM, then split the alpha^2 GEMMs dU_xi (+)= V_xi^T dM_xi, K = the
  // whole superblock. The tile-block path below runs each GEMM with K = its block
  // (28 tiles at 256 channels), so all of dU, out of L2, went through the cache per 28
  // tiles, and its 2-thread form summed a 9.4 MiB partial dU per thread. Blocks and
  // order do not depend on the thread count: dw is bitwise the 1-thread result. The
  // first GEMM of a group writes dU (beta 0): no zeroing pass. Zen 4, VGG16 conv3_2
  // batch 1 (bench/results/2026-11-28-zen4-dnn-winograd.md), GFLOP/s tile blocks ->
  // superblocks: 1 thread 208 -> 256, 2 threads 302 -> 500; res4 batch 8: 140 -> 177,
  // 215 -> 323. At 64 and 128 channels (dU in or near L2) 1 thread lost 17-28%.
  // The transforms write V / dM straight into the kernel set's weight_gemm panels (no
  // packing pass in sgemm), and dU is kept c-major ([c][xi][k]), so G^T dU G reads each
  // channel's 36 rows as one contiguous block instead of 36 rows 256 KiB apart. Zen 4
  // interleaved A/B (bench/results/2026-11-29-zen4-dnn-winograd2.md), conv3_2 batch 1
  // 1 thread, GFLOP/s best: sgemm 250.0 -> panels 263.9 -> panels + c-major dU 284.3;
  // res4 batch 32: 200.8 -> 206.8 -> 214.7.
  // On AMD the transforms write V / dM (16 MiB, read once by the GEMMs after the whole
  // superblock is written) by non-temporal stores: each whole-line store had read its
  // line for ownership first, the transforms waiting on memory. The GEMMs then read V / dM
  // from memory, but at ~2 GB/s, which the prefetchers hide behind their FMAs. Zen 4
  // interleaved A/B (bench/results/2026-11-29-zen4-dnn-winograd3.md), GFLOP/s best /
  // median: 1 thread res4 batch 32 243.7 / 235.7 -> 260.4 / 257.2, conv3_2 batch 1
  // 303.7 / 301.7 -> 330.4 / 325.6; 2 threads 460.9 / 425.6 -> 487.5 / 464.6 and 579.6 /
  // 534.2 -> 606.9 / 584.0. (In the xi split, 2-8 MiB of tiles that stay in the caches,
  // CIFAR-10 conv2 fell 294.9 -> 202.2: not there.) Intel unmeasured: unchanged there.
  void backward_weights_superblocks(const float* x, const float* dy, float* dw, float* dbias, bool accumulate, int nt) {
    const index_t gsize = a2_ * cgp_ * kgp_;
    du_.resize(static_cast<std::size_t>(d_.groups * gsize));
    if (d_.n == 0) std::fill(du_.begin(), du_.end(), 0.0f);
    ensure_shared_tiles(sblock_);
    for (index_t g = 0; g < d_.groups; ++g) {
      float* dug = du_.data() + g * gsize;
      for (index_t n0 = 0; n0 < d_.n; n0 += chunkw_) {
        const index_t nb = std::min(chunkw_, d_.n - n0), tiles = nb * th_ * tw_;
        ops::run_team(nt, [&] {
          reorder_input(x, n0, nb, g);
          Scratch& sc = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
          // Superblocks of equal size (at most sblock_ tiles) over the chunk.
          const index_t nsb = (tiles + sblock_ - 1) / sblock_, sbs = (tiles + nsb - 1) / nsb;
          for (index_t s0 = 0; s0 < tiles; s0 += sbs) {
            const index_t sn = std::min(sbs, tiles - s0);
            const float beta = n0 == 0 && s0 == 0 ? 0.0f : 1.0f;
            const index_t p = panel_stride(sn), vs = blocked_xi_stride(sn, cbg_), ms = blocked_xi_stride(sn, kbg_);
            transform_shared(sc, s0, sn, block_size(sn, nt), n0, g, dy, nt_tiles_);
#pragma omp for schedule(static)
            for (index_t xi = 0; xi < a2_; ++xi)  // dU[c][xi][k] (+)= sum_t V[xi][t][c] dM[xi][t][k]
              set_->weight_gemm(vall_.data() + xi * vs, p, cgp_, mall_.data() + xi * ms, p, kgp_, sn, dug + xi * kgp_,
                                a2_ * kgp_, beta != 0.0f);
          }
        });
      }
    }
    inverse_weight_transform(dw, accumulate);
    bias_gradient(d_, dy, dbias, accumulate);
  }

  // Backward-weights at 2+ threads when a chunk's transformed tiles (V and dM for every
  // tile: alpha^2 x tiles x (c + k) floats) fit in 8 MiB: the threads transform tile
  // blocks into shared V / dM, then split the alpha^2 GEMMs dU_xi (+)= V_xi^T dM_xi, each
  // over every tile of the chunk, so each dU_xi has one writer: no per-thread partial dU
  // (36 x c x k floats each: 2.3 MiB on ResNet-50 res3) to zero, accumulate into and sum.
  // The chunks and each GEMM's tile blocks are the 1-thread path's, in its order: dw is
  // bitwise the 1-thread result. Zen 4, 2 threads, GFLOP/s
  // (bench/results/2026-11-28-zen4-dnn-bwdw2.md): res3 3x3 (28x28, 128) 159-183 with the
  // partials -> 214-245 (oneDNN 2.6 217-223); res2 (56x56, 64) 240-285 -> 285-306.
  void backward_weights_xi_split(const float* x, const float* dy, float* dw, float* dbias, bool accumulate, int nt) {
    const index_t gsize = a2_ * cgp_ * kgp_, tmax = chunk1_ * th_ * tw_;
    du_.resize(static_cast<std::size_t>(d_.groups * gsize));  // (the first GEMM of each xi writes it)
    if (d_.n == 0) std::fill(du_.begin(), du_.end(), 0.0f);
    ensure_shared_tiles(tmax);
    for (index_t g = 0; g < d_.groups; ++g) {
      float* dug = du_.data() + g * gsize;
      for (index_t n0 = 0; n0 < d_.n; n0 += chunk1_) {
        const index_t nb = std::min(chunk1_, d_.n - n0), tiles = nb * th_ * tw_;
        const index_t tb1 = block_size(tiles, 1);
        const index_t vs = blocked_xi_stride(tiles, cbg_), ms = blocked_xi_stride(tiles, kbg_), p = panel_stride(tiles);
        ops::run_team(nt, [&] {
          reorder_input(x, n0, nb, g);
          Scratch& sc = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
          transform_shared(sc, 0, tiles, block_size(tiles, nt), n0, g, dy);  // every tile transformed
#pragma omp for schedule(static)
          for (index_t xi = 0; xi < a2_; ++xi)  // dU[c][xi][k] += sum_t V[xi][t][c] dM[xi][t][k], the 1-thread blocks
            for (index_t t0 = 0; t0 < tiles; t0 += tb1)
              set_->weight_gemm(vall_.data() + xi * vs + t0 * b_, p, cgp_, mall_.data() + xi * ms + t0 * b_, p, kgp_,
                                std::min(tb1, tiles - t0), dug + xi * kgp_, a2_ * kgp_, n0 > 0 || t0 > 0);
        });
      }
    }
    inverse_weight_transform(dw, accumulate);
    bias_gradient(d_, dy, dbias, accumulate);
  }

  // At AVX2, in place of the xi split on 5x5 layers where each thread gets >=
  // kBwdwKsplitBlocks output-channel blocks (of <= kBwdwKsplitMaxC input channels): every
  // thread takes every tile block of the chunk (the 1-thread path's blocks, in its
  // order), transforms the input of the whole block and dY of its own output-channel
  // blocks into its private V / dM, and runs all alpha^2 GEMMs for its output channels.
  // The input transform is done by every thread, but nothing goes through the xi split's
  // shared 2-8 MiB V / dM (written by one core, read back by the other) and a chunk costs
  // one barrier (after the input reorder), not three. Each dU element is the same sum in
  // the same order as at 1 thread (weight_gemm's register tiles add tile by tile whatever
  // their width): dw bitwise. Zen 3, 2 threads, alternating processes (loaded machine),
  // GFLOP/s median xi split -> this: CIFAR-10 conv3 batch 64 80.6 -> 104.6 (0.62x ->
  // 0.86x best oneDNN, 13 pairs), AlexNet conv2 93.8 -> 109.2
  // (bench/results/2026-11-29-zen3-dnn-bwdw-2threads.md). AVX-512: not measured, off.
  void backward_weights_k_split(const float* x, const float* dy, float* dw, float* dbias, bool accumulate, int nt) {
    const index_t gsize = a2_ * cgp_ * kgp_;
    du_.resize(static_cast<std::size_t>(d_.groups * gsize));  // (the first GEMM of each xi writes it)
    if (d_.n == 0) std::fill(du_.begin(), du_.end(), 0.0f);
    for (index_t g = 0; g < d_.groups; ++g) {
      float* dug = du_.data() + g * gsize;
      for (index_t n0 = 0; n0 < d_.n; n0 += chunk1_) {
        const index_t nb = std::min(chunk1_, d_.n - n0), tiles = nb * th_ * tw_, tb1 = block_size(tiles, 1);
        ops::run_team(nt, [&] {
          reorder_input(x, n0, nb, g);
          Scratch& sc = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
          index_t kb0, kb1;  // this thread's output-channel blocks
          split_range(kbg_, omp_get_thread_num(), omp_get_num_threads(), kb0, kb1);
          for (index_t t0 = 0; t0 < tiles && kb0 < kb1; t0 += tb1) {
            const index_t cnt = std::min(tb1, tiles - t0);
            const index_t p = panel_stride(cnt), vs = blocked_xi_stride(cnt, cbg_), ms = blocked_xi_stride(cnt, kbg_);
            make_runs(t0, cnt, sc.runs);
            input_into(sc, sc.v.data(), vs, false, b_, p);
            gradient_into(sc, n0, g, dy, sc.m.data(), ms, b_, p, false, kb0, kb1);
            for (index_t xi = 0; xi < a2_; ++xi)  // dU[c][xi][k] (+)= sum_t V[xi][t][c] dM[xi][t][k], k of kb0..kb1
              set_->weight_gemm(sc.v.data() + xi * vs, p, cgp_, sc.m.data() + xi * ms + kb0 * p, p, (kb1 - kb0) * b_,
                                cnt, dug + xi * kgp_ + kb0 * b_, a2_ * kgp_, n0 > 0 || t0 > 0);
          }
        });
      }
    }
    inverse_weight_transform(dw, accumulate);
    bias_gradient(d_, dy, dbias, accumulate);
  }

  index_t channel_blocks_of(index_t c) const { return (c + b_ - 1) / b_; }
  // Distance between the alpha^2 matrices V_xi / M_xi of a block of cnt tiles: one
  // cache line more than the matrix, so the tile transforms' alpha^2 streams fall in
  // different L1 sets (at 4-16 KiB multiples they all hit one set: 8 ways for 36
  // streams, and the F(2x2,5x5) input transform ran 3x slower than its arithmetic).
  static index_t xi_stride(index_t cnt, index_t channels) { return cnt * channels + 16; }
  // The blocked layout of weight_gemm's operands: element xi of `cnt` tiles as panels of
  // b_ channels ([cb][t][b_]), one cache line between panels and between the xi matrices.
  index_t panel_stride(index_t cnt) const { return cnt * b_ + 16; }
  index_t blocked_xi_stride(index_t cnt, index_t blocks) const { return blocks * panel_stride(cnt) + 16; }
  const double* g_row(int i) const { return m_ == 4 ? kG4[i] : r_ == 5 ? kG2R5[i] : kG2[i]; }

  // U[g][xi] = (G w G^T)[xi] for w = w[g*kg+k][c], zero for padded c / k, in the
  // kernel set's GEMM panel layout (wino_u_offset). Per (g, c), all k at once in double:
  // every step is a loop over k (vectorised), and U rows [xi][c][.] are written in order.
  void transform_weights(const float* w) {
    u_.assign(static_cast<std::size_t>(d_.groups * a2_ * cgp_ * kgp_), 0.0f);
    const index_t pairs = d_.groups * cg_, taps = r_ * r_;
    ops::run_team(pairs * kg_ > 256 ? arch::threads_for_call() : 1, [&] {
      std::vector<double> f(static_cast<std::size_t>(taps * kg_)), gf(static_cast<std::size_t>(alpha_ * r_ * kg_)),
          out(static_cast<std::size_t>(kg_));
#pragma omp for schedule(static)
      for (index_t p = 0; p < pairs; ++p) {
        const index_t g = p / cg_, c = p % cg_;
        float* ug = u_.data() + g * a2_ * cgp_ * kgp_;
        for (index_t k = 0; k < kg_; ++k)  // f[tap][k]
          for (index_t t = 0; t < taps; ++t) f[t * kg_ + k] = w[((g * kg_ + k) * cg_ + c) * taps + t];
        for (int i = 0; i < alpha_; ++i)  // gf[i][j][k] = sum_r G[i][r] f[r][j][k]
          for (int j = 0; j < r_; ++j) {
            double* o = gf.data() + (i * r_ + j) * kg_;
            std::fill(o, o + kg_, 0.0);
            for (int r = 0; r < r_; ++r) {
              const double gir = g_row(i)[r];
              if (gir == 0.0) continue;
              const double* fr = f.data() + (r * r_ + j) * kg_;
              for (index_t k = 0; k < kg_; ++k) o[k] += gir * fr[k];
            }
          }
        for (int i = 0; i < alpha_; ++i)  // U[i][j][k] = sum_q gf[i][q][k] G[j][q]
          for (int j = 0; j < alpha_; ++j) {
            std::fill(out.begin(), out.end(), 0.0);
            for (int q = 0; q < r_; ++q) {
              const double gjq = g_row(j)[q];
              if (gjq == 0.0) continue;
              const double* gq = gf.data() + (i * r_ + q) * kg_;
              for (index_t k = 0; k < kg_; ++k) out[static_cast<std::size_t>(k)] += gq[k] * gjq;
            }
            float* uxi = ug + (i * alpha_ + j) * cgp_ * kgp_;
            for (index_t k0 = 0; k0 < kg_; k0 += 2 * b_) {  // one GEMM panel at a time
              float* row = uxi + wino_u_offset(c, k0, cgp_, kgp_, static_cast<int>(b_));
              const index_t k1 = std::min(kg_, k0 + 2 * b_);
              for (index_t k = k0; k < k1; ++k) row[k - k0] = static_cast<float>(out[static_cast<std::size_t>(k)]);
            }
          }
      }
    });
  }

  // dw[g*kg+k][c] (+)= G^T dU[g][.][c][k] G, for all k of a (g, c) at once by the
  // kernel set's weight_adjoint (k in vectors, the alpha^2 values of a vector in
  // registers), then the r x r taps scattered to dw's [k][c][tap] order. The earlier
  // scalar-structured form (a pass over the alpha^2 rows per non-zero of G, in the
  // library's baseline ISA) took 17% of F(4x4) backward-weights on VGG16 conv3_2.
  // The scatter writes 9 floats 9 KiB apart per k, each dw line first read from memory
  // (after the caller's flush; 20% of res4 batch 1 F(2x2)): the lines of channel c + 8
  // are prefetched for writing. Zen 4 interleaved A/B, 1 thread, GFLOP/s best / median:
  // res4 batch 1 F(2x2) 128.9 / 120.9 -> 135.9 / 128.2 and 134.8 / 127.1 -> 139.9 /
  // 134.8, res3 batch 1 206.0 / 194.4 -> 215.6 / 205.9, res4 batch 32 and conv3_2 level
  // (bench/results/2026-11-29-zen4-dnn-winograd3.md). A prefetch of lines written ~8
  // channels later, one per 9 stores: not gated by vendor.
  void inverse_weight_transform(float* dw, bool accumulate) {
    const index_t pairs = d_.groups * cg_, taps = r_ * r_;
    ops::run_team(pairs * kg_ > 256 ? arch::threads_for_call() : 1, [&] {
      arch::AlignedBuffer<float> out(static_cast<std::size_t>(taps * kgp_));
#pragma omp for schedule(static)
      for (index_t p = 0; p < pairs; ++p) {
        const index_t g = p / cg_, c = p % cg_;
        kernels_.weight_adjoint(du_.data() + (g * cgp_ + c) * a2_ * kgp_, kgp_, kbg_, out.data(), kgp_);
        const bool pf = c + 8 < cg_;
        for (index_t k = 0; k < kg_; ++k) {
          float* f = dw + ((g * kg_ + k) * cg_ + c) * taps;
          if (pf) __builtin_prefetch(f + 8 * taps, 1);
          for (index_t e = 0; e < taps; ++e) f[e] = accumulate ? f[e] + out[e * kgp_ + k] : out[e * kgp_ + k];
        }
      }
    });
  }

  struct Scratch {
    arch::AlignedBuffer<float> v, m, tmp;
    std::vector<Run> runs;
  };

  // Tiles per block: tblock_, or fewer so that every thread gets a block.
  index_t block_size(index_t tiles, int nt) const { return block_size(tiles, nt, tblock_); }
  static index_t block_size(index_t tiles, int nt, index_t most) {
    return std::max<index_t>(1, std::min(most, (tiles + nt - 1) / nt));
  }

  void ensure_buffers(int nt) {
    const std::size_t xp = static_cast<std::size_t>(std::max(chunk_, chunkw_) * cbg_ * hp_ * wp_ * b_);
    if (xp_.size() < xp) xp_ = arch::AlignedBuffer<float>(xp);
    if (scratch_.size() < static_cast<std::size_t>(nt)) scratch_.resize(static_cast<std::size_t>(nt));
    // (The blocked layout of backward-weights takes at least the forward's [xi][t][c].)
    const std::size_t v = static_cast<std::size_t>(a2_ * blocked_xi_stride(tblock_, cbg_));
    const std::size_t mb = static_cast<std::size_t>(a2_ * blocked_xi_stride(tblock_, kbg_));
    const std::size_t tmp = static_cast<std::size_t>(tw_ * m_ * m_ * b_);
    for (auto& sc : scratch_) {
      if (sc.v.size() < v) sc.v = arch::AlignedBuffer<float>(v);
      if (sc.m.size() < mb) sc.m = arch::AlignedBuffer<float>(mb);
      if (sc.tmp.size() < tmp) sc.tmp = arch::AlignedBuffer<float>(tmp);
    }
  }

  // Inside a parallel region: images [n0, n0+nb), group g -> xp[nl][cb][hp][wp][8],
  // zero padded. Ends with the barrier of its omp for.
  void reorder_input(const float* x, index_t n0, index_t nb, index_t g) {
    const index_t rows = nb * cbg_ * hp_;
#pragma omp for schedule(static)
    for (index_t row = 0; row < rows; ++row) {
      const index_t yp = row % hp_, cb = (row / hp_) % cbg_, nl = row / (hp_ * cbg_);
      float* dst = xp_.data() + row * wp_ * b_;
      const index_t iy = yp - d_.pad_h;
      if (iy < 0 || iy >= d_.h) {
        std::memset(dst, 0, sizeof(float) * wp_ * b_);
        continue;
      }
      const index_t x_end = std::min(d_.w, wp_ - d_.pad_w);
      std::memset(dst, 0, sizeof(float) * d_.pad_w * b_);
      std::memset(dst + (d_.pad_w + x_end) * b_, 0, sizeof(float) * (wp_ - d_.pad_w - x_end) * b_);
      const float* src = x + ((n0 + nl) * d_.c + g * cg_ + cb * b_) * d_.h * d_.w + iy * d_.w;
      gather_(src, d_.h * d_.w, static_cast<int>(std::min(b_, cg_ - cb * b_)), x_end, 1, 0, dst + d_.pad_w * b_);
    }
  }

  // vall_ / mall_ large enough for the transformed tiles (V, dM) of `tiles` tiles.
  void ensure_shared_tiles(index_t tiles) {
    const auto vsize = static_cast<std::size_t>(a2_ * blocked_xi_stride(tiles, cbg_)),
               msize = static_cast<std::size_t>(a2_ * blocked_xi_stride(tiles, kbg_));
    if (vall_.size() < vsize) vall_ = arch::AlignedBuffer<float>(vsize);
    if (mall_.size() < msize) mall_ = arch::AlignedBuffer<float>(msize);
  }

  // Inside a team: tiles [s0, s0 + count) of the chunk at image n0 transformed into the
  // shared V / dM (vall_ / mall_, strides for `count` tiles; blocked: weight_gemm's
  // panels, else [xi][t][c]), blocks of tb handed out dynamically; ends with the loop's
  // barrier, so every tile is there after it.
  void transform_shared(Scratch& sc, index_t s0, index_t count, index_t tb, index_t n0, index_t g, const float* dy,
                        bool nt = false) {
    const index_t vs = blocked_xi_stride(count, cbg_), ms = blocked_xi_stride(count, kbg_), p = panel_stride(count);
    ops::for_dynamic((count + tb - 1) / tb, [&](index_t blk) {
      const index_t t0 = blk * tb, cnt = std::min(tb, count - t0);
      make_runs(s0 + t0, cnt, sc.runs);
      input_into(sc, vall_.data() + t0 * b_, vs, false, b_, p, nt);
      gradient_into(sc, n0, g, dy, mall_.data() + t0 * b_, ms, b_, p, nt);
      if (nt) store_fence();  // (before the loop's barrier: other threads read the tiles)
    });
  }

  void make_runs(index_t t0, index_t tb, std::vector<Run>& runs) const {
    runs.clear();
    for (index_t t = 0; t < tb;) {
      const index_t gt = t0 + t, tx = gt % tw_, ty = (gt / tw_) % th_, img = gt / (tw_ * th_);
      const index_t count = std::min(tw_ - tx, tb - t);
      runs.push_back({t, count, img, ty, tx});
      t += count;
    }
  }

  // V[xi][tile][c] of the block's cnt tiles.
  // Streaming outputs (stream_: images far past the caches, so the reordered input is read
  // from L3) prefetch the input two tiles ahead: Zen 4 interleaved A/B, VGG16 conv1_2
  // batch 32 forward, GFLOP/s best / median 287.7 / 281.4 -> 300.5 / 294.0 and 281.9 /
  // 276.4 -> 298.6 / 286.9 (bench/results/2026-11-29-zen4-dnn-winograd.md).
  void input_step(Scratch& sc, index_t cnt) { input_into(sc, sc.v.data(), xi_stride(cnt, cgp_), stream_); }
  // The same into v (the block's first tile) with xi_stride xs, tile t's channel block cb
  // at v + t * ts + cb * cs (ts = 0: [t][c], ts = cgp_, cs = b_).
  void input_into(const Scratch& sc, float* v, index_t xs, bool ahead = false, index_t ts = 0, index_t cs = 0,
                  bool nt = false) {
    const auto input = nt ? kernels_.input_nt : ahead ? kernels_.input_ahead : kernels_.input;
    if (ts == 0) ts = cgp_, cs = b_;
    for (const Run& r : sc.runs)
      for (index_t cb = 0; cb < cbg_; ++cb) {
        const float* src = xp_.data() + ((r.image * cbg_ + cb) * hp_ + r.ty * m_) * wp_ * b_ + r.tx * m_ * b_;
        input(src, wp_ * b_, r.count, v + r.first * ts + cb * cs, ts, xs);
      }
  }

  // y from M[xi][tile][k] (+ bias).
  void output_step(Scratch& sc, index_t cnt, index_t n0, index_t g, const float* bias, float* y) {
    float* tmp = sc.tmp.data();
    for (const Run& r : sc.runs)
      for (index_t kb = 0; kb < kbg_; ++kb) {
        kernels_.output(sc.m.data() + r.first * kgp_ + kb * b_, kgp_, xi_stride(cnt, kgp_), r.count, tmp);
        const index_t img = n0 + r.image, oy0 = r.ty * m_, ox0 = r.tx * m_;
        const index_t rows = std::min<index_t>(m_, oh_ - oy0), pixels = std::min(r.count * m_, ow_ - ox0);
        const int lanes = static_cast<int>(std::min(b_, kg_ - kb * b_));
        float* plane = y + (img * d_.k + g * kg_ + kb * b_) * oh_ * ow_ + oy0 * ow_ + ox0;
        for (index_t i = 0; i < rows; ++i)
          scatter_(tmp, m_, static_cast<int>(i), pixels, lanes, bias ? bias + g * kg_ + kb * b_ : nullptr,
                   plane + i * ow_, oh_ * ow_, stream_);
      }
    if (stream_) store_fence();
  }

  // (A dY A^T) of the block's dy tiles (zero outside the output) into m (the block's
  // first tile) with xi_stride xs, tile t's channel block kb at m + t * ts + kb * cs;
  // channel blocks [kb0, kb1) only (kb1 < 0: to the last).
  void gradient_into(Scratch& sc, index_t n0, index_t g, const float* dy, float* m, index_t xs, index_t ts,
                     index_t cs, bool nt = false, index_t kb0 = 0, index_t kb1 = -1) {
    const auto adjoint = nt ? kernels_.output_adjoint_nt : kernels_.output_adjoint;
    float* tmp = sc.tmp.data();
    if (kb1 < 0) kb1 = kbg_;
    for (const Run& r : sc.runs)
      for (index_t kb = kb0; kb < kb1; ++kb) {
        const index_t img = n0 + r.image, oy0 = r.ty * m_, ox0 = r.tx * m_;
        const index_t rows = std::min<index_t>(m_, oh_ - oy0), pixels = std::min(r.count * m_, ow_ - ox0);
        // Zero only what the gathers below leave out (rows or columns past the output).
        if (rows < m_ || pixels < r.count * m_) std::memset(tmp, 0, sizeof(float) * r.count * m_ * m_ * b_);
        const float* plane = dy + (img * d_.k + g * kg_ + kb * b_) * oh_ * ow_ + oy0 * ow_ + ox0;
        for (index_t i = 0; i < rows; ++i)
          gather_(plane + i * ow_, oh_ * ow_, static_cast<int>(std::min(b_, kg_ - kb * b_)), pixels, m_,
                  static_cast<int>(i), tmp);
        adjoint(tmp, r.count, m + r.first * ts + kb * cs, ts, xs);
      }
  }

  ConvDesc d_;
  const WinogradKernelSet* set_;
  index_t b_;  // channel block: the kernel set's lanes (8 or 16)
  int m_, r_, alpha_;
  index_t a2_, kg_, cg_, cbg_, kbg_, cgp_, kgp_, oh_, ow_, th_, tw_, hp_, wp_;
  index_t tblock_ = 1, fblock_ = 1, chunk_ = 1, chunk1_ = 1, sblock_ = 8, chunkw_ = 1;
  bool superblocks_ = false;
  bool stream_ = false;  // the output scatter's non-temporal stores (see the constructor)
  bool ksplit_ = false;  // forward_k_split for chunks of few tiles (see the constructor)
  bool nt_tiles_ = false;  // the superblocks' transforms by non-temporal stores
  bool bwdw_ksplit_ = false;  // backward_weights_k_split where it applies (see the constructor)
  index_t ksplit_blocks_ = kBwdwKsplitBlocks;  // output-channel blocks per thread it takes
  index_t ksplit_max_c_ = kBwdwKsplitMaxC;     // and input channels, at most
  int ksplit_min_r_ = 5;                       // and kernel size, at least
  WinogradKernels kernels_;
  WinoScatterRow scatter_;
  WinoGatherRow gather_;
  std::vector<float> u_, du_, partial_;
  arch::AlignedBuffer<float> xp_, vall_, mall_;  // (vall_ / mall_: backward_weights_xi_split)
  std::vector<Scratch> scratch_;
  TransposedBackwardData bwd_data_;
};

bool winograd_supports(const ConvDesc& d, ConvDirection dir, int m) {
  if (dir == ConvDirection::backward_data)
    return shape_ok(d, m) && transposed_supported(d) && shape_ok(transposed_desc(d), m);
  return shape_ok(d, m);
}

}  // namespace

bool winograd_2x2_supports(const ConvDesc& d, ConvDirection dir) { return winograd_supports(d, dir, 2); }
bool winograd_4x4_supports(const ConvDesc& d, ConvDirection dir) { return winograd_supports(d, dir, 4); }
std::unique_ptr<ConvAlgorithm> make_winograd_2x2(const ConvDesc& d) {
  return std::make_unique<Winograd>(d, 2, make_winograd_2x2);
}
std::unique_ptr<ConvAlgorithm> make_winograd_4x4(const ConvDesc& d) {
  return std::make_unique<Winograd>(d, 4, make_winograd_4x4);
}

}  // namespace taihu::dnn::conv
