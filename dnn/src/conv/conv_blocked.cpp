// Which convolutions run natively on nChw8c activations, and their objects (the
// declarations and the contract are in conv_algorithm.hpp): 1x1 stride-1 unpadded
// layers nChw8c -> nChw8c in every direction (conv_pointwise_blocked.cpp), first layers
// NCHW -> nChw8c forward (the direct algorithm's first-layer tiles writing in place) and
// backward-weights (its dY^T chunks gathered from the blocked dY instead of transposed).
#include "conv_algorithm.hpp"
#include "conv_pointwise.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::dnn::conv {

bool blocked_native(const ConvDesc& d, ConvDirection dir, ConvLayout layout) {
  if (d.groups != 1) return false;
  if (layout == ConvLayout{ActLayout::nchw8c, ActLayout::nchw8c}) return pointwise_shape(d);
  if (layout == ConvLayout{ActLayout::nchw, ActLayout::nchw8c})
    return dir != ConvDirection::backward_data && direct_first_layer(d);
  return false;
}

std::unique_ptr<ConvAlgorithm> make_blocked(const ConvDesc& d, ConvLayout layout) {
  if (layout == ConvLayout{ActLayout::nchw8c, ActLayout::nchw8c} &&
      blocked_native(d, ConvDirection::forward, layout))
    return make_pointwise_blocked(d);
  if (blocked_native(d, ConvDirection::forward, layout)) return make_direct_nchw8c_out(d);
  throw Error("taihu: conv: " + d.str() + " has no native " + to_string(layout) + " kernel");
}

}  // namespace taihu::dnn::conv
