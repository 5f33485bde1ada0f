// The minibatch algorithm (see conv_minibatch.hpp): im2col + GEMMs on pre-packed
// weights, images in parallel, batched backward-weights.
#include "conv_minibatch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <immintrin.h>
#include <omp.h>

#include "core/parallel.hpp"
#include "minibatch_kernels.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/gemm/packed.hpp"

namespace taihu::dnn::conv {

using gemm::Layout;
using gemm::Trans;

namespace {

// Images [begin, end) of `n` for thread t of nt (contiguous, static: deterministic).
void split(index_t n, int t, int nt, index_t* begin, index_t* end) {
  *begin = n * t / nt;
  *end = n * (t + 1) / nt;
}

// The output columns ox in [lo, hi) whose input column ox*stride + off lies in [0, w).
void inside_range(index_t ow, index_t stride, index_t off, index_t w, index_t* lo, index_t* hi) {
  index_t a = 0, b = ow;
  while (a < ow && a * stride + off < 0) ++a;
  while (b > a && (b - 1) * stride + off >= w) --b;
  *lo = a;
  *hi = b;
}

// dst[0, OW) += src[0, OW), OW a multiple of 4 (SSE, the x86-64 baseline).
template <int OW>
inline void add_row(float* dst, const float* src) {
  for (int i = 0; i < OW; i += 4) _mm_storeu_ps(dst + i, _mm_add_ps(_mm_loadu_ps(dst + i), _mm_loadu_ps(src + i)));
}

}  // namespace

MinibatchConv::MinibatchConv(const ConvDesc& d)
    : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), rows_(cg_ * d.kh * d.kw), plane_(d.out_h() * d.out_w()) {
  d_.validate();
  // Images per backward GEMM: a reduction depth of >= 256 pixels, deeper while the
  // column block stays within 64K floats (few rows: LeNet's conv1 has 25), at most 16.
  const index_t depth = std::max<index_t>(256, 65536 / std::max<index_t>(rows_, 1));
  chunk_ = static_cast<int>(std::clamp<index_t>((depth + plane_ - 1) / plane_, 1, 16));
  // Few weight columns (first layers): the register-tiled AVX2 kernel instead of a GEMM
  // that would pack both small operands.
  small_kernel_ = rows_ <= kSmallRows && arch::active_isa() >= arch::Isa::avx2;
  // AVX-512 forms where they measured faster (1 thread, bench/results/
  // 2026-11-28-xeon-dnn-minibatch.md): small backward-weights (CIFAR-10 conv1 48.4 vs
  // 44.0 GFLOP/s), implicit backward-weights (LeNet conv1 60.6-63.8 vs 56.7-65.3: a tie).
  // Forward and the packed backward-weights stay AVX2 (LeNet conv2 forward 93.5 vs
  // 101.6, packed 82.9 vs 91.3; conv1 forward 61.5 vs 69.2): each 16-lane vector there
  // is two 8-pixel rows from separate addresses (two masked loads and stores).
  // TAIHU_MINIBATCH_AVX512_ALL=1 runs those AVX-512 forms too (A/B, tests).
  avx512_ = arch::active_isa() >= arch::Isa::avx512;
  const char* all = std::getenv("TAIHU_MINIBATCH_AVX512_ALL");
  avx512_all_ = avx512_ && all != nullptr && std::string(all) == "1";
  // On AMD (Zen 4: AVX-512 as 2 x 256 bits) the AVX2 implicit backward-weights, whose
  // vectors are single 8-pixel rows: LeNet conv1, interleaved A/B medians, 1 thread,
  // batch 64 / 32 / 1: 60.8-64.0 vs 57.5-60.8, 61.7-65.2 vs 59.2-61.1, 38.2-38.9 vs
  // 36.5-37.6 GFLOP/s (bench/results/2026-11-28-zen4-dnn-lenet.md).
  implicit_avx512_ = avx512_ && (avx512_all_ || !arch::cpu_features().amd());
  implicit_weights_ = arch::active_isa() >= arch::Isa::avx2 && d.groups == 1 && d.stride_h == 1 && d.stride_w == 1 &&
                      d.pad_h == 0 && d.pad_w == 0 && d.dil_h == 1 && d.dil_w == 1 && d.out_w() % 8 == 0;
  col2im_w8_ = arch::active_isa() >= arch::Isa::avx2 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 &&
               d.pad_w == 0 && d.dil_h == 1 && d.dil_w == 1 && d.out_w() == 8 && d.w <= 16 && !identity_columns();
  // With one 8-pixel vector per output row and input rows of <= 16 floats,
  // backward-weights packs blocks of images into evenly strided streams whose input
  // rows are 64-byte lines (no load crosses a line).
  packed_weights_ = implicit_weights_ && d.out_w() == 8 && d.w <= 16;
  if (implicit_weights_) {
    for (index_t c = 0; c < d.c; ++c)
      for (index_t r = 0; r < d.kh; ++r)
        for (index_t s = 0; s < d.kw; ++s) tap_offset_.push_back((c * d.h + r) * d.w + s);
  }
}

