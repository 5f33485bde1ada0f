// VecAvx512 with the non-temporal store the streaming kernels ask for (V::stream: the 1x1
// input-lanes tile's dw stores, the direct input-lanes tap store). Only for translation
// units compiled for AVX-512: the SIMDe-emulated tests have no _mm512_stream_ps and use
// VecAvx512 (a plain store) or their own stand-in.
#pragma once
#include <immintrin.h>

#include "conv/kernels/avx512/vec_avx512.hpp"

namespace taihu::dnn::conv::kernels {

struct VecAvx512Nt : VecAvx512 {
  static inline void stream(float* p, Reg v) { _mm512_stream_ps(p, v); }
};

}  // namespace taihu::dnn::conv::kernels
