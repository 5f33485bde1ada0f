// The direct kernels on NCHW data, four entries of the implementation list
// (conv_list.cpp; DirectKernel in conv_algorithm.hpp says which object runs which):
// "direct" (the pixel-vector tiles below), "first_layer" (the few-channel forward
// below), "pointwise" (1x1 stride-1 unpadded: conv_pointwise.hpp's kernel forward and
// backward-weights) and "pointwise_strided" (that kernel forward on a subsampled copy
// of x). Vectorised along output pixels (the way oneDNN's direct kernels are
// register-blocked, but without reordering activations to a blocked layout): nothing
// is packed per call except a zero-padded copy of the input (none for 1x1 stride-1
// unpadded layers, whose backward-weights reads x in place, nor for the pixel-vector
// forward of unpadded stride_w-1 layers with whole 8-pixel slots per row).
//   Input geometry: the padded input of each channel is stored phase-split along the
//     width ([hp][stride_w][wq]: column ix of the padded row goes to phase ix % sw,
//     slot ix / sw), so every kernel tap reads consecutive output pixels from
//     consecutive floats, whatever the stride. 1x1 stride-1 planes are one long row.
//   forward: tiles of 4 output channels x 3 slots of 8 pixels, a slot being 8 pixels
//     of a row and a tile's slots consecutive in the plane, so narrow images waste no
//     lanes beyond their last partial slot per row (direct_kernels_<isa>.cpp); the
//     weights are packed once ([group][4-channel block][channel][tap][4], cached under
//     WeightsHint::unchanged) and the channel reduction is blocked so the packed
//     block stays in L2; work items are (image, group, rows) chunks.
//   first_layer forward, <= 4 input channels per group (strided, or >= 32 output
//     channels per group):
//     vectorised along output channels instead, as oneDNN's first-layer kernel (tiles
//     of 32 channels x 3 pixels of the plane, the input broadcast from an unsplit
//     padded copy so each kernel row is one unrolled run of kw taps, any stride at the
//     same cost) into a per-thread channel-blocked scratch of 192 pixels, which 8x8
//     register transposes then store to NCHW (+ bias) with full-vector stores.
//   backward-weights: dW = dY X^T with dY transposed (dY^T[pixel][k], vectors of 8
//     output channels; chunk by chunk into a per-thread buffer that stays in cache
//     where a thread owns whole chunks) and the input broadcast from the padded copy
//     (16 channels x 6 weight columns per tile; AVX-512 64), reduced over chunks of
//     ~256 pixels (first layers on the AVX-512 tile 512; images x rows), the next
//     chunk's dY prefetched during each chunk's tiles; threads own disjoint dw tiles or
//     reduction ranges.
//     Widening 1x1 stride-1 layers run the exchanged problem (x and dY swapped, dW^T):
//     the smaller operand is the one transposed.
//   backward-data (stride 1): the forward pass of the transposed problem on the same
//     entry's kernel.
#include <algorithm>
#include <cstring>
#include <memory>
#include <omp.h>
#include <vector>

#include "conv_algorithm.hpp"
#include "core/parallel.hpp"
#include "conv_pointwise.hpp"
#include "direct_kernels.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/dispatch.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::dnn::conv {

