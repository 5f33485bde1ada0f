// 1x1 convolution driver (see conv_pointwise.hpp).
#include "conv_pointwise.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <cstring>
#include <omp.h>

#include "line_prefetch.hpp"
#include "pointwise_kernels.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::dnn::conv {

namespace {

struct PointwiseKernels {
  PwFwdKernel fwd;
  int pixels;  // fwd's strip width (its most pixels per call)
  int lanes;   // fwd's vector width: strips end on whole vectors
  // Backward-weights' tile (dW = dY X^T: "pixels" are input channels there) and its
  // strip width; `bwdw_blocks` 4-channel output blocks per call (its register tile).
  // AVX-512 keeps AVX2's: its 8 x 32 tile measured no faster there (ResNet-50 1x1
  // 256 -> 64, 1 and 2 threads: 64 vs 68 and 107 vs 113 GFLOP/s).
  PwFwdKernel bwdw;
  int bwdw_pixels;
  int bwdw_blocks;
  PwTransposeKernel transpose;
  PwPack4Kernel pack4;
};

const PointwiseKernels& kernels() {
  static const arch::ImplementationList<PointwiseKernels> list(
      "pointwise conv kernels",
      {{"avx512_8x32", arch::Isa::avx512,
        {&pw_fwd_avx512, kPwPixelsAvx512, 16, &pw_fwd_avx2, kPwPixels, 1, &pw_transpose_avx2, &pw_pack4_avx2}},
       {"avx2_4x24", arch::Isa::avx2,
        {&pw_fwd_avx2, kPwPixels, 8, &pw_fwd_avx2, kPwPixels, 1, &pw_transpose_avx2, &pw_pack4_avx2}},
       {"generic", arch::Isa::generic,
        {&pw_fwd_generic, kPwPixels, 8, &pw_fwd_generic, kPwPixels, 1, &pw_transpose_generic, &pw_pack4_generic}}});
  return list.chosen().impl;
}

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

// Input channels per reduction block: a strip (kPwPixels floats per channel) <= 24 KiB
// of L1 (ResNet's 256 channels in one block measured faster than 2 x 128: y is then
// written once).
constexpr index_t kStripChannels = 256;
// Packed weights of one (channel block, output-channel block) pair: <= 128 KiB, so it
// stays in L2 next to the chunk's strips while they are swept again and again.
constexpr index_t kWeightBlockFloats = 32 * 1024;
// Strips per chunk: a chunk's copied strips (<= 8 x 24 KiB) are reused by every
// output-channel block from L2.
constexpr index_t kChunkStrips = 8;
// Strips between the one computed and the one prefetched (one strip's compute is
// ~7 us at 1 thread, well over DRAM latency; 2 measured steadier than 1 cold).
constexpr index_t kAhead = 2;
// Backward-weights with > 256 output channels: pixels per reduction chunk, and input
// strips (24 channels) per block (11 x chunk x 96 bytes <= 132 KiB, L2).
constexpr index_t kBwdChunk = 128, kBwdStrips = 11;

// `pixels` (<= kPwPixels) pixels of `channels` channel planes (x at the first) to
// dst[channel][kPwPixels], zero-padded: for strips no earlier tile prefetched (the
// copy's loads are independent, so more of their misses overlap than an FMA tile's).
void copy_strip(const float* x, index_t plane, index_t channels, int pixels, int width, float* dst) {
  for (index_t c = 0; c < channels; ++c, x += plane, dst += width) {
    if (pixels == width) {
      std::memcpy(dst, x, sizeof(float) * static_cast<std::size_t>(width));
    } else {
      std::memcpy(dst, x, sizeof(float) * static_cast<std::size_t>(pixels));
      std::fill(dst + pixels, dst + width, 0.0f);
    }
  }
}

}  // namespace

bool pointwise_shape(const ConvDesc& d) {
  return d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 && d.pad_w == 0;
}

