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
// Algorithms (ConvAlgo): explicit_gemm (im2col/col2im + taihu::gemm, the Caffe way),
// implicit_gemm (no im2col buffer), winograd_2x2 / winograd_4x4 (F(2x2,3x3) and
// F(4x4,3x3): 3x3 kernels, stride 1, dilation 1, pad <= 2), direct (1x1 kernels and
// first layers with few input channels), reference (naive loops, double accumulation).
// `automatic` picks one by a tuning record (see tuning_records.hpp) when present, else
// by a heuristic; TAIHU_VERBOSE=1 prints the choice and why. A directly requested
// algorithm that does not support the problem throws taihu::Error at construction.
// Directions an algorithm does not implement (e.g. direct backward-weights) run the
// best supporting algorithm instead; algorithm(direction) says which.
//
// Activation layouts (ConvLayout): x/dx ("src") and y/dy ("dst") are NCHW by default or
// nChw8c (layout.hpp: [n][ceil(c/8)][h][w][8], channels past c zero; written outputs
// keep those lanes zero). Weights, bias and dw stay OIHW / [k] in every layout.
// Layers the direct algorithm has blocked kernels for run on the blocked tensors
// natively (1x1 stride-1 unpadded layers: all three directions in nChw8c -> nChw8c;
// first layers: NCHW x -> nChw8c y forward and backward-weights); any other (layer, layout, algorithm)
// runs the NCHW algorithm between reorders (correct, slower); layout_native(dir) says
// which. preferred_layout(d) is taihu's fastest layout for a layer (what a framework
// asking for "any" should use, as oneDNN's format_tag::any).
//
// A Convolution object caches transformed/packed weights and workspaces; it is not
// safe to call one object from several threads at once (use one object per thread).
// Each call runs on arch::threads_for_call() OpenMP threads.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
  reference
};

enum class ConvDirection { forward, backward_data, backward_weights };

// "auto", "explicit_gemm", "implicit_gemm", "winograd_2x2", "winograd_4x4", "direct",
// "reference". parse_conv_algo also accepts "automatic"; throws taihu::Error otherwise.
const char* to_string(ConvAlgo algo);
const char* to_string(ConvDirection dir);
ConvAlgo parse_conv_algo(const std::string& name);

// Whether `algo` implements `dir` for `d` (d must be valid). reference and
// explicit_gemm support everything.
bool conv_supports(ConvAlgo algo, const ConvDesc& d, ConvDirection dir);

// The concrete algorithms usable for (d, dir), in the ordered implementation list's
// order (fastest family first, reference last). Tests and the autotuner iterate this.
std::vector<ConvAlgo> conv_candidates(const ConvDesc& d, ConvDirection dir);

enum class ActLayout { nchw, nchw8c };

struct ConvLayout {
  ActLayout src = ActLayout::nchw;  // x and dx
  ActLayout dst = ActLayout::nchw;  // y and dy
  friend bool operator==(const ConvLayout&, const ConvLayout&) = default;
};

// "nchw" / "nChw8c"; parse_act_layout also accepts "nchw8c" and throws taihu::Error
// naming the string otherwise. to_string(ConvLayout): "nchw", "nChw8c" (both the same)
// or "nchw->nChw8c" (src->dst). parse_conv_layout reads those three forms.
const char* to_string(ActLayout layout);
std::string to_string(const ConvLayout& layout);
ActLayout parse_act_layout(const std::string& name);
ConvLayout parse_conv_layout(const std::string& name);

// Elements of d's x (dst = false) or y (dst = true) in `layout` (nChw8c pads the
// channels to a multiple of 8).
index_t conv_tensor_elements(const ConvDesc& d, bool dst, ActLayout layout);

// taihu's fastest activation layout for d (all three directions considered): nChw8c
// for 1x1 stride-1 unpadded layers, NCHW x -> nChw8c y for first layers, NCHW otherwise.
ConvLayout preferred_layout(const ConvDesc& d);

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
  ConvAlgo algorithm() const;                    // forward's algorithm
  ConvAlgo algorithm(ConvDirection dir) const;   // what each direction runs
  ConvLayout layout() const;
  // True when `dir` runs on the tensors in the requested layout; false when it runs
  // the NCHW algorithm between reorders (always true for NCHW).
  bool layout_native(ConvDirection dir) const;

  // y = conv(x, w) + bias (bias may be null). y is overwritten.
  void forward(const float* x, const float* w, const float* bias, float* y,
               WeightsHint hint = WeightsHint::changed);

  // dx = conv^T(dy, w). dx is overwritten (Caffe's bottom diff semantics).
  void backward_data(const float* dy, const float* w, float* dx,
                     WeightsHint hint = WeightsHint::changed);

  // dw (+)= dL/dw, dbias (+)= sum over n, oy, ox of dy (dbias may be null).
  // accumulate = true adds to dw/dbias (Caffe accumulates parameter diffs);
  // false overwrites them.
  void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                        bool accumulate);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace taihu::dnn