namespace {

constexpr index_t kFwdRows = kDirectRows, kFwdSlots = kDirectSlots;  // forward tile
constexpr index_t kBwdCols = 6;  // backward-weights tile columns

struct DirectKernels {
  DirectFwdKernel fwd;
  DirectBwdwKernel bwdw;
  TransposeKernel transpose;
  DirectOcvKernel ocv;
  DirectOcvStoreKernel ocv_store;
  index_t bwdw_channels;  // backward-weights tile channels
  index_t bwdw_kalign;    // dY^T rows padded to a multiple of this
};

// Input channels per group up to which forward passes vectorise along output channels
// (first layers). Strided: the phase-split input cuts the pixel-vector tile's taps into
// runs of 2-4; it measured 0.70x oneDNN on ResNet-50 conv1 and AlexNet conv1 against
// 0.85-0.96x for this path. Stride 1: this path when whole 32-channel tiles fill
// (CIFAR-10 conv1, 3 -> 32: median 0.74x vs 0.53x), the pixel-vector tile for fewer
// output channels (LeNet conv1, 1 -> 20: 1.0x vs 0.7-0.9x: 25 taps per output leave
// the transposed store too large a share).
constexpr index_t kOcvMaxChannels = 4, kOcvMinStride1Channels = 32;
// See direct_first_layer_nchw8c.
constexpr index_t kOcvMinStride1ChannelsNchw8cAvx2 = 16, kOcvMinBatchNchw8cAvx2 = 32;

constexpr index_t kOcvChunkStep = 24;  // pixel chunks of the few-channel forward: multiples of this

const DirectKernels& kernels() {
  static const arch::ImplementationList<DirectKernels> list(
      "direct conv kernels",
      {{"avx512_ocv32x12_bwdw64x6", arch::Isa::avx512, {&direct_fwd_avx2, &direct_bwdw_avx512, &transpose_avx2, &direct_ocv_avx512, &direct_ocv_store_avx2, kDirectBwdwChannelsWide, 16}},
       {"avx2_4x24_16x6", arch::Isa::avx2, {&direct_fwd_avx2, &direct_bwdw_avx2, &transpose_avx2, &direct_ocv_avx2, &direct_ocv_store_avx2, 16, 8}},
       {"generic", arch::Isa::generic,
        {&direct_fwd_generic, &direct_bwdw_generic, &transpose_generic, &direct_ocv_generic,
         &direct_ocv_store_generic, 16, 8}}});
  return list.chosen().impl;
}

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

bool strided_pointwise(const ConvDesc& d) {
  return d.kh == 1 && d.kw == 1 && d.pad_h == 0 && d.pad_w == 0 && (d.stride_h > 1 || d.stride_w > 1);
}

// Where the kernels find the input: in place (1x1, stride 1, no padding) or in the
// phase-split padded copy.
struct InputGeometry {
  bool in_place = false;
  index_t oh = 1, ow = 1;         // output rows x pixels per row as the kernels see them
  index_t chan_stride = 0;        // floats per input channel
  index_t row_step = 0;           // input floats per output row
  index_t hp = 0, sw = 1, wq = 0; // padded copy: [hp][sw][wq] per channel
  std::vector<index_t> tap_off;   // per kernel tap (r, s)
  // The forward kernel's tap order: taps sorted by offset within each kernel row and
  // grouped into runs of consecutive offsets (a row at stride 1, a width phase of it
  // at larger strides); fwd_tap[i] is the (r, s) tap at position i.
  std::vector<index_t> fwd_tap, fwd_tap_off;
  std::vector<std::int32_t> run_len;
};

void make_runs(const ConvDesc& d, InputGeometry& g) {
  const index_t kw = d.kw;
  for (index_t r = 0; r < d.kh; ++r) {
    std::vector<index_t> row(static_cast<std::size_t>(kw));
    for (index_t s = 0; s < kw; ++s) row[static_cast<std::size_t>(s)] = r * kw + s;
    std::stable_sort(row.begin(), row.end(), [&](index_t a, index_t b) {
      return g.tap_off[static_cast<std::size_t>(a)] < g.tap_off[static_cast<std::size_t>(b)];
    });
    for (const index_t t : row) {
      const index_t off = g.tap_off[static_cast<std::size_t>(t)];
      if (!g.fwd_tap_off.empty() && g.fwd_tap_off.back() + 1 == off && !g.run_len.empty() &&
          static_cast<index_t>(g.fwd_tap.size()) > r * kw)
        ++g.run_len.back();
      else
        g.run_len.push_back(1);
      g.fwd_tap.push_back(t);
      g.fwd_tap_off.push_back(off);
    }
  }
}

// split_phases: false keeps each padded row whole ([hp][wp]: output pixels are
// stride_w floats apart; the few-channel forward broadcasts them, so every kernel row
// is one run of kw taps).
InputGeometry make_geometry(const ConvDesc& d, bool split_phases = true) {
  InputGeometry g;
  g.in_place = d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 && d.pad_w == 0 &&
               split_phases;
  if (g.in_place) {
    g.ow = d.h * d.w;
    g.chan_stride = d.h * d.w;
    g.tap_off = {0};
    make_runs(d, g);
    return g;
  }
  g.oh = d.out_h();
  g.ow = d.out_w();
  g.sw = split_phases ? d.stride_w : 1;
  g.hp = d.h + 2 * d.pad_h;
  g.wq = ceil_div(d.w + 2 * d.pad_w, g.sw);
  const index_t row = g.sw * g.wq;
  g.chan_stride = g.hp * row;
  g.row_step = d.stride_h * row;
  for (index_t r = 0; r < d.kh; ++r)
    for (index_t s = 0; s < d.kw; ++s) {
      const index_t col = s * d.dil_w;
      g.tap_off.push_back(r * d.dil_h * row + (col % g.sw) * g.wq + col / g.sw);
    }
  make_runs(d, g);
  return g;
}

// Padded rows [r0, r1) of one channel plane of x into its padded, phase-split copy.
void fill_plane(const ConvDesc& d, const InputGeometry& g, const float* x, float* dst, index_t r0, index_t r1) {
  const index_t row = g.sw * g.wq;
  for (index_t iyp = r0; iyp < r1; ++iyp) {
    float* out = dst + iyp * row;
    const index_t iy = iyp - d.pad_h;
    if (iy < 0 || iy >= d.h) {
      std::memset(out, 0, sizeof(float) * row);
      continue;
    }
    const float* src = x + iy * d.w;
    if (g.sw == 1) {
      std::memset(out, 0, sizeof(float) * d.pad_w);
      std::memcpy(out + d.pad_w, src, sizeof(float) * d.w);
      std::memset(out + d.pad_w + d.w, 0, sizeof(float) * (row - d.pad_w - d.w));
      continue;
    }
    // Phase by phase (no division per element: the first layers' backward-weights
    // spent ~10% of their time here with ixp % sw, ixp / sw).
    for (index_t ph = 0; ph < g.sw; ++ph) {
      float* o = out + ph * g.wq;
      for (index_t q = 0, ix = ph - d.pad_w; q < g.wq; ++q, ix += g.sw) o[q] = (ix >= 0 && ix < d.w) ? src[ix] : 0.0f;
    }
  }
}

// Backward-data runs the forward pass of the transposed problem on the same kernel.
std::unique_ptr<ConvAlgorithm> make_pixel(const ConvDesc& d);
std::unique_ptr<ConvAlgorithm> make_pointwise_kernel(const ConvDesc& d);
std::unique_ptr<ConvAlgorithm> make_first_layer(const ConvDesc& d);
MakeFn transposed_maker(DirectKernel kernel) {
  switch (kernel) {
    case DirectKernel::pointwise: return make_pointwise_kernel;
    case DirectKernel::first_layer: return make_first_layer;
    default: return make_pixel;
  }
}

class Direct final : public ConvAlgorithm {
 public:
  // y_nchw8c: forward writes y, backward-weights reads dy, in nChw8c (first layers
  // only, groups 1).
  Direct(const ConvDesc& d, DirectKernel kernel, bool y_nchw8c = false)
      : d_(d), kg_(d.k / d.groups), cg_(d.c / d.groups), taps_(d.kh * d.kw), kernel_(kernel), y_nchw8c_(y_nchw8c),
        geo_(make_geometry(d)), bwd_data_(d, transposed_maker(kernel)) {
    // Channels per reduction block: one group's packed block <= 192 KiB (L2), and one
    // tile's input windows (3 slots x kh rows x ~a slot's span of lines) <= 16 KiB (L1).
    const index_t per_channel = ceil_div(kg_, kFwdRows) * kFwdRows * taps_;
    const index_t span = 8 * d.stride_w + (d.kw - 1) * d.dil_w + 16;
    const index_t l1_channel = kFwdSlots * d.kh * span;
    const index_t cap = std::min(48 * 1024 / per_channel, 4 * 1024 / l1_channel);
    const index_t blocks = ceil_div(cg_, std::clamp<index_t>(cap, 1, cg_));
    cblock_ = ceil_div(cg_, blocks);
    spr_ = ceil_div(geo_.ow, 8);
    // Unpadded with stride_w 1, the padded copy holds x unchanged ([h][w] per channel,
    // channels and images consecutive); with whole 8-pixel slots no lane reads past a
    // row's last tap, so the forward tiles read x in place: no copy pass, no barrier
    // behind it (LeNet conv1 batch 64, Zen 4 interleaved A/B: +3% at 1 thread, +7-8%
    // at 2).
    fwd_in_place_ = !geo_.in_place && d.pad_h == 0 && d.pad_w == 0 && geo_.sw == 1 && geo_.ow % 8 == 0 &&
                    geo_.chan_stride == d.h * d.w && geo_.row_step == d.stride_h * d.w;
    if (kernel == DirectKernel::pointwise) pointwise_ = std::make_unique<PointwiseConv>(d);
    if (kernel == DirectKernel::pointwise_strided) {
      // Strided 1x1: the pointwise kernel on the subsampled input (stride-1 problem on
      // the output's plane).
      ConvDesc sub = d;
      sub.h = d.out_h();
      sub.w = d.out_w();
      sub.stride_h = sub.stride_w = 1;
      pointwise_ = std::make_unique<PointwiseConv>(sub);
    }
  }

  void forward(const float* x, const float* w, const float* bias, float* y, WeightsHint hint) override {
    forward_fused(x, w, bias, y, hint, {});
  }

