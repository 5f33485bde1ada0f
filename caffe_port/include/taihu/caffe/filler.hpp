// Caffe's weight fillers: constant, uniform, gaussian, xavier, msra (fan_in / fan_out
// / average variance norm as Caffe computes them: fan_in = count / shape[0],
// fan_out = count / shape[1]). Draws from process_rng().
#pragma once
#include "taihu/caffe/blob.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {

// Throws taihu::Error naming an unknown filler type, or a sparse gaussian (unsupported).
void fill(const proto::FillerParameter& filler, Blob* blob);

}  // namespace taihu::caffe