bool MinibatchConv::identity_columns() const {
  return d_.kh == 1 && d_.kw == 1 && d_.stride_h == 1 && d_.stride_w == 1 && d_.pad_h == 0 && d_.pad_w == 0;
}

float* MinibatchConv::scratch(int threads, std::size_t per_thread) {
  scratch_stride_ = (per_thread + 15) & ~std::size_t{15};
  const std::size_t need = scratch_stride_ * static_cast<std::size_t>(threads);
  if (scratch_.size() < need) scratch_ = arch::AlignedBuffer<float>(need);
  return scratch_.data();
}

// The row loops are short (a LeNet row is 8 pixels), so the common widths are
// compile-time constants (OW > 0) and fully vectorised inline; OW = 0 is any width.
template <int OW>
void MinibatchConv::im2col_rows(const float* x_group, float* col, index_t ld) const {
  const index_t oh = d_.out_h(), ow = OW > 0 ? OW : d_.out_w(), sw = d_.stride_w;
  for (index_t row = 0; row < rows_; ++row) {
    const index_t ci = row / (d_.kh * d_.kw), r = (row / d_.kw) % d_.kh, s = row % d_.kw;
    const float* xc = x_group + ci * d_.h * d_.w;
    float* out = col + row * ld;
    const index_t off_x = s * d_.dil_w - d_.pad_w;
    index_t lo, hi;
    inside_range(ow, sw, off_x, d_.w, &lo, &hi);
    const bool full = lo == 0 && hi == ow && sw == 1;
    for (index_t oy = 0; oy < oh; ++oy) {
      float* __restrict o = out + oy * ow;
      const index_t iy = oy * d_.stride_h - d_.pad_h + r * d_.dil_h;
      if (iy < 0 || iy >= d_.h) {
        for (index_t ox = 0; ox < ow; ++ox) o[ox] = 0.0f;
        continue;
      }
      const float* __restrict xr = xc + iy * d_.w + off_x;
      if (full) {
        if constexpr (OW > 0) std::memcpy(o, xr, sizeof(float) * OW);  // inlined: a constant size
        else std::memcpy(o, xr, sizeof(float) * static_cast<std::size_t>(ow));
        continue;
      }
      for (index_t ox = 0; ox < lo; ++ox) o[ox] = 0.0f;
      if (sw == 1) {
        for (index_t ox = lo; ox < hi; ++ox) o[ox] = xr[ox];
      } else {
        for (index_t ox = lo; ox < hi; ++ox) o[ox] = xr[ox * sw];
      }
      for (index_t ox = hi; ox < ow; ++ox) o[ox] = 0.0f;
    }
  }
}

void MinibatchConv::im2col(const float* x_group, float* col, index_t ld) const {
  switch (d_.out_w()) {
    case 8: im2col_rows<8>(x_group, col, ld); break;
    case 16: im2col_rows<16>(x_group, col, ld); break;
    case 24: im2col_rows<24>(x_group, col, ld); break;
    case 32: im2col_rows<32>(x_group, col, ld); break;
    default: im2col_rows<0>(x_group, col, ld);
  }
}