  // Every kernel applies the post-ops as it stores (the last reduction block's ReLU);
  // the nChw8c first-layer output: ReLU in a pass over each finished chunk, no sum
  // (conv_list.cpp's first_layer_fuses).
  void forward_fused(const float* x, const float* w, const float* bias, float* y, WeightsHint hint,
                     const ConvPostOps& post) override {
    if (pointwise_) {
      pointwise_->forward(kernel_ == DirectKernel::pointwise_strided ? subsample(x) : x, w, bias, y, hint, post);
      return;
    }
    if (kernel_ == DirectKernel::first_layer) {
      if (y_nchw8c_ && post.sum) throw Error("taihu: conv: first_layer's nChw8c output does not fuse a sum");
      forward_ocv(x, w, bias, y, hint, post);
      return;
    }
    if (hint == WeightsHint::changed || wpack_.empty()) pack_weights(w);
    const int nt = arch::threads_for_call();
    const DirectFwdKernel kernel = kernels().fwd;
    const index_t kblocks = ceil_div(kg_, kFwdRows), plane = d_.out_h() * d_.out_w();
    // The output planes as 8-pixel slots (row by row, the last of a row partial, image
    // after image); work items are (group, run of slots), tiles are 3 consecutive
    // slots, so small images (CIFAR 8x8: one slot per row) still fill every tile.
    // (1x1 stride-1 layers, which would read x in place, run the pointwise kernel.)
    const index_t slots = geo_.oh * spr_;
    const index_t runs_per_group = 1, run_slots = d_.n * slots;
    index_t chunk = 8 * kFwdSlots;
    while (chunk > kFwdSlots && d_.groups * runs_per_group * ceil_div(run_slots, chunk) < 4 * nt) chunk -= kFwdSlots;
    const index_t chunks = ceil_div(run_slots, chunk);
    // Too few slot chunks for the team even at one tile each (LeNet conv2 at batch 1:
    // 8 slots, 3 chunks of 3 / 3 / 2 for 2 threads, so one thread ran 5-6 of the 8):
    // the output channels' 4-row blocks are split too, into kparts ranges, so the items
    // are about 4 per thread and of even size.
    const index_t base_items = d_.groups * runs_per_group * chunks;
    const index_t kparts = nt > 1 && base_items < 4 * nt ? std::min(kblocks, ceil_div(4 * nt, base_items)) : 1;
    const index_t items = base_items * kparts;
    const index_t x_image = d_.c * geo_.chan_stride, y_image = d_.k * plane;
    if (!fwd_in_place_) prepare_buffer();
    ops::run_team(nt, [&] {
      const float* xin = fwd_in_place_ ? x : fill_input(x);
      // Dynamic: a thread that loses its core to another process does not hold the
      // whole call back (items are coarse, >= 4 per thread).
      ops::for_dynamic(items, [&](index_t it) {
        const index_t kp = it % kparts, bit = it / kparts;
        const index_t ch = bit % chunks, run = (bit / chunks) % runs_per_group, g = bit / (chunks * runs_per_group);
        index_t kb_lo, kb_hi;  // this item's 4-channel blocks
        split_range(kblocks, static_cast<int>(kp), static_cast<int>(kparts), kb_lo, kb_hi);
        // Slots [s_lo, s1) of this run; in image-major numbering n * slots + slot.
        const index_t s_lo = run * slots + ch * chunk, s1 = run * slots + std::min(run_slots, (ch + 1) * chunk);
        const index_t n = s_lo / slots;
        const float* xitem = xin + (n * d_.c + g * cg_) * geo_.chan_stride;
        const index_t cstride = geo_.chan_stride;
        for (index_t c0 = 0; c0 < cg_; c0 += cblock_) {
          DirectFwdArgs a{};
          a.x = xitem + c0 * cstride;
          a.channels = std::min(cblock_, cg_ - c0);
          a.chan_stride = cstride;
          a.tap_off = geo_.fwd_tap_off.data();
          a.taps = taps_;
          a.run_len = geo_.run_len.data();
          a.runs = static_cast<int>(geo_.run_len.size());
          a.y_kstride = plane;
          a.w_kblock = cg_ * taps_ * kFwdRows;
          a.y_kblock = kFwdRows * plane;
          a.accumulate = c0 > 0 || post.sum;
          a.relu = post.relu && c0 + cblock_ >= cg_;  // once the reduction is complete
          // The slots' positions by a cursor stepped slot by slot (image, row, slot in
          // the row), not by four divisions per slot (perf: the driver was 6.7% of LeNet
          // conv1 batch 64's time; Zen 4 interleaved A/B at 1 thread 75.1 / 73.8 -> 76.8 /
          // 74.8 GFLOP/s best).
          index_t cur_n = 0, cur_y = (s_lo % slots) / spr_, cur_s = (s_lo % slots) % spr_;
          for (index_t s0 = s_lo; s0 < s1; s0 += kFwdSlots) {
            a.slots = static_cast<int>(std::min<index_t>(kFwdSlots, s1 - s0));
            for (int v = 0; v < a.slots; ++v) {
              const index_t ox = cur_s * 8;
              a.x_off[v] = cur_n * x_image + cur_y * geo_.row_step + ox;
              a.y_off[v] = cur_n * y_image + cur_y * geo_.ow + ox;
              a.lanes[v] = static_cast<int>(std::min<index_t>(8, geo_.ow - ox));
              if (++cur_s == spr_) {
                cur_s = 0;
                if (++cur_y == geo_.oh) cur_y = 0, ++cur_n;
              }
            }
            // Full 4-channel blocks in one call, then the partial block.
            for (index_t kb = kb_lo; kb < kb_hi;) {
              const index_t k0 = g * kg_ + kb * kFwdRows;
              a.rows = static_cast<int>(std::min(kFwdRows, kg_ - kb * kFwdRows));
              a.kblocks = a.rows == kFwdRows ? static_cast<int>(std::min(kg_ / kFwdRows, kb_hi) - kb) : 1;
              a.w = wpack_.data() + ((g * kblocks + kb) * cg_ + c0) * taps_ * kFwdRows;
              a.bias = bias && c0 == 0 ? bias + k0 : nullptr;
              a.y = y + (n * d_.k + k0) * plane;
              kernel(a);
              kb += a.kblocks;
            }
          }
        }
      });
    });
  }

  void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) override {
    bwd_data_.run(dy, w, dx, hint);
  }

