// taihu::dnn convolution: 2-D convolution (cross-correlation, as Caffe and oneDNN
// define it) forward, backward-data and backward-weights, with bias, stride, padding,
// dilation and groups, through several algorithms behind one ordered list.
//
// Layouts (Caffe-compatible, so .caffemodel blobs load directly):
//   x  [n][c][h][w]                 (NCHW float, dense)
//   w  [k][c/groups][kh][kw]        (OIHW)
//   b  [k]
//   y  [n][k][out_h][out_w]
//   y[n][k][oy][ox] = b[k] + sum_{ci,r,s} w[k][ci][r][s] *
//                     x[n][g*c/groups+ci][oy*stride_h - pad_h + r*dil_h][ox*stride_w - pad_w + s*dil_w]
//   (g = k / (k/groups); out-of-range x reads are zero).
//
// Algorithms: one ordered implementation list (dnn/src/conv/conv_list.cpp, as oneDNN's
// cpu_convolution_list.cpp): every kernel family is an entry (ConvAlgo) that accepts or
// declines (desc, direction, layout, ISA); the list order is the preference:
//   pointwise_blocked  1x1 stride-1 unpadded, groups 1, on nChw8c / nChw16c (AVX-512) tensors (no reorders)
//   first_layer        <= 4 input channels per group (strided, or >= 32 output channels),
//                      forward vectorised along output channels; NCHW -> nChw8c native
//   winograd_4x4       F(4x4,3x3): 3x3, stride 1, dilation 1, pad <= 2
//   winograd_2x2       F(2x2,3x3) and F(2x2,5x5)
//   pointwise          1x1 stride-1 unpadded layers on NCHW, every direction
//   pointwise_strided  strided 1x1 unpadded layers, forward (on the subsampled input)
//   direct             register-blocked direct kernel (4 channels x 3 pixel vectors)
//   implicit_gemm      GEMM on strided windows packed per panel (no im2col buffer)
//   explicit_gemm      im2col/col2im + taihu::gemm, the Caffe way (supports everything)
//   minibatch          a whole minibatch per call for small images (Caffe's classic
//                      nets); chosen by timing or a tuning record, not by the heuristic
//   reference          naive loops, double accumulation
// `automatic` takes, per direction, a tuning record when present (NCHW layouts; see
// tuning_records.hpp), else the first entry that supports the problem and whose
// profitable() predicate (the measured heuristic, commented in conv_list.cpp) holds.
// choose_by_timing() measures the candidates instead. A directly requested algorithm
// that supports none of the three directions throws taihu::Error at construction;
// directions it lacks run the automatic choice; algorithm(direction) says which.
//
// Activation layouts (ConvLayout): x/dx ("src") and y/dy ("dst") are NCHW by default or
// nChw8c / nChw16c (layout.hpp: [n][ceil(c/B)][h][w][B], channels past c zero; written
// outputs keep those lanes zero). Weights, bias and dw stay OIHW / [k] in every layout.
// Entries that run on the blocked tensors natively: pointwise_blocked (nChw8c -> nChw8c,
// and nChw16c -> nChw16c on AVX-512, all three directions) and first_layer (NCHW x -> nChw8c y, forward and
// backward-weights); any other (layer, layout, entry) runs on NCHW copies between
// reorders (correct, slower); layout_native(dir) says which. preferred_layout(d) is
// taihu's fastest layout for a layer (what a framework asking for "any" should use, as
// oneDNN's format_tag::any).
//
// One Convolution object serves a layer's three directions, each with its own choice.
// It caches transformed/packed weights and workspaces; it is not safe to call one
// object from several threads at once (use one object per thread). Each call runs on
// arch::threads_for_call() OpenMP threads. With TAIHU_VERBOSE=1 every call prints one
// line to stderr, oneDNN-verbose style:
//   taihu_verbose,exec,conv,<entry>,<direction>,<layout>,<ConvDesc::str()>,<milliseconds>
// (a forward with post-ops names them after the entry: "direct+sum+relu" fused,
// "winograd_4x4+pass:relu" applied in a pass after it).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taihu/arch/isa.hpp"
#include "taihu/dnn/tensor.hpp"

namespace taihu::dnn {

struct ConvDesc {
  index_t n = 1;         // minibatch
  index_t c = 1;         // input channels
  index_t h = 1, w = 1;  // input spatial size
  index_t k = 1;         // output channels
  index_t kh = 1, kw = 1;
  index_t stride_h = 1, stride_w = 1;
  index_t pad_h = 0, pad_w = 0;
  index_t dil_h = 1, dil_w = 1;  // 1 = dense kernel (Caffe's dilation; oneDNN's d = dil-1)
  index_t groups = 1;

  index_t out_h() const;  // (h + 2 pad_h - dil_h (kh-1) - 1) / stride_h + 1
  index_t out_w() const;

  // Throws taihu::Error naming the first bad field and its value ("conv: groups = 3
  // does not divide c = 64"), including an empty output.
  void validate() const;

