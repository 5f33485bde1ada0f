// Baseline pooling kernels (pool_kernels.hpp): the 2x2 MAX kernels four windows per
// SSE2 step (pool_sse.hpp), the rest of a row one window at a time; the stride-2 rows
// through pool_wide.hpp's loop with the four-lane VecSse.
#include "ops/pool_kernels.hpp"
#include "ops/pool_lanes.hpp"
#include "ops/pool_sse.hpp"
#include "ops/pool_wide.hpp"

namespace taihu::dnn::ops {

namespace {

void forward_plane(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2;
  for (index_t ph = 0; ph < oh; ++ph) {
    if (m)
      pool::forward_rest<true>(h, w, x, ph, 0, y + ph * ow, m + ph * ow);
    else
      pool::forward_rest<false>(h, w, x, ph, 0, y + ph * ow, nullptr);
  }
}

void backward_plane(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx) {
  const index_t oh = (h + 1) / 2, ow = (w + 1) / 2;
  for (index_t ph = 0; ph < oh; ++ph) pool::backward_rest(h, w, dy + ph * ow, m + ph * ow, ph, 0, dx);
}

}  // namespace

const PoolKernels& pool_kernels_generic() {
  static const PoolKernels k{&forward_plane, &backward_plane, &pool::wide_row_s2_any<pool::VecSse>,
                             &pool::ave_lanes_forward<pool::Lanes8Scalar>,
                             &pool::ave_lanes_backward<pool::Lanes8Scalar>};
  return k;
}

}  // namespace taihu::dnn::ops