  void backward_weights(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) override {
    // Widening 1x1 (ResNet-50 64 -> 256, 1 thread: 57-71 GFLOP/s against 45 on this
    // problem as it is; `automatic` prefers GEMM on the tensors there, 71-77).
    if (kernel_ != DirectKernel::pointwise && pointwise_shape(d_) && kg_ > cg_) {
      backward_weights_swapped(x, dy, dw, dbias, accumulate);
      return;
    }
    // The pointwise entry: dW = dY X^T on the pointwise tile (its profitable() says
    // where that wins, conv_list.cpp).
    if (kernel_ == DirectKernel::pointwise) {
      pointwise_->backward_weights(x, dy, dw, dbias, accumulate);
      return;
    }
    const index_t cols = cg_ * taps_, wsize = d_.k * cols;
    if (!accumulate) std::fill(dw, dw + wsize, 0.0f);
    if (col_off_.empty())
      for (index_t c = 0; c < cg_; ++c)
        for (index_t t = 0; t < taps_; ++t) col_off_.push_back(c * geo_.chan_stride + geo_.tap_off[static_cast<std::size_t>(t)]);
    const int nt = arch::threads_for_call();
    const DirectBwdwKernel kernel = kernels().bwdw;
    const TransposeKernel transpose = kernels().transpose;
    const index_t bwd_channels = kernels().bwdw_channels, kalign = kernels().bwdw_kalign;
    const index_t plane = d_.out_h() * d_.out_w(), kpad = ceil_div(kg_, kalign) * kalign;
    const index_t col_groups = ceil_div(cols, kBwdCols), k_groups = ceil_div(kg_, bwd_channels);
    const index_t units = d_.groups * k_groups * col_groups;
    // Reduction chunks (images x rows x pixels) of about 256 pixels: a 16-channel
    // slice of dY^T's chunk (64 B per pixel) stays in L1 while the column tiles sweep it
    // (AVX-512's 64-channel slice, 64 KiB, in L2).
    // First layers on the wide (AVX-512) tile (<= 4 input channels: 3-4 x 49-121
    // columns, so ~25-60 tile calls per chunk) take 512: each call's dw update through a
    // small buffer was ~5% of the tile's time at 256 (ResNet-50 conv1 86.5 -> 91.7
    // GFLOP/s, AlexNet conv1 93.6 -> 97.7 on a Zen 4 core; 1024 no better). AVX2's
    // 16-channel tile was not measured there and keeps 256.
    const index_t budget_px = cg_ <= 4 && kernels().bwdw_channels > 16 ? 512 : 256;
    index_t images = 1, rows = geo_.oh, pixels = geo_.ow;
    if (geo_.in_place)
      pixels = std::min(geo_.ow, budget_px);
    else if (plane <= budget_px)
      images = std::clamp<index_t>(budget_px / plane, 1, d_.n);
    else
      rows = std::clamp<index_t>(budget_px / geo_.ow, 1, geo_.oh);
    const index_t row_chunks = ceil_div(geo_.oh, rows), px_chunks = ceil_div(geo_.ow, pixels);
    const index_t chunks = ceil_div(d_.n, images) * row_chunks * px_chunks;
    // 2+ threads split the reduction when there are chunks enough and dw is small
    // (first layers, LeNet): 4 chunk ranges per thread, scheduled dynamically, each
    // into its own partial dw, summed in range order (deterministic). A fixed half of
    // the dw tiles per thread measured 2x slower at 2 threads than at 1 on CIFAR-10
    // conv1 when another process shared one core: the stalled thread holds the call.
    const index_t parts = std::min<index_t>(chunks, 4 * nt);
    const bool by_chunk = nt > 1 && chunks >= 2 * nt && parts * wsize <= (index_t{1} << 20);
    if (by_chunk && dw_part_.size() < static_cast<std::size_t>(parts * wsize))
      dw_part_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(parts * wsize));
    // At batch, where each thread owns whole chunks of one image each, every thread pads
    // the image of its chunk into a buffer of its own just before its tiles read it (as
    // the first-layer forward does), instead of all threads padding the whole batch
    // behind a barrier first (Zen 4 interleaved A/B, best GFLOP/s: CIFAR-10 conv1 at 2
    // threads 175.7 / 177.7 / 151.9 -> 181.1 / 182.3 / 155.8, 1 thread level; AlexNet
    // conv1 batch 32 89.9 -> 92.4 at 1 thread, 169.5 -> 173.3 at 2). One image is still
    // padded once, by all threads.
    const bool pad_per_image = (nt == 1 || by_chunk) && !geo_.in_place && images == 1 && d_.n >= 2 * nt;
    const index_t pad_floats = d_.c * geo_.chan_stride + geo_.row_step + 64;
    if (pad_per_image && xpad_bwdw_.size() < static_cast<std::size_t>(nt * pad_floats)) {
      xpad_bwdw_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(nt * pad_floats));
      std::fill(xpad_bwdw_.data(), xpad_bwdw_.data() + xpad_bwdw_.size(), 0.0f);
    }
    if (!pad_per_image) prepare_buffer();
    // dY^T: where each thread owns whole chunks (one thread, or the split reduction),
    // each chunk's slice is transposed just before its tiles read it, into a per-thread
    // buffer that stays in cache ([image][group][chunk pixel][kpad]); dY is then read
    // once instead of also written and re-read as a whole transposed copy (CIFAR-10
    // conv1 at batch 64: 8 MiB each way). Otherwise (threads sharing every chunk) all
    // of dY^T is transposed first ([n][g][pixel][kpad]).
    const bool local = nt == 1 || by_chunk;
    const index_t chunk_px = rows * pixels;  // a chunk's pixels per (image, group)
    const index_t local_floats = images * d_.groups * chunk_px * kpad;
    const auto dyt_size = static_cast<std::size_t>(local ? nt * local_floats : d_.n * d_.groups * plane * kpad);
    if (dyt_.size() < dyt_size) {
      dyt_ = arch::AlignedBuffer<float>(dyt_size);
      std::fill(dyt_.data(), dyt_.data() + dyt_size, 0.0f);  // channels kg..kpad stay zero
    }
    // dbias from each chunk's dY^T while it is in cache (per reduction part, summed in
    // part order: deterministic), instead of another pass over dY from memory (CIFAR-10
    // conv1 at batch 64: 8 MiB).
    const bool fuse_bias = dbias != nullptr && local;
    const index_t bias_parts = by_chunk ? parts : 1;
    if (fuse_bias) db_part_.assign(static_cast<std::size_t>(bias_parts * d_.k), 0.0);
    ops::run_team(nt, [&] {
      const float* xin = pad_per_image ? nullptr : fill_input(x);
      float* const padded = pad_per_image ? xpad_bwdw_.data() + omp_get_thread_num() * pad_floats : nullptr;
      index_t padded_n = -1;  // the image in `padded`
      float* dyt_local = dyt_.data() + (local ? omp_get_thread_num() * local_floats : 0);
      std::vector<float> bsum(static_cast<std::size_t>(fuse_bias ? kpad : 0));
      if (!local) {
#pragma omp for schedule(static)
        for (index_t ng = 0; ng < d_.n * d_.groups; ++ng)
          dyt_rows(dy, ng, 0, plane, dyt_.data() + ng * plane * kpad, kpad, transpose);
      }
      DirectBwdwArgs a{};
      a.kpad = kpad;
      a.x_image_stride = d_.c * geo_.chan_stride;
      a.x_row_stride = geo_.row_step;
      a.dyt_image_stride = (local ? chunk_px : plane) * d_.groups * kpad;
      a.dyt_row_stride = geo_.ow * kpad;
      a.dw_kstride = cols;
      // The dY lines of chunk ci (what dyt_rows reads for it), spread over the units of
      // the chunk before it: pulled into L2 while that chunk's tiles run, so the gather
      // does not wait on memory (it was a separate memory-bound phase per chunk).
      struct DyPrefetch {
        const float* base = nullptr;  // segment 0's first float
        index_t segs = 0, seg_lines = 0, per_ng = 0, seg_stride = 0, ng_stride = 0;
        index_t next = 0, total = 0;  // lines issued so far, lines in all
        const float *ng_base = nullptr, *seg = nullptr;  // where line `next` lies
        index_t in_ng = 0, line = 0;
      } pf;
      auto prefetch_start = [&](index_t ci) {
        pf.total = pf.next = 0;
        if (!local || ci < 0 || ci >= chunks) return;
        const index_t n0 = ci / (row_chunks * px_chunks) * images;
        const index_t oy0 = ci / px_chunks % row_chunks * rows, x0 = ci % px_chunks * pixels;
        const index_t imgs = std::min(images, d_.n - n0), rws = std::min(rows, geo_.oh - oy0);
        const index_t count = (rws - 1) * geo_.ow + std::min(geo_.ow, x0 + pixels) - x0, p0 = oy0 * geo_.ow + x0;
        pf.per_ng = y_nchw8c_ ? ceil_div(kg_, 8) : kg_;  // contiguous segments per (image, group)
        pf.seg_stride = y_nchw8c_ ? plane * 8 : plane;
        pf.ng_stride = pf.per_ng * pf.seg_stride;
        pf.seg_lines = ceil_div(y_nchw8c_ ? count * 8 : count, 16) + 1;  // + 1: unaligned starts
        pf.segs = imgs * d_.groups * pf.per_ng;
        pf.base = dy + n0 * d_.groups * pf.ng_stride + (y_nchw8c_ ? p0 * 8 : p0);
        pf.total = pf.segs * pf.seg_lines;
        pf.ng_base = pf.seg = pf.base;
        pf.in_ng = pf.line = 0;
      };
      auto prefetch_step = [&](index_t u, index_t count_units) {
        const index_t until = pf.total * (u + 1) / count_units;
        for (; pf.next < until; ++pf.next) {  // (no division per line: this runs between tiles)
          __builtin_prefetch(pf.seg + pf.line * 16, 0, 2);
          if (++pf.line == pf.seg_lines) {
            pf.line = 0;
            if (++pf.in_ng == pf.per_ng) {
              pf.in_ng = 0;
              pf.ng_base += pf.ng_stride;
            }
            pf.seg = pf.ng_base + pf.in_ng * pf.seg_stride;
          }
        }
      };
      // Reduction chunk ci, units [u0, u1) into dw_out; next: the chunk whose dY to
      // prefetch meanwhile (or -1).
      auto run_chunk = [&](index_t ci, index_t u0, index_t u1, float* dw_out, double* db_out, index_t next) {
        const index_t n0 = ci / (row_chunks * px_chunks) * images;
        const index_t oy0 = ci / px_chunks % row_chunks * rows, x0 = ci % px_chunks * pixels;
        a.images = std::min(images, d_.n - n0);
        a.rows = std::min(rows, geo_.oh - oy0);
        a.run = std::min(geo_.ow, x0 + pixels) - x0;
        prefetch_start(next);
        if (pad_per_image && padded_n != n0) {
          for (index_t c = 0; c < d_.c; ++c)
            fill_plane(d_, geo_, x + (n0 * d_.c + c) * d_.h * d_.w, padded + c * geo_.chan_stride, 0, geo_.hp);
          padded_n = n0;
        }
        if (local)  // the chunk's slice of each (image, group): rows x run pixels from oy0, x0
          for (index_t i = 0; i < a.images; ++i)
            for (index_t gi = 0; gi < d_.groups; ++gi) {
              const index_t count = (a.rows - 1) * geo_.ow + a.run;
              float* slice = dyt_local + (i * d_.groups + gi) * chunk_px * kpad;
              // nChw8c: the bias sums taken during the gather (the same order of additions
              // as the loop below, so the same bits; one pass over the slice instead of two).
              const bool sums_fused = db_out && y_nchw8c_;
              if (sums_fused) std::fill(bsum.begin(), bsum.end(), 0.0f);
              dyt_rows(dy, (n0 + i) * d_.groups + gi, oy0 * geo_.ow + x0, count, slice, kpad, transpose,
                       sums_fused ? bsum.data() : nullptr);
              if (sums_fused) {
                for (index_t k = 0; k < kg_; ++k) db_out[gi * kg_ + k] += bsum[static_cast<std::size_t>(k)];
              } else if (db_out) {
                std::fill(bsum.begin(), bsum.end(), 0.0f);
                for (index_t px = 0; px < count; ++px) {
                  const float* row = slice + px * kpad;
                  for (index_t k = 0; k < kpad; ++k) bsum[static_cast<std::size_t>(k)] += row[k];
                }
                for (index_t k = 0; k < kg_; ++k) db_out[gi * kg_ + k] += bsum[static_cast<std::size_t>(k)];
              }
            }
        // Units (group, channel tile, column tile), channel tile outer: its dY^T
        // slice stays in L1 while the columns sweep it.
        for (index_t u = u0; u < u1; ++u) {
          const index_t gi = u / (k_groups * col_groups), kt = (u / col_groups) % k_groups;
          const index_t k0 = kt * bwd_channels, j0 = (u % col_groups) * kBwdCols;
          a.channels = static_cast<int>(std::min(bwd_channels, kg_ - k0));
          a.dyt = local ? dyt_local + gi * chunk_px * kpad + k0
                        : dyt_.data() + ((n0 * d_.groups + gi) * plane + oy0 * geo_.ow + x0) * kpad + k0;
          a.cols = static_cast<int>(std::min(kBwdCols, cols - j0));
          a.col_off = col_off_.data() + j0;
          a.x = (pad_per_image ? padded + gi * cg_ * geo_.chan_stride : xin + (n0 * d_.c + gi * cg_) * geo_.chan_stride) +
                oy0 * geo_.row_step + x0;
          a.dw = dw_out + (gi * kg_ + k0) * cols + j0;
          kernel(a);
          if (pf.total > 0) prefetch_step(u - u0, u1 - u0);
        }
      };
      const int t = omp_get_thread_num(), tn = omp_get_num_threads();
      if (by_chunk) {
        ops::for_dynamic(parts, [&](index_t part) {
          float* out = dw_part_.data() + static_cast<std::size_t>(part * wsize);
          std::fill(out, out + wsize, 0.0f);
          index_t c0, c1;
          split_range(chunks, static_cast<int>(part), static_cast<int>(parts), c0, c1);
          for (index_t ci = c0; ci < c1; ++ci)
            run_chunk(ci, 0, units, out, fuse_bias ? db_part_.data() + part * d_.k : nullptr, ci + 1 < c1 ? ci + 1 : -1);
        });
#pragma omp for schedule(static)
        for (index_t i = 0; i < wsize; ++i) {
          float sum = 0.0f;
          for (index_t part = 0; part < parts; ++part) sum += dw_part_.data()[static_cast<std::size_t>(part * wsize + i)];
          dw[i] += sum;
        }
      } else {
        // Threads own disjoint unit ranges (dw tiles) and sweep every chunk.
        index_t u0, u1;
        split_range(units, t, tn, u0, u1);
        for (index_t ci = 0; ci < chunks; ++ci) run_chunk(ci, u0, u1, dw, fuse_bias ? db_part_.data() : nullptr, ci + 1);
      }
    });
    if (!fuse_bias) {
      if (y_nchw8c_)
        bias_gradient_nchw8c(dy, dbias, accumulate);
      else
        bias_gradient(d_, dy, dbias, accumulate);
      return;
    }
    for (index_t k = 0; k < d_.k; ++k) {
      double s = 0;
      for (index_t part = 0; part < bias_parts; ++part) s += db_part_[static_cast<std::size_t>(part * d_.k + k)];
      dbias[k] = accumulate ? dbias[k] + static_cast<float>(s) : static_cast<float>(s);
    }
  }

 private:
  // Few input channels: tiles of up to 32 output channels x a few pixels of the plane,
  // vectorised along the output channels (DirectOcvArgs) into a per-thread
  // channel-blocked scratch, transposed to NCHW per chunk of pixels; work items are
  // (image, group, chunk of the plane's pixels).
  void forward_ocv(const float* x, const float* w, const float* bias, float* y, WeightsHint hint,
                   const ConvPostOps& post) {
    if (geo_ocv_.tap_off.empty()) geo_ocv_ = make_geometry(d_, false);
    const InputGeometry& gq = geo_ocv_;
    const index_t kb8 = ceil_div(kg_, 8), kgroups = ceil_div(kb8, index_t{kOcvMaxBlocks});
    const index_t wgroup = cg_ * taps_ * kOcvMaxBlocks * 8;  // floats per 32-channel group
    if (hint == WeightsHint::changed || wocv_.size() == 0) {
      // [group][32-channel group q][channel][tap][nb(q) * 8], zero lanes past kg; cache-
      // line aligned (a 32-byte load that splits a line costs two).
      const auto wsize = static_cast<std::size_t>(d_.groups * kgroups * wgroup);
      if (wocv_.size() != wsize) wocv_ = arch::AlignedBuffer<float>(wsize);
      std::fill(wocv_.data(), wocv_.data() + wsize, 0.0f);
      for (index_t g = 0; g < d_.groups; ++g)
        for (index_t k = 0; k < kg_; ++k) {
          const index_t q = k / (8 * kOcvMaxBlocks), nb = std::min<index_t>(kOcvMaxBlocks, kb8 - q * kOcvMaxBlocks);
          float* dst = wocv_.data() + (g * kgroups + q) * wgroup + k % (8 * kOcvMaxBlocks);
          for (index_t c = 0; c < cg_; ++c)
            for (index_t t = 0; t < taps_; ++t)
              dst[(c * taps_ + t) * nb * 8] = w[((g * kg_ + k) * cg_ + c) * taps_ + t];
        }
    }
    if (y_nchw8c_ && bias) {
      if (bias8_.size() == 0) bias8_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(kgroups * kOcvMaxBlocks * 8));
      std::fill(bias8_.data(), bias8_.data() + bias8_.size(), 0.0f);
      std::copy(bias, bias + d_.k, bias8_.data());
    }
    const int nt = arch::threads_for_call();
    const DirectOcvKernel kernel = kernels().ocv;
    const DirectOcvStoreKernel store = kernels().ocv_store;
    const index_t plane = gq.oh * gq.ow;
    // Reduction blocks whose packed weights (channels x taps x 32 floats) fit 20 KiB of
    // L1 next to the tile's input rows (AlexNet conv1: one channel's 121 taps per call;
    // ResNet-50 conv1's 3 x 49 taps, 18.4 KiB, in one pass: +2-6% over 2 + 1 channels,
    // whose second pass reloads and restores every accumulator).
    const index_t cblock = std::clamp<index_t>(20 * 1024 / (taps_ * 8 * kOcvMaxBlocks * 4), 1, cg_);
    // Chunks of pixels: multiples of 24 (every tile width and the 8-pixel transpose
    // divide it), up to 192 (measured best of 24-288 on ResNet-50 conv1 and CIFAR-10
    // conv1: the scratch's store runs longer per plane), >= 8 work items per thread.
    index_t chunk = 8 * kOcvChunkStep;
    while (chunk > kOcvChunkStep && d_.n * d_.groups * ceil_div(plane, chunk) < 8 * nt) chunk -= kOcvChunkStep;
    const index_t chunks = ceil_div(plane, chunk), items = d_.n * d_.groups * chunks;
    const index_t scratch_floats = kOcvMaxBlocks * chunk * 8;
    if (ocv_scratch_.size() < static_cast<std::size_t>(nt * scratch_floats))
      ocv_scratch_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(nt * scratch_floats));
    // Unpadded layers (AlexNet conv1) read x in place: the unsplit geometry without
    // padding is x's own layout, and the kernel reads only inside the windows.
    const bool in_place = d_.pad_h == 0 && d_.pad_w == 0;
    // Padded layers at batch (CIFAR-10 conv1 at 64): each thread pads the images of its
    // items into a buffer of its own, just before their tiles read it, so the padded
    // copy stays in cache (a shared copy of the whole batch went out to memory and came
    // back, and every thread waited for the whole batch's copy at a barrier).
    const bool pad_per_item = !in_place && d_.n * d_.groups >= 2 * nt;
    // Fewer images (ResNet-50 conv1 at batch 1): each thread takes a static range of
    // items and pads only the input rows its windows read, into a buffer of its own,
    // item by item just before they are read (no shared copy filled by all threads, no
    // barrier after it, the rows in the thread's own cache when read).
    const bool pad_bands = !in_place && !pad_per_item;
    const bool pad_private = pad_per_item || pad_bands;
    // Threads take whole images (all chunks of an (image, group)) when there are 4+ per
    // thread: each image is then padded by one thread, not by both, and the threads'
    // outputs lie planes apart instead of chunk by chunk side by side (CIFAR-10 conv1,
    // 2 threads: 122-126 -> 140-142 GFLOP/s).
    const index_t grab = pad_per_item && d_.n * d_.groups >= 4 * nt ? chunks : 1;
    const index_t pad_floats = cg_ * gq.chan_stride + gq.row_step + 64;
    if (pad_private && xocv_.size() < static_cast<std::size_t>(nt * pad_floats)) {
      xocv_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(nt * pad_floats));
      std::fill(xocv_.data(), xocv_.data() + xocv_.size(), 0.0f);
    }
    if (!in_place && !pad_private) prepare_buffer(gq, xocv_);
    // Window origins of every chunk's pixels, the same for every image and group (built
    // once per chunk size, not per work item: 3% of CIFAR-10 conv1's time); past a
    // chunk's end (a partial last tile) its last pixel's again (computed, never stored).
    // With them, on padded layers, each origin's kernel rows inside the image (the
    // tiles skip the rows that would read only top or bottom padding).
    const bool row_spans = d_.pad_h > 0 && d_.dil_w == 1 && d_.kh < 32768;
    // And each origin's kernel columns inside the image (the AVX-512 tile's edge groups
    // skip the others).
    const bool col_spans = d_.pad_w > 0 && d_.dil_w == 1 && d_.kw < 32768;
    if (ocv_x_off_chunk_ != chunk) {
      ocv_x_off_.assign(static_cast<std::size_t>(chunks * chunk), 0);
      ocv_row_span_.assign(row_spans ? static_cast<std::size_t>(2 * chunks * chunk) : 0, 0);
      ocv_col_span_.assign(col_spans ? static_cast<std::size_t>(2 * chunks * chunk) : 0, 0);
      for (index_t ch = 0; ch < chunks; ++ch) {
        const index_t p0 = ch * chunk, p1 = std::min(plane, p0 + chunk);
        std::int64_t* xo = ocv_x_off_.data() + p0;
        std::int16_t* span = row_spans ? ocv_row_span_.data() + 2 * p0 : nullptr;
        std::int16_t* cspan = col_spans ? ocv_col_span_.data() + 2 * p0 : nullptr;
        for (index_t px = p0, oy = p0 / gq.ow, ox = p0 % gq.ow; px < p0 + chunk; ++px) {
          const index_t i = px - p0, last = p1 - p0 - 1;
          xo[i] = px < p1 ? oy * gq.row_step + ox * d_.stride_w : xo[last];
          if (span) {
            index_t lo = d_.kh, hi = 0;  // kernel rows whose input row lies inside the image
            for (index_t r = 0; r < d_.kh; ++r) {
              const index_t iy = oy * d_.stride_h + r * d_.dil_h - d_.pad_h;
              if (iy >= 0 && iy < d_.h) lo = std::min(lo, r), hi = r + 1;
            }
            if (lo > hi) lo = hi = 0;  // a window entirely in the padding: no rows
            span[2 * i] = static_cast<std::int16_t>(px < p1 ? lo : span[2 * last]);
            span[2 * i + 1] = static_cast<std::int16_t>(px < p1 ? hi : span[2 * last + 1]);
          }
          if (cspan) {
            index_t lo = d_.kw, hi = 0;  // kernel columns whose input column lies inside the image
            for (index_t s = 0; s < d_.kw; ++s) {
              const index_t ix = ox * d_.stride_w + s * d_.dil_w - d_.pad_w;
              if (ix >= 0 && ix < d_.w) lo = std::min(lo, s), hi = s + 1;
            }
            if (lo > hi) lo = hi = 0;
            cspan[2 * i] = static_cast<std::int16_t>(px < p1 ? lo : cspan[2 * last]);
            cspan[2 * i + 1] = static_cast<std::int16_t>(px < p1 ? hi : cspan[2 * last + 1]);
          }
          if (++ox == gq.ow) ox = 0, ++oy;
        }
      }
      ocv_x_off_chunk_ = chunk;
    }
    ops::run_team(nt, [&] {
      const float* xin = in_place || pad_private ? x : fill_input(x, gq, xocv_);
      float* const padded = pad_private ? xocv_.data() + omp_get_thread_num() * pad_floats : nullptr;
      index_t padded_ng = -1;  // the (image, group) in `padded`
      index_t padded_end = 0;  //   and (pad_bands) the end of its rows filled so far
      float* scratch = ocv_scratch_.data() + omp_get_thread_num() * scratch_floats;
      DirectOcvArgs a{};
      a.chan_stride = gq.chan_stride;
      a.tap_off = gq.tap_off.data();
      a.taps = taps_;
      a.kw_run = d_.dil_w == 1 ? static_cast<int>(d_.kw) : 0;
      a.acc = scratch;
      a.acc_bstride = chunk * 8;
      DirectOcvStoreArgs st{};
      st.acc = scratch;
      st.acc_bstride = chunk * 8;
      st.y_kstride = plane;
      auto item = [&](index_t it) {
        const index_t ch = it % chunks, ng = it / chunks, g = ng % d_.groups, n = ng / d_.groups;
        const index_t p0 = ch * chunk, p1 = std::min(plane, p0 + chunk);
        if (pad_bands) {
          // The padded rows this item's windows read that are not filled yet (the items
          // of a thread run in order, so the rows it has filled are one range).
          const index_t r1 = std::min(gq.hp, (p1 - 1) / gq.ow * d_.stride_h + (d_.kh - 1) * d_.dil_h + 1);
          const index_t r0 = padded_ng == ng ? padded_end : p0 / gq.ow * d_.stride_h;
          for (index_t c = 0; c < cg_ && r0 < r1; ++c)
            fill_plane(d_, gq, x + (n * d_.c + g * cg_ + c) * d_.h * d_.w, padded + c * gq.chan_stride, r0, r1);
          padded_ng = ng;
          padded_end = std::max(r0, r1);
        }
        if (pad_per_item && padded_ng != ng) {
          for (index_t c = 0; c < cg_; ++c)
            fill_plane(d_, gq, x + (n * d_.c + g * cg_ + c) * d_.h * d_.w, padded + c * gq.chan_stride, 0, gq.hp);
          padded_ng = ng;
        }
        a.x_off = ocv_x_off_.data() + p0;
        a.row_span = row_spans ? ocv_row_span_.data() + 2 * p0 : nullptr;
        a.col_span = col_spans ? ocv_col_span_.data() + 2 * p0 : nullptr;
        if (y_nchw8c_) {
          for (index_t q = 0; q < kgroups; ++q)
            forward_ocv_nchw8c(a, kernel, q, kb8, plane, p0, p1, wgroup, cblock,
                               pad_private ? padded : xin + n * d_.c * gq.chan_stride, gq.chan_stride,
                               y + (n * kb8 * plane + p0) * 8, bias ? bias8_.data() : nullptr, scratch,
                               post.relu);
          return;
        }
        for (index_t q = 0; q < kgroups; ++q) {
          a.nb = static_cast<int>(std::min<index_t>(kOcvMaxBlocks, kb8 - q * kOcvMaxBlocks));
          a.tiles = static_cast<int>(ceil_div(p1 - p0, index_t{ocv_pixels(a.nb)}));
          st.nb = a.nb;
          st.rows_last = static_cast<int>(std::min<index_t>(8, kg_ - 8 * (q * kOcvMaxBlocks + a.nb - 1)));
          st.pixels = p1 - p0;
          st.bias = bias ? bias + g * kg_ + q * 8 * kOcvMaxBlocks : nullptr;
          st.y = y + (n * d_.k + g * kg_ + q * 8 * kOcvMaxBlocks) * plane + p0;
          for (index_t c0 = 0; c0 < cg_; c0 += cblock) {
            // The last reduction block's tiles prefetch the lines the store writes (into
            // L2: CIFAR-10 conv1 forward +3-5%, the strided first layers +1-2%).
            const bool last = c0 + cblock >= cg_;
            a.y_prefetch = last ? st.y : nullptr;
            a.y_kstride = plane;
            a.y_rows = static_cast<int>(std::min<index_t>(8 * kOcvMaxBlocks, kg_ - q * 8 * kOcvMaxBlocks));
            a.y_pixels = p1 - p0;
            a.x = pad_private ? padded + c0 * gq.chan_stride : xin + (n * d_.c + g * cg_ + c0) * gq.chan_stride;
            a.channels = std::min(cblock, cg_ - c0);
            a.w = wocv_.data() + (g * kgroups + q) * wgroup + c0 * taps_ * a.nb * 8;
            a.accumulate = c0 > 0;
            kernel(a);
          }
          st.p_begin = 0;
          st.p_end = st.pixels;
          st.accumulate = post.sum;
          st.relu = post.relu;
          store(st);
        }
      };
      if (pad_bands) {
        index_t it0, it1;
        split_range(items, omp_get_thread_num(), omp_get_num_threads(), it0, it1);
        for (index_t it = it0; it < it1; ++it) item(it);
      } else {
        ops::for_dynamic(items, item, grab);
      }
    });
  }

  // dY^T rows: pixels [p0, p0 + count) of (image, group) ng as [pixel][kpad] at dst:
  // transposed from NCHW, or gathered 8 channels at a time from an nChw8c dY (groups 1;
  // its zero lanes past k, and the buffer's zero lanes past its blocks, fill kpad).
  // bsum (nChw8c only; or null): bsum[k] += dY's values of channel k, pixel by pixel.
  void dyt_rows(const float* dy, index_t ng, index_t p0, index_t count, float* dst, index_t kpad,
                TransposeKernel transpose, float* bsum = nullptr) const {
    const index_t plane = d_.out_h() * d_.out_w();
    if (!y_nchw8c_) {
      transpose(dy + ng * kg_ * plane + p0, plane, kg_, count, dst, kpad);
      return;
    }
    const index_t kb = ceil_div(kg_, 8);  // dY's blocks (dY^T's lanes past them stay zero)
    for (index_t b = 0; b < kb; ++b) {
      const float* src = dy + ((ng * kb + b) * plane + p0) * 8;
      if (!bsum) {
        for (index_t px = 0; px < count; ++px) std::memcpy(dst + px * kpad + b * 8, src + px * 8, 8 * sizeof(float));
        continue;
      }
      // Two 4-lane vectors per pixel (GCC vector extension: the scalar form compiled to
      // one addss per value); lane by lane the same additions in the same order.
      using V4 = float __attribute__((vector_size(16)));
      V4 s0{}, s1{};
      for (index_t px = 0; px < count; ++px) {
        V4 lo, hi;
        std::memcpy(&lo, src + px * 8, sizeof lo);
        std::memcpy(&hi, src + px * 8 + 4, sizeof hi);
        std::memcpy(dst + px * kpad + b * 8, &lo, sizeof lo);
        std::memcpy(dst + px * kpad + b * 8 + 4, &hi, sizeof hi);
        s0 += lo;
        s1 += hi;
      }
      for (int j = 0; j < 4; ++j) {
        bsum[b * 8 + j] += s0[j];
        bsum[b * 8 + 4 + j] += s1[j];
      }
    }
  }

  // db (+)= the sums of an nChw8c dY.
  void bias_gradient_nchw8c(const float* dy, float* db, bool accumulate) const {
    if (!db) return;
    const index_t plane = d_.out_h() * d_.out_w(), kb = ceil_div(d_.k, 8);
    for (index_t k = 0; k < d_.k; ++k) {
      double sum = 0;
      for (index_t n = 0; n < d_.n; ++n) {
        const float* src = dy + ((n * kb + k / 8) * plane) * 8 + k % 8;
        for (index_t px = 0; px < plane; ++px) sum += src[px * 8];
      }
      db[k] = accumulate ? db[k] + static_cast<float>(sum) : static_cast<float>(sum);
    }
  }

  // One 32-channel group q of a chunk [p0, p1) written straight into the nChw8c output
  // (yb: the image's output at pixel p0 of block 0): the whole tiles in place, starting
  // from the bias; a partial last tile through the scratch (its extra pixels would land
  // in the next block's plane).
  void forward_ocv_nchw8c(DirectOcvArgs a, DirectOcvKernel kernel, index_t q, index_t kb8, index_t plane, index_t p0,
                          index_t p1, index_t wgroup, index_t cblock, const float* x, index_t chan_stride, float* yb,
                          const float* bias8, float* scratch, bool relu) {
    a.nb = static_cast<int>(std::min<index_t>(kOcvMaxBlocks, kb8 - q * kOcvMaxBlocks));
    const index_t np = ocv_pixels(a.nb), full = (p1 - p0) / np, rest = (p1 - p0) - full * np;
    float* yq = yb + q * kOcvMaxBlocks * plane * 8;
    for (index_t c0 = 0; c0 < cg_; c0 += cblock) {
      a.x = x + c0 * chan_stride;
      a.channels = std::min(cblock, cg_ - c0);
      a.w = wocv_.data() + q * wgroup + c0 * taps_ * a.nb * 8;
      a.accumulate = c0 > 0;
      a.bias_init = c0 == 0 && bias8 ? bias8 + q * kOcvMaxBlocks * 8 : nullptr;
      // The first pass over the chunk pulls the lines it writes into L2 ahead of the tiles.
      a.y_prefetch = c0 == 0 ? yq : nullptr;
      a.y_kstride = plane * 8;
      a.y_rows = a.nb;
      a.y_pixels = full * np * 8;
      if (full > 0) {
        DirectOcvArgs t = a;
        t.acc = yq;
        t.acc_bstride = plane * 8;
        t.tiles = static_cast<int>(full);
        kernel(t);
      }
      if (rest > 0) {
        DirectOcvArgs t = a;
        t.x_off = a.x_off + full * np;
        t.row_span = a.row_span ? a.row_span + 2 * full * np : nullptr;
        t.col_span = a.col_span ? a.col_span + 2 * full * np : nullptr;
        t.acc = scratch;
        t.acc_bstride = np * 8;
        t.tiles = 1;
        t.y_prefetch = nullptr;
        kernel(t);
      }
    }
    if (rest > 0)
      for (index_t b = 0; b < a.nb; ++b)
        std::copy(scratch + b * np * 8, scratch + b * np * 8 + rest * 8, yq + b * plane * 8 + full * np * 8);
    // A fused ReLU over the chunk just written (in cache; the zero lanes past k stay 0).
    if (relu)
      for (index_t b = 0; b < a.nb; ++b) {
        float* yc = yq + b * plane * 8;
        for (index_t i = 0; i < (p1 - p0) * 8; ++i) yc[i] = 0.0f > yc[i] ? 0.0f : yc[i];
      }
  }

  // x at the strided 1x1 layer's sampling points, [n][c][oh][ow] (xsub_).
  const float* subsample(const float* x) {
    const index_t oh = d_.out_h(), ow = d_.out_w(), planes = d_.n * d_.c;
    if (xsub_.size() < static_cast<std::size_t>(planes * oh * ow))
      xsub_ = arch::AlignedBuffer<float>(static_cast<std::size_t>(planes * oh * ow));
    float* out = xsub_.data();
    const int nt = arch::threads_for_call();
    ops::parallel_for_static(nt, planes, [&](index_t p) {
      for (index_t oy = 0; oy < oh; ++oy) {
        const float* src = x + p * d_.h * d_.w + oy * d_.stride_h * d_.w;
        float* dst = out + (p * oh + oy) * ow;
        for (index_t ox = 0; ox < ow; ++ox) dst[ox] = src[ox * d_.stride_w];
      }
    });
    return out;
  }

  // [group][4-channel block][channel][tap in fwd_tap order][4], zero rows past kg.
  void pack_weights(const float* w) {
    const index_t kblocks = ceil_div(kg_, kFwdRows);
    wpack_.assign(static_cast<std::size_t>(d_.groups * kblocks * cg_ * taps_ * kFwdRows), 0.0f);
    for (index_t g = 0; g < d_.groups; ++g)
      for (index_t k = 0; k < kg_; ++k)
        for (index_t c = 0; c < cg_; ++c)
          for (index_t t = 0; t < taps_; ++t)
            wpack_[static_cast<std::size_t>((((g * kblocks + k / kFwdRows) * cg_ + c) * taps_ + t) * kFwdRows +
                                            k % kFwdRows)] =
                  w[((g * kg_ + k) * cg_ + c) * taps_ + geo_.fwd_tap[static_cast<std::size_t>(t)]];
  }

  // Widening 1x1 stride-1 layers (k > c per group, ResNet's 64 -> 256): dW = dY X^T is
  // dW^T = X dY^T, the backward-weights of the narrowing problem with x and dY (and c
  // and k) exchanged: its dY^T operand is then X^T, the smaller one to transpose, and
  // dY is broadcast in place. dW^T is transposed back (k x c per group, small).
  void backward_weights_swapped(const float* x, const float* dy, float* dw, float* dbias, bool accumulate) {
    if (!swapped_) {
      ConvDesc s = d_;
      std::swap(s.c, s.k);
      swapped_ = std::make_unique<Direct>(s, DirectKernel::pixel);
    }
    const auto wsize = static_cast<std::size_t>(d_.k * cg_);
    if (dw_swap_.size() < 2 * wsize) dw_swap_ = arch::AlignedBuffer<float>(2 * wsize);
    float* dwt = dw_swap_.data();
    swapped_->backward_weights(dy, x, dwt, nullptr, false);  // [g][c][k]
    float* out = accumulate ? dwt + wsize : dw;
    const TransposeKernel transpose = kernels().transpose;
    for (index_t g = 0; g < d_.groups; ++g) transpose(dwt + g * cg_ * kg_, kg_, cg_, kg_, out + g * kg_ * cg_, cg_);
    if (accumulate)
      for (std::size_t i = 0; i < wsize; ++i) dw[i] += out[i];
    bias_gradient(d_, dy, dbias, accumulate);
  }

  void prepare_buffer() { prepare_buffer(geo_, xbuf_); }
  void prepare_buffer(const InputGeometry& g, arch::AlignedBuffer<float>& buf) const {
    if (g.in_place) return;
    // Slack after the last plane: a partial slot's unused lanes read (never store)
    // up to a slot past the end of a row.
    const auto need = static_cast<std::size_t>(d_.n * d_.c * g.chan_stride + g.row_step + 64);
    if (buf.size() < need) {
      buf = arch::AlignedBuffer<float>(need);
      std::fill(buf.data(), buf.data() + need, 0.0f);
    }
  }

  // Inside the parallel region: the kernels' view of x (the padded copy is filled by
  // all threads; the omp for's barrier publishes it).
  const float* fill_input(const float* x) { return fill_input(x, geo_, xbuf_); }
  const float* fill_input(const float* x, const InputGeometry& g, arch::AlignedBuffer<float>& buf) const {
    if (g.in_place) return x;
    // Items of whole planes, or of row blocks when there are few planes (first layers
    // at batch 1: 3 planes would leave one of 2 threads idle at the barrier).
    const index_t planes = d_.n * d_.c, want = 8 * omp_get_num_threads();
    const index_t blocks = planes >= want ? 1 : std::min(g.hp, ceil_div(want, planes));
    ops::for_dynamic(planes * blocks, [&](index_t it) {
      const index_t p = it / blocks, b = it % blocks;
      fill_plane(d_, g, x + p * d_.h * d_.w, buf.data() + p * g.chan_stride, b * g.hp / blocks,
                 (b + 1) * g.hp / blocks);
    });
    return buf.data();
  }

  ConvDesc d_;
  index_t kg_, cg_, taps_, cblock_ = 1, spr_ = 1;
  DirectKernel kernel_;
  bool y_nchw8c_ = false;
  bool fwd_in_place_ = false;  // the pixel-vector forward reads x itself (see the constructor)
  arch::AlignedBuffer<float> bias8_;  // nChw8c output: the bias padded to whole vectors

  InputGeometry geo_, geo_ocv_;
  std::vector<float> wpack_;
  arch::AlignedBuffer<float> wocv_;
  std::vector<index_t> col_off_;
  arch::AlignedBuffer<float> xbuf_, xocv_, dyt_, dw_part_, ocv_scratch_;
  arch::AlignedBuffer<float> xpad_bwdw_;  // backward-weights at batch: each thread's padded image
  std::vector<std::int64_t> ocv_x_off_;  // first layers: window origins per chunk pixel
  std::vector<std::int16_t> ocv_row_span_;  //   and their kernel rows inside the image
  std::vector<std::int16_t> ocv_col_span_;  //   and columns
  index_t ocv_x_off_chunk_ = 0;          //   for chunks of this many pixels
  std::vector<double> db_part_;  // backward-weights: dbias per reduction part
  TransposedBackwardData bwd_data_;
  std::unique_ptr<PointwiseConv> pointwise_;  // forward of 1x1 unpadded layers (strided:
                                              // on the subsampled input)
  arch::AlignedBuffer<float> xsub_;
  std::unique_ptr<Direct> swapped_;     // widening 1x1 backward-weights: the exchanged problem
  arch::AlignedBuffer<float> dw_swap_;  // its dW^T, and dW before accumulating
};

