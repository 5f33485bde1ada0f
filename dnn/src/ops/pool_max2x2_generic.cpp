// Portable 2x2 stride-2 MAX pooling kernels (pool_max2x2.hpp): window by window, the
// taps of a clipped window (odd planes' last row or column) bounded.
#include <algorithm>
#include <limits>

#include "ops/pool_max2x2.hpp"

namespace taihu::dnn::ops {

namespace {

void forward_plane(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2;
  for (index_t ph = 0; ph < oh; ++ph)
    for (index_t pw = 0; pw < ow; ++pw) {
      float best = std::numeric_limits<float>::lowest();
      std::int32_t arg = -1;
      for (index_t ih = 2 * ph; ih < std::min(h, 2 * ph + 2); ++ih)
        for (index_t iw = 2 * pw; iw < std::min(w, 2 * pw + 2); ++iw)
          if (x[ih * w + iw] > best) {
            best = x[ih * w + iw];
            arg = static_cast<std::int32_t>(ih * w + iw);
          }
      y[ph * ow + pw] = best;
      if (m) m[ph * ow + pw] = arg;
    }
}

void backward_plane(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2;
  for (index_t ph = 0; ph < oh; ++ph)
    for (index_t pw = 0; pw < ow; ++pw) {
      const std::int32_t arg = m[ph * ow + pw];
      const float g = 0.0f + dy[ph * ow + pw];
      for (index_t ih = 2 * ph; ih < std::min(h, 2 * ph + 2); ++ih)
        for (index_t iw = 2 * pw; iw < std::min(w, 2 * pw + 2); ++iw) dx[ih * w + iw] = arg == ih * w + iw ? g : 0.0f;
    }
}

}  // namespace

const PoolMax2x2Kernels& pool_max2x2_generic() {
  static const PoolMax2x2Kernels k{&forward_plane, &backward_plane};
  return k;
}

}  // namespace taihu::dnn::ops
