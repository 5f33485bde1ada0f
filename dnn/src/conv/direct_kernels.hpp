// Direct convolution row kernel for few-input-channel layers (a network's first
// layer): one output row of 16 output channels, vectorised over the 16 channels,
// register-blocked over 6 output pixels. Instantiated per ISA (direct_kernels_<isa>.cpp).
// Contract: x points at the zero-padded input of one image, already advanced to the
// first input row of this output row ([c][hp][wp], so no bounds checks); w is
// [c][kh][kw][16] (zero for missing output channels); out receives [ow][16].
#pragma once
#include <cstdint>

namespace taihu::dnn::conv {

struct DirectRowArgs {
  const float* x;
  std::int64_t c, kh, kw;
  std::int64_t channel_stride;  // hp * wp
  std::int64_t wp;              // padded row length
  std::int64_t stride_w, dil_h, dil_w;
  const float* w;
  std::int64_t ow;
  float* out;
};

using DirectRowKernel = void (*)(const DirectRowArgs&);

void direct_row_generic(const DirectRowArgs& a);
void direct_row_avx2(const DirectRowArgs& a);

}  // namespace taihu::dnn::conv