std::unique_ptr<ConvAlgorithm> make_pixel(const ConvDesc& d) { return std::make_unique<Direct>(d, DirectKernel::pixel); }
std::unique_ptr<ConvAlgorithm> make_pointwise_kernel(const ConvDesc& d) {
  return std::make_unique<Direct>(d, DirectKernel::pointwise);
}
std::unique_ptr<ConvAlgorithm> make_first_layer(const ConvDesc& d) {
  return std::make_unique<Direct>(d, DirectKernel::first_layer);
}

}  // namespace

bool direct_first_layer(const ConvDesc& d) {
  const bool pointwise = d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 && d.pad_h == 0 && d.pad_w == 0;
  const index_t cg = d.c / d.groups, kg = d.k / d.groups;
  return !pointwise && cg <= kOcvMaxChannels && (d.stride_w > 1 || kg >= kOcvMinStride1Channels);
}

bool direct_first_layer_nchw8c(const ConvDesc& d, arch::Isa isa) {
  if (direct_first_layer(d)) return true;
  // At AVX2, stride-1 layers with 16-31 output channels too when writing nChw8c: the
  // tiles' blocks go straight to y, no transposed store (LeNet conv1, 1 -> 20, Zen 3,
  // 1 thread, 8 alternating pairs, median: batch 64 24.5 -> 30.8 GFLOP/s, 0.85x ->
  // 0.98x the best oneDNN; batch 32 22.8 -> 29.4). NCHW keeps the pixel tile. Only at
  // batch >= 32 (measured): this makes nChw8c the preferred layout, and at batch 1 the
  // NCHW minibatch forward was faster (16.2-17.2 vs 10.3-12.4 GFLOP/s).
  const bool pointwise = d.kh == 1 && d.kw == 1 && d.pad_h == 0 && d.pad_w == 0;
  return isa == arch::Isa::avx2 && !pointwise && d.groups == 1 && d.c <= kOcvMaxChannels &&
         d.k >= kOcvMinStride1ChannelsNchw8cAvx2 && d.n >= kOcvMinBatchNchw8cAvx2;
}