// One kernel tap (ci, r, s) at a time over all output rows, taps ordered (ci, s, r):
// a tap's row segments overlap those of the previous column shift s - 1 only
// kh * oh rows later, when those stores have left the store buffer (a load that
// partly overlaps a store still in flight stalls until it commits); the same s at
// r + 1 hits the exact addresses of r, which store forwarding handles.
template <int OW>
void MinibatchConv::col2im_rows(const float* col, index_t ld, float* dx_group) const {
  const index_t oh = d_.out_h(), ow = OW > 0 ? OW : d_.out_w(), sw = d_.stride_w;
  for (index_t tap = 0; tap < rows_; ++tap) {
    const index_t ci = tap / (d_.kh * d_.kw), s = (tap / d_.kh) % d_.kw, r = tap % d_.kh;
    const index_t row = (ci * d_.kh + r) * d_.kw + s;
    float* xc = dx_group + ci * d_.h * d_.w;
    const float* in = col + row * ld;
    const index_t off_x = s * d_.dil_w - d_.pad_w;
    index_t lo, hi;
    inside_range(ow, sw, off_x, d_.w, &lo, &hi);
    const bool full = OW % 4 == 0 && OW > 0 && sw == 1 && lo == 0 && hi == ow;
    for (index_t oy = 0; oy < oh; ++oy) {
      const index_t iy = oy * d_.stride_h - d_.pad_h + r * d_.dil_h;
      if (iy < 0 || iy >= d_.h) continue;
      float* __restrict xr = xc + iy * d_.w + off_x;
      const float* __restrict c = in + oy * ow;
      if (full) {
        add_row<OW>(xr, c);
      } else if (sw == 1) {
        for (index_t ox = lo; ox < hi; ++ox) xr[ox] += c[ox];
      } else {
        for (index_t ox = lo; ox < hi; ++ox) xr[ox * sw] += c[ox];
      }
    }
  }
}

void MinibatchConv::col2im(const float* col, index_t ld, float* dx_group) const {
  switch (d_.out_w()) {
    case 8: col2im_rows<8>(col, ld, dx_group); break;
    case 16: col2im_rows<16>(col, ld, dx_group); break;
    case 24: col2im_rows<24>(col, ld, dx_group); break;
    case 32: col2im_rows<32>(col, ld, dx_group); break;
    default: col2im_rows<0>(col, ld, dx_group);
  }
}

const std::vector<gemm::PackedA<float>>& MinibatchConv::packed_weights(bool transposed, const float* w,
                                                                      WeightsHint hint) {
  std::vector<gemm::PackedA<float>>& packed = transposed ? packed_wt_ : packed_w_;
  if (packed.empty()) {
    for (index_t g = 0; g < d_.groups; ++g)
      packed.emplace_back(Layout::row_major, transposed ? Trans::yes : Trans::no, transposed ? rows_ : kg_,
                          transposed ? kg_ : rows_, w + g * kg_ * rows_, rows_);
  } else if (hint == WeightsHint::changed) {
    for (index_t g = 0; g < d_.groups; ++g) packed[static_cast<std::size_t>(g)].repack(w + g * kg_ * rows_);
  }
  return packed;
}

