// Portable weights-lanes direct convolution tile (see weight_lanes_kernels.hpp): plain
// loops over the tile's pixels and kWlBlock output channels, the same reduction order
// as the vector tile (channel, tap row, tap column).
#include "conv/weight_lanes_kernels.hpp"

namespace taihu::dnn::conv {

void wl_fwd_generic(const WlFwdArgs& a) {
  for (int i = 0; i < a.rows; ++i)
    for (int j = 0; j < a.cols; ++j) {
      float acc[kWlBlock];
      float* yv = a.y + i * a.y_rstride + j * kWlBlock;
      for (int m = 0; m < kWlBlock; ++m)
        acc[m] = a.accumulate ? yv[m] : (a.bias ? a.bias[m] : 0.0f);
      const float* w = a.w;
      for (std::int64_t c = 0; c < a.channels; ++c)
        for (int r = 0; r < a.kh; ++r)
          for (int s = 0; s < a.kw; ++s, w += kWlBlock) {
            const float xv = a.x[c * a.x_cstride + (i + r) * a.x_rstride + j + s];
            for (int m = 0; m < kWlBlock; ++m) acc[m] += w[m] * xv;
          }
      for (int m = 0; m < kWlBlock; ++m) yv[m] = acc[m];
    }
}

}  // namespace taihu::dnn::conv
