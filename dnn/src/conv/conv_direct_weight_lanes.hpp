// The weights-lanes direct convolution entry (conv_direct_weight_lanes.cpp): forward of
// stride-1 undilated one-group layers, and backward-data as the forward of the
// transposed problem; see there.
#pragma once
#include <memory>

#include "conv_algorithm.hpp"

namespace taihu::dnn::conv {

bool direct_weight_lanes_supports(const ConvDesc& d, ConvDirection dir);
std::unique_ptr<ConvAlgorithm> make_direct_weight_lanes(const ConvDesc& d);

}  // namespace taihu::dnn::conv