  // benchdnn-style problem string, e.g. "g1mb1ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0"
  // shortened like benchdnn: g omitted when 1, iw/ow/kw/sw/pw/dw omitted when equal to
  // their h counterpart, sh/dh omitted at default -> "mb1ic64ih56oc64oh56kh3ph1".
  // dh/dw are benchdnn's (dilation - 1).
  std::string str() const;

  // Reads str()'s format (any field order; missing fields: mb1, iw=ih, kw=kh, s1, p0,
  // d0, g1; oh/ow if present must match the computed size). Throws taihu::Error
  // naming the offending position for an unknown or malformed field.
  static ConvDesc parse(const std::string& problem);

  // FLOPs of one forward pass (2 per multiply-add), the figure benchmarks report.
  double forward_flops() const;

  friend bool operator==(const ConvDesc&, const ConvDesc&) = default;
};

enum class ConvAlgo {
  automatic,
  explicit_gemm,
  implicit_gemm,
  winograd_2x2,
  winograd_4x4,
  direct,
  reference,
  pointwise,
  pointwise_blocked,
  pointwise_strided,
  first_layer,
  minibatch,
  direct_input_lanes,
  direct_weight_lanes
};

enum class ConvDirection { forward, backward_data, backward_weights };

// "auto", "explicit_gemm", "implicit_gemm", "winograd_2x2", "winograd_4x4", "direct",
// "reference", "pointwise", "pointwise_blocked", "pointwise_strided", "first_layer",
// "minibatch", "direct_input_lanes", "direct_weight_lanes". parse_conv_algo also
// accepts "automatic" and "batch" (caffe_port's old name of minibatch); throws
// taihu::Error naming the string otherwise.
const char* to_string(ConvAlgo algo);
const char* to_string(ConvDirection dir);
ConvAlgo parse_conv_algo(const std::string& name);

// Whether `algo` implements `dir` for `d` on NCHW tensors (d must be valid). reference,
// explicit_gemm and minibatch support everything.
bool conv_supports(ConvAlgo algo, const ConvDesc& d, ConvDirection dir);

// The entries usable for (d, dir) on NCHW tensors, in the list's order (reference
// last). Tests, bench_conv --tune and the autotuner iterate this.
std::vector<ConvAlgo> conv_candidates(const ConvDesc& d, ConvDirection dir);

// What "direct" meant before the direct kernels became separate entries (one object
// that switched between them by shape): the entry that runs (d, dir) for a tuning record
// of format 1 or a saved choice without direction names. ConvAlgo::automatic when no
// direct kernel supports it (strided backward-data).
ConvAlgo conv_direct_family_entry(const ConvDesc& d, ConvDirection dir);

// How many OpenMP threads a call on d, made now from this thread, runs on: 1 for a
// problem below dnn's serial threshold (1 MFLOP: a second thread costs more than it
// takes), else arch::threads_for_call(). Tuning records are looked up for this count.
int conv_call_threads(const ConvDesc& d);

struct TuningRecord;  // tuning_records.hpp

// Replaces seconds[i] (this process's time for candidate i) by a value every
// data-parallel rank shares (e.g. the slowest rank's), so all pick the same candidate.
// Collective: each rank calls it with the same candidates in the same order.
using ConvAgreement = std::function<void(std::span<double> seconds)>;

enum class ActLayout { nchw, nchw8c, nchw16c };

struct ConvLayout {
  ActLayout src = ActLayout::nchw;  // x and dx
  ActLayout dst = ActLayout::nchw;  // y and dy
  friend bool operator==(const ConvLayout&, const ConvLayout&) = default;
};

// "nchw" / "nChw8c" / "nChw16c"; parse_act_layout also accepts "nchw8c" / "nchw16c" and
// throws taihu::Error naming the string otherwise. to_string(ConvLayout): "nchw",
// "nChw8c", "nChw16c" (both the same) or "nchw->nChw8c" (src->dst). parse_conv_layout
// reads those forms.
const char* to_string(ActLayout layout);
std::string to_string(const ConvLayout& layout);
ActLayout parse_act_layout(const std::string& name);
ConvLayout parse_conv_layout(const std::string& name);

// Elements of d's x (dst = false) or y (dst = true) in `layout` (nChw8c / nChw16c pad
// the channels to a multiple of 8 / 16).
index_t conv_tensor_elements(const ConvDesc& d, bool dst, ActLayout layout);

// An [n][c][h][w] tensor to / from `layout` (layout.hpp's reorders; a copy for NCHW).
// Throws taihu::Error as those do, and for a value outside ActLayout.
void reorder_nchw_to_layout(const float* src, float* dst, ActLayout layout, index_t n, index_t c, index_t h,
                            index_t w);
void reorder_layout_to_nchw(const float* src, float* dst, ActLayout layout, index_t n, index_t c, index_t h,
                            index_t w);

// taihu's fastest activation layout for d at `isa` (default: the level in force): a
// layout a native entry runs forward in. 1x1 stride-1 unpadded layers (groups 1): the
// blocked layout of the ISA's vector, nChw16c on AVX-512, nChw8c on AVX2 and generic;
// first layers: NCHW x -> nChw8c y; NCHW otherwise.
ConvLayout preferred_layout(const ConvDesc& d);
ConvLayout preferred_layout(const ConvDesc& d, arch::Isa isa);

// Post-ops of the forward pass (oneDNN's primitive-attribute post-ops), applied in this
// order after the bias:
//   sum   y = conv(x, w) + bias + y_on_entry (a residual branch written into y first)
//   relu  y = max(y, 0) (negative_slope 0; a NaN passes through)
// Entries that fuse them apply them to each output tile while it is still in registers
// (pointwise, pointwise_strided, direct, first_layer; first_layer's nChw8c output:
// ReLU only); on the others Convolution applies them in one pass over y after the
// entry (same values; Convolution::fuses_post_ops says which happens).
struct ConvPostOps {
  bool sum = false;
  bool relu = false;
  bool any() const { return sum || relu; }
  friend bool operator==(const ConvPostOps&, const ConvPostOps&) = default;
};

// Whether entry `algo` applies `post` inside its forward kernels for (d, layout) (false
// for automatic, and for an entry that does not support d's forward in that layout).
bool conv_fuses_post_ops(ConvAlgo algo, const ConvDesc& d, const ConvPostOps& post, ConvLayout layout = {});

// WeightsHint::unchanged promises the weights pointer holds the same values as in the
// previous call of the same direction on this object, so cached transformed / packed
// weights are reused (Winograd, packed GEMM). changed (the default) always re-reads.
enum class WeightsHint { changed, unchanged };

class Convolution {
 public:
  // Validates d; resolves `automatic` (tuning record, then heuristic). Throws
  // taihu::Error for an invalid problem or an algorithm that does not support it.
  explicit Convolution(const ConvDesc& d, ConvAlgo algo = ConvAlgo::automatic);
  // The same with the activation layouts of x/dx and y/dy (see ConvLayout). Throws
  // taihu::Error for a layout value outside ActLayout.
  Convolution(const ConvDesc& d, ConvAlgo algo, ConvLayout layout);
  ~Convolution();
  Convolution(Convolution&&) noexcept;
  Convolution& operator=(Convolution&&) noexcept;
  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;