void MinibatchConv::forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) {
  if (implicit_weights_) {
    const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), d_.n));
    const minibatch_kernels::ImplicitBwdWeights g{d_.c, d_.h, d_.w, d_.k, d_.out_h(), d_.out_w(), rows_, tap_offset_.data()};
    // Blocks of 24 pixel vectors (8 tiles; their inputs stay in L2 while every
    // channel tile passes over them), handed out dynamically.
    // One thread on one image: a single block, each channel tile's output rows written
    // as one run over the whole plane (LeNet conv1 batch 1 on Zen 4, 72 vectors, A/B in
    // one process after the 96 MiB flush: +3.7-4.6% median in five runs,
    // bench/results/2026-11-29-zen4-dnn-lanes3.md).
    const index_t vectors = d_.n * plane_ / 8, kBlock = nt == 1 && d_.n == 1 ? vectors : 24;
    const index_t blocks = (vectors + kBlock - 1) / kBlock;
    ops::parallel_for_dynamic(nt, blocks, [&](index_t b) {
      (avx512_all_ ? minibatch_kernels::forward_implicit_avx512 : minibatch_kernels::forward_implicit_avx2)(
          g, x, w, bias, b * kBlock, std::min(vectors, (b + 1) * kBlock), y);
    });
    return;
  }
  const std::vector<gemm::PackedA<float>>& packed = packed_weights(false, w, hint);
  const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), d_.n));
  const std::size_t per = identity_columns() ? 0 : static_cast<std::size_t>(rows_ * plane_);
  float* cols = per ? scratch(nt, per) : nullptr;
  ops::run_team(nt, [&] {
    const int t = omp_get_thread_num();
    float* col = per ? cols + scratch_stride_ * static_cast<std::size_t>(t) : nullptr;
    // Images are independent here: handed out dynamically, so a thread that loses
    // its core for a while (a busy machine) does not hold up the other.
    ops::for_dynamic_nowait(d_.n, [&](index_t n) {
      for (index_t g = 0; g < d_.groups; ++g) {
        const float* xg = x + (n * d_.c + g * cg_) * d_.h * d_.w;
        float* yg = y + (n * d_.k + g * kg_) * plane_;
        if (per) im2col(xg, col, plane_);
        gemm::gemm_packed(Layout::row_major, packed[static_cast<std::size_t>(g)], Trans::no, plane_, 1.0f, per ? col : xg, plane_,
                          0.0f, yg, plane_);
        if (bias) {
          for (index_t k = 0; k < kg_; ++k) {
            const float b = bias[g * kg_ + k];
            float* row = yg + k * plane_;
            for (index_t p = 0; p < plane_; ++p) row[p] += b;
          }
        }
      }
    });
  });
}

void MinibatchConv::backward_data_channel_split(const float* dy, const float* w, float* dx, WeightsHint hint,
                                                int threads) {
  const index_t taps = d_.kh * d_.kw;
  const auto first_channel = [&](int t) { return cg_ * t / threads; };
  if (split_threads_ != threads) {
    packed_wt_split_.clear();
    split_threads_ = threads;
  }
  if (packed_wt_split_.empty()) {
    for (index_t g = 0; g < d_.groups; ++g)
      for (int t = 0; t < threads; ++t)
        packed_wt_split_.emplace_back(Layout::row_major, Trans::yes, (first_channel(t + 1) - first_channel(t)) * taps, kg_,
                                      w + g * kg_ * rows_ + first_channel(t) * taps, rows_);
  } else if (hint == WeightsHint::changed) {
    for (index_t g = 0; g < d_.groups; ++g)
      for (int t = 0; t < threads; ++t)
        packed_wt_split_[static_cast<std::size_t>(g * threads + t)].repack(w + g * kg_ * rows_ + first_channel(t) * taps);
  }
  // A thread's columns at the start of its slot; col2im_w8 reads up to 8 floats past
  // them, inside the slot.
  float* cols = scratch(threads, static_cast<std::size_t>((rows_ + kg_) * plane_));
  ops::run_team(threads, [&] {
    const int t = omp_get_thread_num();
    const index_t c0 = first_channel(t), c1 = first_channel(t + 1);
    float* col = cols + scratch_stride_ * static_cast<std::size_t>(t);
    for (index_t n = 0; n < d_.n; ++n)
      for (index_t g = 0; g < d_.groups; ++g) {
        gemm::gemm_packed(Layout::row_major, packed_wt_split_[static_cast<std::size_t>(g * threads + t)], Trans::no,
                          plane_, 1.0f, dy + (n * d_.k + g * kg_) * plane_, plane_, 0.0f, col, plane_);
        minibatch_kernels::col2im_w8_avx2(col, plane_, c1 - c0, d_.h, d_.w, d_.kh, d_.kw, d_.out_h(),
                                          dx + (n * d_.c + g * cg_ + c0) * d_.h * d_.w);
      }
  });
}