PointwiseConv::PointwiseConv(const ConvDesc& d)
    : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), plane_(d.h * d.w), px_(kernels().pixels) {
  cblocks_ = ceil_div(cg_, kStripChannels);
  cblock_ = ceil_div(cg_, cblocks_);
  kblocks_ = ceil_div(kg_, kPwRows);
  mblock_ = std::clamp<index_t>(kWeightBlockFloats / (cblock_ * kPwRows), 1, kblocks_);
  // Strips: 3 vectors of 8 pixels each, but a plane whose vector count leaves one
  // vector over ends in two 2-vector strips (a 1-vector tile has 4 accumulators: half
  // the FMA throughput, FMA latency-bound).
  const index_t lanes = kernels().lanes, per_strip = px_ / lanes;
  const index_t vectors = ceil_div(plane_, lanes);
  strips_ = ceil_div(vectors, per_strip);
  split_tail_ = per_strip == 3 && strips_ >= 2 && vectors % 3 == 1;
  tail_ = 2 * lanes;
}

index_t PointwiseConv::strip_begin(index_t s) const {
  return split_tail_ && s == strips_ - 1 ? px_ * (s - 1) + tail_ : px_ * s;
}

int PointwiseConv::strip_pixels(index_t s) const {
  const index_t end = split_tail_ && s == strips_ - 2 ? strip_begin(s) + tail_ : std::min(plane_, strip_begin(s) + px_);
  return static_cast<int>(end - strip_begin(s));
}

void PointwiseConv::pack_weights(const float* w) {
  // [group][channel block][4-channel output block][channel][4], output channels past kg
  // zero: one tile's weights for one channel block are contiguous, and so are all the
  // tiles of an output-channel block.
  const auto block = static_cast<std::size_t>(cblock_ * kPwRows);
  wpack_.assign(static_cast<std::size_t>(d_.groups * cblocks_ * kblocks_) * block, 0.0f);
  for (index_t g = 0; g < d_.groups; ++g)
    for (index_t k = 0; k < kg_; ++k)
      for (index_t c = 0; c < cg_; ++c) {
        const index_t cb = c / cblock_, kb = k / kPwRows;
        wpack_[static_cast<std::size_t>((g * cblocks_ + cb) * kblocks_ + kb) * block +
               static_cast<std::size_t>((c - cb * cblock_) * kPwRows + k % kPwRows)] = w[(g * kg_ + k) * cg_ + c];
      }
}

