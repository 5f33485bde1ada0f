// Portable direct row kernel (see direct_kernels.hpp): plain loops over 16 lanes.
#include <algorithm>

#include "direct_kernels.hpp"

namespace taihu::dnn::conv {

void direct_row_generic(const DirectRowArgs& a) {
  constexpr int P = 6;
  for (std::int64_t ox0 = 0; ox0 < a.ow; ox0 += P) {
    const int np = static_cast<int>(std::min<std::int64_t>(P, a.ow - ox0));
    float acc[P][16] = {};
    for (std::int64_t c = 0; c < a.c; ++c)
      for (std::int64_t r = 0; r < a.kh; ++r) {
        const float* xr = a.x + c * a.channel_stride + r * a.dil_h * a.wp + ox0 * a.stride_w;
        const float* wr = a.w + (c * a.kh + r) * a.kw * 16;
        for (std::int64_t s = 0; s < a.kw; ++s) {
          const float* wv = wr + s * 16;
          for (int p = 0; p < np; ++p) {
            const float xv = xr[p * a.stride_w + s * a.dil_w];
            for (int l = 0; l < 16; ++l) acc[p][l] += xv * wv[l];
          }
        }
      }
    for (int p = 0; p < np; ++p)
      for (int l = 0; l < 16; ++l) a.out[(ox0 + p) * 16 + l] = acc[p][l];
  }
}

}  // namespace taihu::dnn::conv