void MinibatchConv::backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) {
  if (const int threads = arch::threads_for_call(); col2im_w8_ && d_.n < threads && cg_ >= threads) {
    backward_data_channel_split(dy, w, dx, hint, threads);
    return;
  }
  const std::vector<gemm::PackedA<float>>& packed = packed_weights(true, w, hint);  // W_g^T, rows_ x kg_
  const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), d_.n));
  const bool direct = identity_columns();
  // A chunk of images per GEMM (their dy side by side), as in backward_weights.
  // With col2im_w8 one image per GEMM: its dy is read in place (no gather), and the
  // columns (LeNet conv2: 125 KiB) stay in L2 for col2im (4 images: 5% slower).
  const int chunk = col2im_w8_ ? 1 : chunk_;
  const index_t depth = chunk * plane_;
  const std::size_t per = direct ? 0 : static_cast<std::size_t>((rows_ + kg_) * depth);
  float* cols = per ? scratch(nt, per) : nullptr;
  const auto body = [&] {
    const int t = omp_get_thread_num();
    float* col = per ? cols + scratch_stride_ * static_cast<std::size_t>(t) : nullptr;
    float* dyc = per ? col + rows_ * depth : nullptr;
    // Chunks are independent here: handed out dynamically (see forward).
    const index_t chunks = (d_.n + chunk - 1) / chunk;
    ops::for_dynamic_nowait(chunks, [&](index_t ch) {
      const index_t c0 = ch * chunk, cn = std::min<index_t>(chunk, d_.n - c0), ld = cn * plane_;
      for (index_t g = 0; g < d_.groups; ++g) {
        const gemm::PackedA<float>& wt = packed[static_cast<std::size_t>(g)];
        if (direct) {
          for (index_t n = c0; n < c0 + cn; ++n) {
            gemm::gemm_packed(Layout::row_major, wt, Trans::no, plane_, 1.0f, dy + (n * d_.k + g * kg_) * plane_, plane_, 0.0f,
                              dx + (n * d_.c + g * cg_) * d_.h * d_.w, plane_);
          }
          continue;
        }
        const float* b = dy + (c0 * d_.k + g * kg_) * plane_;
        index_t ldb = plane_;
        if (cn > 1) {
          for (index_t i = 0; i < cn; ++i)
            for (index_t k = 0; k < kg_; ++k) {
              const float* __restrict src = dy + ((c0 + i) * d_.k + g * kg_ + k) * plane_;
              float* __restrict dst = dyc + k * ld + i * plane_;
              for (index_t p = 0; p < plane_; ++p) dst[p] = src[p];
            }
          b = dyc;
          ldb = ld;
        }
        gemm::gemm_packed(Layout::row_major, wt, Trans::no, ld, 1.0f, b, ldb, 0.0f, col, ld);
        for (index_t i = 0; i < cn; ++i) {
          float* dxg = dx + ((c0 + i) * d_.c + g * cg_) * d_.h * d_.w;
          if (col2im_w8_) {  // reads up to 8 floats past col's end: dyc's space follows
            minibatch_kernels::col2im_w8_avx2(col + i * plane_, ld, cg_, d_.h, d_.w, d_.kh, d_.kw, d_.out_h(), dxg);
            continue;
          }
          std::memset(dxg, 0, sizeof(float) * static_cast<std::size_t>(cg_ * d_.h * d_.w));
          col2im(col + i * plane_, ld, dxg);
        }
      }
    });
  };
  // One thread (fewer images than threads: batch 1): no region at all (run_team).
  // Inside an inactive `parallel if (0)` region the GEMM's own team would be a nested
  // one, which libgomp creates afresh on every call (LeNet conv2 at batch 1, 2
  // threads: 1.9 GFLOP/s vs 37 at 1 thread).
  ops::run_team(nt, body);
}