void PointwiseConv::forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint,
                            const ConvPostOps& post) {
  if (hint == WeightsHint::changed || wpack_.empty()) pack_weights(w);
  const PwFwdKernel kernel = kernels().fwd;
  const int nt = arch::threads_for_call();
  // Work items: (image, group, chunk of strips, range of output-channel blocks). Chunks
  // of up to kChunkStrips strips, evenly sized; when images x groups x chunks leave
  // threads idle (small planes, batch 1) the output channels are split too (each
  // range copies its strips itself: the copy is small next to the FLOPs).
  const index_t chunks = ceil_div(strips_, kChunkStrips), chunk = ceil_div(strips_, chunks);
  const index_t base = d_.n * d_.groups * chunks;
  const index_t want = nt == 1 ? 1 : 3 * nt;
  const index_t ksplit = base >= want ? 1 : std::clamp<index_t>(ceil_div(want, base), 1, std::max<index_t>(1, kblocks_ / 4));
  const index_t krange = ceil_div(kblocks_, ksplit);
  const index_t items = base * ksplit;
  const auto buf_floats = static_cast<std::size_t>(chunk * cblock_ * px_);
  if (strip_.size() < static_cast<std::size_t>(nt) * buf_floats)
    strip_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(nt) * buf_floats);
  const auto wblock = static_cast<std::size_t>(cblock_ * kPwRows);
  ops::parallel_for_dynamic(nt, items, [&](index_t it) {
    float* buf = strip_.data() + static_cast<std::size_t>(omp_get_thread_num()) * buf_floats;
    const index_t kr = it % ksplit, ch = it / ksplit % chunks, ng = it / (ksplit * chunks);
    const index_t g = ng % d_.groups, n = ng / d_.groups;
    const index_t s0 = ch * chunk, s1 = std::min(strips_, s0 + chunk);
    const index_t kb0 = kr * krange, kb1 = std::min(kblocks_, kb0 + krange);
    if (kb0 >= kb1) return;
    PwFwdArgs a{};
    a.w_cstride = kPwRows;
    a.y_kstride = plane_;
    a.prefetch_stride = plane_;
    for (index_t cb = 0; cb < cblocks_; ++cb) {
      const index_t c0 = cb * cblock_;
      a.channels = std::min(cblock_, cg_ - c0);
      a.accumulate = cb > 0 || post.sum;
      a.relu = post.relu && cb == cblocks_ - 1;  // once the reduction is complete
      const float* xc = x + (n * d_.c + g * cg_ + c0) * plane_;
      for (index_t m0 = kb0; m0 < kb1; m0 += mblock_) {
        const index_t m1 = std::min(kb1, m0 + mblock_);
        const bool first_pass = m0 == kb0;
        for (index_t s = s0; s < s1; ++s) {
          const index_t p = strip_begin(s);
          a.pixels = strip_pixels(s);
          // (One slot reused when a single pass covers the item's output channels.)
          float* const strip_buf = buf + (kb1 - kb0 > mblock_ ? (s - s0) * cblock_ * px_ : 0);
          // The first output-channel block copies the strip; while its tiles run they
          // prefetch the rows of the strip kAhead on (spread over the tiles: x's rows
          // lie a plane apart, too many streams for the hardware) and, on the first
          // channel block, their output lines there (write-allocate misses otherwise).
          bool next = false;
          const float* ahead = nullptr;
          // A strip the tiles of kAhead strips back prefetched is copied by its first
          // tile; one they did not (an item's first strips) by copy_strip.
          const bool inline_copy = first_pass && s >= s0 + kAhead;
          if (first_pass && !inline_copy) copy_strip(xc + p, plane_, a.channels, a.pixels, static_cast<int>(px_), strip_buf);
          if (first_pass) {
            next = s + kAhead < strips_;
            if (next) ahead = xc + strip_begin(s + kAhead);
          }
          // The weight block after this one (next output-channel block, or the first
          // of the next channel block), prefetched during this block's last strip.
          const float* wnext = nullptr;
          index_t wnext_tiles = 0;
          if (s == s1 - 1) {
            if (m1 < kb1) {
              wnext = wpack_.data() + static_cast<std::size_t>((g * cblocks_ + cb) * kblocks_ + m1) * wblock;
              wnext_tiles = std::min(mblock_, kb1 - m1);
            } else if (cb + 1 < cblocks_) {
              wnext = wpack_.data() + static_cast<std::size_t>((g * cblocks_ + cb + 1) * kblocks_ + kb0) * wblock;
              wnext_tiles = std::min(mblock_, kb1 - kb0);
            }
          }
          const bool ynext = cb == 0 && s + kAhead < strips_;
          const index_t yahead = ynext ? strip_begin(s + kAhead) - p : 0;
          // The block's tiles in one kernel call (per tile, the set-up of a call cost
          // 2-7% on ResNet-50's 1x1 layers; 64 -> 256 has 64-channel tiles): the first
          // tile reads the strip in place and leaves the copy the others read (no
          // separate copy pass over it); the prefetches run on from tile to tile.
          const index_t k0 = g * kg_ + m0 * kPwRows;
          a.tiles = static_cast<int>(m1 - m0);
          a.rows = static_cast<int>(std::min<index_t>(kPwRows, kg_ - (m1 - 1) * kPwRows));
          a.w = wpack_.data() + static_cast<std::size_t>((g * cblocks_ + cb) * kblocks_ + m0) * wblock;
          a.w_tile_stride = static_cast<index_t>(wblock);
          a.y = y + (n * d_.k + k0) * plane_ + p;
          a.bias = bias && cb == 0 ? bias + k0 : nullptr;
          a.prefetch_l2 = false;
          a.prefetch_rows = 0;
          a.prefetch = nullptr;
          a.prefetch_stride = plane_;
          if (next) {
            // One row of the strip kAhead on per 8 channels of a tile (x's rows lie a
            // plane apart: too many streams for the hardware prefetcher).
            a.prefetch_rows = a.channels;
            a.prefetch = ahead;
          } else if (wnext) {
            // The last strip's tiles pull the next weight block into L2 meanwhile (2
            // lines per 8 channels of a tile), so that block does not start on DRAM
            // latency.
            a.prefetch = wnext;
            a.prefetch_rows = ceil_div(wnext_tiles * static_cast<index_t>(wblock), 32);
            a.prefetch_stride = 32;
            a.prefetch_l2 = true;
          }
          a.x = inline_copy ? xc + p : strip_buf;
          a.x_cstride = inline_copy ? plane_ : px_;
          a.x_copy = inline_copy ? strip_buf : nullptr;
          a.y_prefetch_ahead = yahead;
          kernel(a);
        }
      }
    }
  });
}