  const ConvDesc& desc() const;
  ConvAlgo algorithm() const;                    // forward's entry
  ConvAlgo algorithm(ConvDirection dir) const;   // the entry each direction runs
  ConvLayout layout() const;
  // True when `dir` runs on the tensors in the requested layout; false when it runs
  // the NCHW algorithm between reorders (always true for NCHW).
  bool layout_native(ConvDirection dir) const;

  // y = conv(x, w) + bias (bias may be null). y is overwritten.
  void forward(const float* x, const float* w, const float* bias, float* y,
               WeightsHint hint = WeightsHint::changed);

  // The same followed by the post-ops (see ConvPostOps; with post.sum, y holds the
  // tensor to add on entry). Fused into the forward entry's kernels where it supports
  // them, else one pass over y after it.
  void forward(const float* x, const float* w, const float* bias, float* y, const ConvPostOps& post,
               WeightsHint hint = WeightsHint::changed);
  // Whether forward(..., post, ...) runs the post-ops inside the chosen forward entry.
  bool fuses_post_ops(const ConvPostOps& post) const;

  // dx = conv^T(dy, w). dx is overwritten (Caffe's bottom diff semantics).
  void backward_data(const float* dy, const float* w, float* dx,
                     WeightsHint hint = WeightsHint::changed);

  // dw (+)= dL/dw, dbias (+)= sum over n, oy, ox of dy (dbias may be null).
  // accumulate = true adds to dw/dbias (Caffe accumulates parameter diffs);
  // false overwrites them.
  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate);

  // Timed selection for `dir`: runs every entry that supports it (the reference
  // excepted) `rounds` times round-robin (a burst of load hits all alike), keeps each
  // one's fastest run (this thread's CPU time at 1 thread, wall time otherwise), passes
  // the times through `agree` when given, and from then on runs the fastest. Forward
  // writes y (bias may be null); backward directions use internal scratch for dy
  // (0.01), dx, dw, db and read x (backward-weights) and w (backward-data); y may be
  // null there. Tensors are in layout(). TAIHU_VERBOSE=1 prints the times.
  void choose_by_timing(ConvDirection dir, const float* x, const float* w, const float* bias, float* y,
                        const ConvAgreement& agree = {}, int rounds = 3);
  // What choose_by_timing measured so far (the agreed times), one tuning record per
  // candidate and direction, for save_tuning_records (NCHW layouts only: records steer
  // NCHW tensors).
  const std::vector<TuningRecord>& timing_records() const;

  // The three choices as text, "forward=<entry>,backward_data=<entry>,backward_weights=<entry>",
  // for snapshots; set_choice() reads it back, and the older "<fwd>,<bwd_data>,<bwd_weights>"
  // form caffe_port saved ("direct" there meaning conv_direct_family_entry, "batch"
  // minibatch). Throws taihu::Error naming the text for an unknown entry or one that
  // does not support its direction.
  std::string choice() const;
  void set_choice(const std::string& text);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace taihu::dnn