void MinibatchConv::backward_weights_implicit(const float* x, const float* dy, float* dw, float* dbias,
                                              bool accumulate) {
  const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), d_.n));
  const std::size_t partial_count = static_cast<std::size_t>(d_.k * rows_);  // partial dw^T per thread
  if (implicit_partials_.size() < partial_count * static_cast<std::size_t>(nt)) implicit_partials_ = arch::AlignedBuffer<float>(partial_count * static_cast<std::size_t>(nt));
  const minibatch_kernels::ImplicitBwdWeights g{d_.c, d_.h, d_.w, d_.k, d_.out_h(), d_.out_w(), rows_, tap_offset_.data()};
  float* all = implicit_partials_.data();
  // 8-pixel output rows: blocks of kPackImages images packed into even streams (12:
  // LeNet conv2 3% faster than 8, as fast as 16 with a smaller footprint)
  // (minibatch_kernels::backward_weights_packed_avx2), per thread.
  constexpr index_t kPackImages = 12;
  const bool packed = packed_weights_;
  const index_t oh = d_.out_h();
  const std::size_t pack_x = static_cast<std::size_t>(kPackImages * d_.c * d_.h * 16);
  const std::size_t pack_dy = static_cast<std::size_t>(d_.k * oh * kPackImages * 8);
  float* packs = packed ? scratch(nt, pack_x + pack_dy) : nullptr;
  // The bias gradient's plane sums, each thread over the images it is about to read
  // (their dy then comes to its kernel from L1/L2, not again from memory): LeNet conv1
  // batch 64 on Zen 4.
  float* parts = nullptr;
  if (dbias) {
    bias_parts_.resize(static_cast<std::size_t>(d_.n * d_.k));
    parts = bias_parts_.data();
  }
  ops::run_team(nt, [&] {
    const int t = omp_get_thread_num();
    float* mine = all + partial_count * static_cast<std::size_t>(t);
    std::fill(mine, mine + partial_count, 0.0f);
    index_t n0, n1;
    split(d_.n, t, nt, &n0, &n1);
    if (!packed) {
      const auto kernel = implicit_avx512_ ? minibatch_kernels::backward_weights_implicit_avx512
                                           : minibatch_kernels::backward_weights_implicit_avx2;
      // >= 4 images at a time (LeNet conv1: 180 KiB of dy, in L2), whole kernel blocks.
      const index_t block = minibatch_kernels::implicit_block_images(plane_);
      const index_t step = block * std::max<index_t>(1, 4 / block);
      for (index_t b0 = n0; b0 < n1; b0 += step) {
        const index_t b1 = std::min(n1, b0 + step);
        if (parts) bias_plane_sums(d_, dy, b0, b1, parts);
        kernel(g, x, dy, b0, b1, mine);
      }
    } else {
      float* xb = packs + scratch_stride_ * static_cast<std::size_t>(t);
      float* dyb = xb + pack_x;
      std::vector<std::int64_t> offset(static_cast<std::size_t>(rows_));
      for (index_t b0 = n0; b0 < n1; b0 += kPackImages) {
        const index_t nb = std::min(kPackImages, n1 - b0);
        if (parts) bias_plane_sums(d_, dy, b0, b0 + nb, parts);
        // x [c][iy][n][16]; a row (8 < w <= 16 floats) as two fixed 8-float copies
        // (inlined, unlike a w-float memcpy), the second overlapping the first.
        const index_t tail = d_.w - 8;
        for (index_t c = 0; c < d_.c; ++c)
          for (index_t iy = 0; iy < d_.h; ++iy)
            for (index_t n = 0; n < nb; ++n) {
              float* dst = xb + ((c * d_.h + iy) * nb + n) * 16;
              const float* src = x + (((b0 + n) * d_.c + c) * d_.h + iy) * d_.w;
              std::memcpy(dst, src, sizeof(float) * 8);
              std::memcpy(dst + tail, src + tail, sizeof(float) * 8);
            }
        for (index_t k = 0; k < d_.k; ++k)  // dy [k][oy][n][8]
          for (index_t oy = 0; oy < oh; ++oy)
            for (index_t n = 0; n < nb; ++n)
              std::memcpy(dyb + ((k * oh + oy) * nb + n) * 8, dy + (((b0 + n) * d_.k + k) * oh + oy) * 8, sizeof(float) * 8);
        std::size_t tap = 0;
        for (index_t c = 0; c < d_.c; ++c)
          for (index_t r = 0; r < d_.kh; ++r)
            for (index_t s = 0; s < d_.kw; ++s) offset[tap++] = (c * d_.h + r) * nb * 16 + s;
        (avx512_all_ ? minibatch_kernels::backward_weights_packed_avx512 : minibatch_kernels::backward_weights_packed_avx2)(
            xb, dyb, oh * nb, d_.k, rows_, offset.data(), mine);
      }
    }
    if (nt > 1) {
#pragma omp barrier
    }
    // dw[k][tap] += the partials of thread 0, then of thread 1, ... ([tap][k] each).
    const auto count = static_cast<std::size_t>(d_.k * rows_), taps = static_cast<std::size_t>(rows_);
    const auto channels = static_cast<std::size_t>(d_.k);
    const std::size_t b = count * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
    const std::size_t e = count * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(nt);
    for (std::size_t i = b; i < e; ++i) {
      const std::size_t k = i / taps, tap = i % taps;
      float s = 0.0f;
      for (int u = 0; u < nt; ++u) s += all[partial_count * static_cast<std::size_t>(u) + tap * channels + k];
      dw[i] += s;
    }
    if (t == 0 && parts) bias_gradient_from_sums(d_, parts, dbias, accumulate);
  });
}