std::unique_ptr<ConvAlgorithm> make_direct_nchw8c_out(const ConvDesc& d) {
  if (!direct_first_layer_nchw8c(d, arch::active_isa()) || d.groups != 1)
    throw Error("taihu: conv: " + d.str() + " has no first-layer kernel writing nChw8c");
  return std::make_unique<Direct>(d, DirectKernel::first_layer, true);
}

bool direct_kernel_supports(DirectKernel kernel, const ConvDesc& d, ConvDirection dir) {
  switch (kernel) {
    case DirectKernel::pointwise:
      return pointwise_shape(d);  // backward-data: the transposed problem is 1x1 too
    case DirectKernel::pointwise_strided:
      return dir == ConvDirection::forward && strided_pointwise(d);
    case DirectKernel::first_layer:
      if (dir == ConvDirection::forward) return direct_first_layer(d);
      if (dir == ConvDirection::backward_data) return transposed_supported(d) && direct_first_layer(transposed_desc(d));
      return false;  // NCHW backward-weights is the pixel kernel's (see conv_list.cpp)
    case DirectKernel::pixel:
      if (dir == ConvDirection::forward) return !pointwise_shape(d) && !strided_pointwise(d);
      if (dir == ConvDirection::backward_data) return transposed_supported(d) && !pointwise_shape(d);
      return true;
  }
  return false;
}

std::unique_ptr<ConvAlgorithm> make_direct_kernel(const ConvDesc& d, DirectKernel kernel) {
  return std::make_unique<Direct>(d, kernel);
}

}  // namespace taihu::dnn::conv
