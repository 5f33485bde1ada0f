// Baseline 2x2 stride-2 MAX pooling kernels (pool_max2x2.hpp): four windows per SSE2
// step (pool_max2x2_sse.hpp), the rest of a row one window at a time.
#include "ops/pool_max2x2.hpp"
#include "ops/pool_max2x2_sse.hpp"

namespace taihu::dnn::ops {

namespace {

void forward_plane(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2;
  for (index_t ph = 0; ph < oh; ++ph) {
    if (m)
      pool2x2::forward_rest<true>(h, w, x, ph, 0, y + ph * ow, m + ph * ow);
    else
      pool2x2::forward_rest<false>(h, w, x, ph, 0, y + ph * ow, nullptr);
  }
}

void backward_plane(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2;
  for (index_t ph = 0; ph < oh; ++ph) pool2x2::backward_rest(h, w, dy + ph * ow, m + ph * ow, ph, 0, dx);
}

}  // namespace

const PoolMax2x2Kernels& pool_max2x2_generic() {
  static const PoolMax2x2Kernels k{&forward_plane, &backward_plane};
  return k;
}

}  // namespace taihu::dnn::ops