void MinibatchConv::backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) {
  if (!accumulate) std::fill(dw, dw + d_.k * rows_, 0.0f);
  // The bias gradient as every other entry sums it (same result whichever entry won).
  if (implicit_weights_) {
    backward_weights_implicit(x, dy, dw, dbias, accumulate);
    return;
  }
  bias_gradient(d_, dy, dbias, accumulate);
  const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), d_.n));
  const index_t depth = chunk_ * plane_;  // GEMM reduction length per chunk
  const std::size_t per = static_cast<std::size_t>((rows_ + kg_) * depth);
  float* cols = scratch(nt, per);
  const std::size_t wcount = static_cast<std::size_t>(d_.k * rows_), partial = wcount;
  if (nt > 1 && partial_.size() < partial * static_cast<std::size_t>(nt - 1)) partial_.resize(partial * static_cast<std::size_t>(nt - 1));
  ops::run_team(nt, [&] {
    const int t = omp_get_thread_num();
    float* col = cols + scratch_stride_ * static_cast<std::size_t>(t);
    float* dyc = col + rows_ * depth;
    // Thread 0 accumulates straight into dw; the others into zeroed partials.
    float* my_dw = t == 0 ? dw : partial_.data() + partial * static_cast<std::size_t>(t - 1);
    if (t > 0) std::fill(my_dw, my_dw + partial, 0.0f);
    index_t n0, n1;
    split(d_.n, t, nt, &n0, &n1);
    for (index_t c0 = n0; c0 < n1; c0 += chunk_) {
      const index_t cn = std::min<index_t>(chunk_, n1 - c0), ld = cn * plane_;
      for (index_t g = 0; g < d_.groups; ++g) {
        for (index_t i = 0; i < cn; ++i) {
          const index_t n = c0 + i;
          im2col(x + (n * d_.c + g * cg_) * d_.h * d_.w, col + i * plane_, ld);
          const float* dyg = dy + (n * d_.k + g * kg_) * plane_;
          for (index_t k = 0; k < kg_; ++k) {
            const float* src = dyg + k * plane_;
            float* __restrict dst = dyc + k * ld + i * plane_;
            for (index_t p = 0; p < plane_; ++p) dst[p] = src[p];
          }
        }
        if (small_kernel_) {
          (avx512_ ? minibatch_kernels::backward_weights_small_avx512 : minibatch_kernels::backward_weights_small_avx2)(
              dyc, col, kg_, rows_, ld, ld, my_dw + g * kg_ * rows_);
        } else {
          gemm::sgemm(Layout::row_major, Trans::no, Trans::yes, kg_, rows_, ld, 1.0f, dyc, ld, col, ld, 1.0f,
                      my_dw + g * kg_ * rows_, rows_);
        }
      }
    }
    if (nt > 1) {
#pragma omp barrier
      // Sum the partials into dw in thread order, split over elements.
      std::size_t b = wcount * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
      std::size_t e = wcount * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(nt);
      for (int u = 1; u < nt; ++u) {
        const float* src = partial_.data() + partial * static_cast<std::size_t>(u - 1);
        for (std::size_t i = b; i < e; ++i) dw[i] += src[i];
      }
    }
  });
}

}  // namespace taihu::dnn::conv

namespace taihu::dnn::conv {
std::unique_ptr<ConvAlgorithm> make_minibatch(const ConvDesc& d) { return std::make_unique<MinibatchConv>(d); }
}  // namespace taihu::dnn::conv
