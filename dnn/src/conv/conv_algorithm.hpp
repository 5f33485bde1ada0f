// Internal interface every convolution algorithm implements (one file each), the
// factory/support entry points the ordered list (conv_list.cpp) registers, and the
// helpers they share (bias, bias gradient, weight rotation, thread ranges).
// Contract: desc is validated before construction; pointers are dense NCHW / OIHW;
// y and dx are overwritten; dw/db accumulate only when asked. An algorithm is
// constructed only for a (desc, direction) its supports() accepted.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "taihu/dnn/conv.hpp"

namespace taihu::dnn::conv {

class ConvAlgorithm {
 public:
  virtual ~ConvAlgorithm() = default;
  virtual void forward(const float* x, const float* w, const float* bias, float* y,
                       WeightsHint hint) = 0;
  virtual void backward_data(const float* dy, const float* w, float* dx, WeightsHint hint) = 0;
  virtual void backward_weights(const float* x, const float* dy, float* dw, float* dbias,
                                bool accumulate) = 0;
  // forward with post-ops (ConvPostOps) applied inside the kernels; called only where
  // the list's entry says it fuses them (conv_list.cpp). The default throws: entries
  // that do not fuse run forward, then Convolution's separate pass.
  virtual void forward_fused(const float* x, const float* w, const float* bias, float* y, WeightsHint hint,
                             const ConvPostOps& post);
};

using SupportsFn = bool (*)(const ConvDesc&, ConvDirection);
using MakeFn = std::unique_ptr<ConvAlgorithm> (*)(const ConvDesc&);

// One per algorithm file.
bool reference_supports(const ConvDesc&, ConvDirection);
std::unique_ptr<ConvAlgorithm> make_reference(const ConvDesc&);
bool explicit_gemm_supports(const ConvDesc&, ConvDirection);
std::unique_ptr<ConvAlgorithm> make_explicit_gemm(const ConvDesc&);
bool implicit_gemm_supports(const ConvDesc&, ConvDirection);
std::unique_ptr<ConvAlgorithm> make_implicit_gemm(const ConvDesc&);
bool winograd_2x2_supports(const ConvDesc&, ConvDirection);
std::unique_ptr<ConvAlgorithm> make_winograd_2x2(const ConvDesc&);
bool winograd_4x4_supports(const ConvDesc&, ConvDirection);
std::unique_ptr<ConvAlgorithm> make_winograd_4x4(const ConvDesc&);
// Backward-weights of stride-1 undilated one-group layers in the input-lanes form
// (conv_direct_input_lanes.cpp).
bool direct_input_lanes_supports(const ConvDesc&, ConvDirection);
std::unique_ptr<ConvAlgorithm> make_direct_input_lanes(const ConvDesc&);

// The direct algorithm's kernels, each its own list entry (conv_direct.cpp):
//   pixel              register tiles of 4 output channels x 3 pixel vectors ("direct")
//   pointwise          1x1 stride-1 unpadded layers (conv_pointwise.hpp), every direction
//   pointwise_strided  strided 1x1 unpadded layers, forward: pointwise on the subsampled x
//   first_layer        <= 4 input channels per group (direct_first_layer), forward
//                      vectorised along output channels; backward-data when the
//                      transposed problem is such a layer
// Backward-data of each is the forward pass of the transposed problem on the same kernel.
enum class DirectKernel { pixel, pointwise, pointwise_strided, first_layer };
bool direct_kernel_supports(DirectKernel kernel, const ConvDesc& d, ConvDirection dir);
std::unique_ptr<ConvAlgorithm> make_direct_kernel(const ConvDesc& d, DirectKernel kernel);

// The first-layer kernel's applicability (few input channels; strided, or enough output
// channels to fill its 32-channel tiles), and its object whose forward writes y in
// nChw8c (x NCHW) straight from the tiles and whose backward-weights reads dy in
// nChw8c (groups 1); direct_first_layer_nchw8c: where that object applies at `isa` (a
// superset).
bool direct_first_layer(const ConvDesc& d);
bool direct_first_layer_nchw8c(const ConvDesc& d, arch::Isa isa);
std::unique_ptr<ConvAlgorithm> make_direct_nchw8c_out(const ConvDesc& d);

// The minibatch algorithm (conv_minibatch.cpp, Caffe's classic small-image nets): see
// there.
std::unique_ptr<ConvAlgorithm> make_minibatch(const ConvDesc& d);

// y[i] = relu(y[i] + sum[i]) for i < count (each part as post asks; sum only read
// with post.sum): the post-op pass after an entry that does not fuse them.
void apply_post_ops(const ConvPostOps& post, const float* sum, float* y, index_t count);

// y[n][k][:] += bias[k] (no-op for null bias).
void add_bias(const ConvDesc& d, const float* bias, float* y);
// db (+)= sum over n, spatial of dy (no-op for null db).
void bias_gradient(const ConvDesc& d, const float* dy, float* db, bool accumulate);
// The same in two steps, for an entry that reads dy image by image anyway (its threads
// then sum the planes they are about to read, in their own cache):
// bias_plane_sums writes parts[n * K + k] for n in [n0, n1), the sum of image n's
// plane k; bias_gradient_from_sums (no-op for null db) adds them per channel in image
// order. Together bitwise equal to bias_gradient.
void bias_plane_sums(const ConvDesc& d, const float* dy, index_t n0, index_t n1, float* parts);
void bias_gradient_from_sums(const ConvDesc& d, const float* parts, float* db, bool accumulate);

// The forward problem whose output is backward_data's dx (stride 1 only):
// input dy (c = k, h = out_h), output c channels, pad' = dil (kernel-1) - pad.
// Valid only when transposed_supported(d).
bool transposed_supported(const ConvDesc& d);
ConvDesc transposed_desc(const ConvDesc& d);
// w'[g][ci][ko][kh-1-r][kw-1-s] = w[g][ko][ci][r][s]: the weights of transposed_desc.
void rotate_weights(const ConvDesc& d, const float* w, float* w_rot);

// [begin, end) of `count` items for part `part` of `parts`.
inline void split_range(std::int64_t count, int part, int parts, std::int64_t& begin,
                        std::int64_t& end) {
  const std::int64_t base = count / parts, extra = count % parts;
  begin = part * base + std::min<std::int64_t>(part, extra);
  end = begin + base + (part < extra ? 1 : 0);
}

}  // namespace taihu::dnn::conv

namespace taihu::dnn::conv {

// backward_data of a stride-1 problem as the forward pass of transposed_desc(d) with
// rotated weights, run by `make`'s algorithm. Rotated weights are cached across calls
// with WeightsHint::unchanged.
class TransposedBackwardData {
 public:
  TransposedBackwardData(const ConvDesc& d, MakeFn make);
  void run(const float* dy, const float* w, float* dx, WeightsHint hint);

 private:
  ConvDesc d_;
  MakeFn make_;
  std::unique_ptr<ConvAlgorithm> fwd_;
  std::vector<float> w_rot_;
  bool have_w_ = false;
};

}  // namespace taihu::dnn::conv