void PointwiseConv::backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) {
  const PointwiseKernels& kn = kernels();
  const index_t px = kn.bwdw_pixels;
  const int nt = arch::threads_for_call();
  const index_t total = d_.n * plane_;  // reduction length: pixels of every image
  bias_gradient(d_, dy, dbias, accumulate);
  // Work items: (group, range of 4-channel output blocks, range of 24-channel input
  // strips), threads owning disjoint dW tiles (no reduction between them). The
  // output-channel range is split first (each item transposes its input strips
  // itself, so a range of >= 8 blocks keeps that copy small next to the FLOPs),
  // except as below.
  const index_t cstrips = ceil_div(cg_, px);
  const index_t want = nt == 1 ? 1 : 3 * nt;
  const index_t per_group = ceil_div(want, d_.groups);
  // Threads split the input channels (X^T strips) when X is the larger operand and one
  // item can still hold every output channel in the one-strip blocking (<= 256): each
  // item then transposes only its own strips and packs dY^T (the smaller) whole. The
  // other way each item transposed all of X: ResNet-50 1024 -> 256 at 2 threads
  // 91-101 -> 127-131 GFLOP/s; with more output channels (1024 -> 512) the item's
  // range would turn to the wide blocking, 10% slower there.
  const bool split_c = cg_ >= kg_ && kg_ <= 256;
  index_t ksplit, csplit;
  if (split_c) {
    csplit = std::clamp<index_t>(per_group, 1, std::max<index_t>(1, cstrips / 2));
    ksplit = std::clamp<index_t>(ceil_div(per_group, csplit), 1, std::max<index_t>(1, kblocks_ / 8));
  } else {
    ksplit = std::clamp<index_t>(per_group, 1, std::max<index_t>(1, kblocks_ / 8));
    csplit = std::clamp<index_t>(ceil_div(per_group, ksplit), 1, std::max<index_t>(1, cstrips / 2));
  }
  const index_t krange = ceil_div(kblocks_, ksplit), crange = ceil_div(cstrips, csplit);
  // Chunk sizes count the item's output channels padded to an odd number of cache lines
  // (kpad; dY^T's chunk is held as 4-channel blocks). Per reduction chunk of pixels,
  // dY^T's chunk is built once, then per block of input strips (24 channels each)
  // every 4-channel output block sweeps the block's X^T strips. Up to 256 output
  // channels: blocks of one strip (its X^T stays in L1 while the output blocks sweep
  // it; dY^T's chunk <= 256 KiB, L2). More (dY^T's column blocks then lie far apart,
  // and dW is large): blocks of kBwdStrips strips (their X^T <= 132 KiB, L2), so dW is
  // written 4 rows x the block's channels at a time (whole lines) and a tile's dY^T
  // column block (chunk x 16 bytes) stays in L1 across the strips. (ResNet-50 1x1
  // layers, 1 thread: one-strip blocks measured 15-30% faster up to 256 output
  // channels, 10-20% slower above.)
  const index_t kpad = (ceil_div(krange * kPwRows, 16) | 1) * 16;
  const bool wide = krange * kPwRows > 256;
  const index_t chunk = std::min(total, wide ? kBwdChunk : std::clamp<index_t>(64 * 1024 / kpad / 8 * 8, 8, 256));
  const index_t block_strips = wide ? std::min(kBwdStrips, crange) : 1;
  const auto dyt_floats = static_cast<std::size_t>(chunk * kpad);
  const auto per_thread = dyt_floats + static_cast<std::size_t>(block_strips * chunk * px);
  if (bwd_buf_.size() < static_cast<std::size_t>(nt) * per_thread) {
    bwd_buf_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(nt) * per_thread);
    std::fill(bwd_buf_.data(), bwd_buf_.data() + bwd_buf_.size(), 0.0f);
  }
  const index_t items = d_.groups * ksplit * csplit;
  ops::parallel_for_dynamic(nt, items, [&](index_t it) {
    float* dyt = bwd_buf_.data() + static_cast<std::size_t>(omp_get_thread_num()) * per_thread;
    float* xt = dyt + dyt_floats;
    const index_t cr = it % csplit, kr = it / csplit % ksplit, g = it / (csplit * ksplit);
    const index_t kb0 = kr * krange, kb1 = std::min(kblocks_, kb0 + krange);
    const index_t cs0 = cr * crange, cs1 = std::min(cstrips, cs0 + crange);
    if (kb0 >= kb1 || cs0 >= cs1) return;
    const index_t k_lo = kb0 * kPwRows, k_n = std::min(kg_, kb1 * kPwRows) - k_lo;
    PwFwdArgs a{};
    a.x_cstride = px;
    a.w_cstride = kPwRows;
    a.y_kstride = cg_;
    LinePrefetch ahead;
    for (index_t r0 = 0; r0 < total; r0 += chunk) {
      const index_t r1 = std::min(total, r0 + chunk), len_r = r1 - r0;
      // Calls per image segment of [r0, r1): source rows (channels) a plane apart.
      auto for_segments = [&](auto&& f) {
        for (index_t r = r0; r < r1;) {
          const index_t n = r / plane_, p = r % plane_, len = std::min(plane_ - p, r1 - r);
          f(n, p, len, r - r0);
          r += len;
        }
      };
      // dY^T in 4-channel blocks ([block][pixel][4], block stride chunk x 4): a tile's
      // operand is one contiguous run (row-strided dY^T measured 6-8% slower: each
      // tile then touched a line per pixel and used 16 of its 64 bytes).
      for_segments([&](index_t n, index_t p, index_t len, index_t off) {
        kn.pack4(dy + (n * d_.k + g * kg_ + k_lo) * plane_ + p, plane_, k_n, len, dyt + off * kPwRows, chunk * kPwRows);
      });
      a.channels = len_r;
      a.accumulate = accumulate || r0 > 0;
      for (index_t b0 = cs0; b0 < cs1; b0 += block_strips) {
        const index_t b1 = std::min(cs1, b0 + block_strips);
        for (index_t cs = b0; cs < b1; ++cs) {
          const index_t c0 = cs * px, cn = std::min<index_t>(px, cg_ - c0);
          float* xs = xt + (cs - b0) * len_r * px;
          for_segments([&](index_t n, index_t p, index_t len, index_t off) {
            kn.transpose(x + (n * d_.c + g * cg_ + c0) * plane_ + p, plane_, cn, len, xs + off * px, px);
          });
          if (cn < px)  // the strip's missing channels read as zero
            for (index_t r = 0; r < len_r; ++r) std::fill(xs + r * px + cn, xs + (r + 1) * px, 0.0f);
        }
        // The rows of X the next block of strips transposes (the next block of this
        // chunk, or this item's first block of the next chunk), pulled into L2 a few
        // lines before each tile meanwhile: the transpose otherwise waits on DRAM.
        ahead.clear();
        {
          const index_t nb0 = b1 < cs1 ? b1 : cs0, nb1 = std::min(cs1, nb0 + block_strips);
          const index_t nr0 = b1 < cs1 ? r0 : r1, nr1 = std::min(total, nr0 + chunk);
          for (index_t r = nr0; r < nr1;) {
            const index_t n = r / plane_, p = r % plane_, len = std::min(plane_ - p, nr1 - r);
            for (index_t c = nb0 * px; c < std::min(cg_, nb1 * px); ++c)
              ahead.add(x + (n * d_.c + g * cg_ + c) * plane_ + p, len);
            r += len;
          }
        }
        const index_t per_tile = ceil_div(ahead.lines(), (kb1 - kb0) * (b1 - b0));
        // kn.bwdw_blocks output blocks per call: the kernel's whole register tile (their
        // dY^T blocks lie chunk x 4 apart).
        a.w_tile_stride = chunk * kPwRows;
        for (index_t kb = kb0; kb < kb1; kb += kn.bwdw_blocks) {
          const index_t k0 = kb * kPwRows, tiles = std::min<index_t>(kn.bwdw_blocks, kb1 - kb);
          a.tiles = static_cast<int>(tiles);
          a.rows = static_cast<int>(std::min<index_t>(kPwRows, kg_ - (kb + tiles - 1) * kPwRows));
          a.w = dyt + (k0 - k_lo) * chunk;
          for (index_t cs = b0; cs < b1; ++cs) {
            const index_t c0 = cs * px;
            a.x = xt + (cs - b0) * len_r * px;
            a.pixels = static_cast<int>(std::min<index_t>(px, cg_ - c0));
            a.y = dw + (g * kg_ + k0) * cg_ + c0;
            ahead.issue(per_tile * tiles);
            kn.bwdw(a);
          }
        }
      }
    }
  });
}

}  // namespace taihu::dnn::conv
