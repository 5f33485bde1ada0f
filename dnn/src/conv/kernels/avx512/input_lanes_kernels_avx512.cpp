// AVX-512 kernels of the direct input-lanes backward-weights (input_lanes_kernels.hpp):
// the 3x3 tap permutes of kernels/input_lanes_tile.hpp (the tap store's whole 16-channel
// blocks, the column build), the rest through tap_interleave_avx512 / the scalar
// definition. (The 16 x 16 transpose store was 6% of the res4 call's samples on Zen 4.)
// And x's one-pass padded reorder (kernels/input_lanes_tile.hpp's pad_block_8x8).
#include <immintrin.h>

#include <cstdint>

#include "conv/input_lanes_kernels.hpp"
#include "conv/kernels/avx512/vec_avx512_nt.hpp"
#include "conv/kernels/input_lanes_tile.hpp"
#include "conv/pointwise_blocked_kernels.hpp"

namespace taihu::dnn::conv {

void col_build_avx512(const float* xrow, std::int64_t wp, int kh, int kw, std::int64_t pixels, float* col,
                      std::int64_t cstride) {
  if (kh == 3 && kw == 3)
    kernels::col_build_taps<3, 3>(xrow, wp, pixels, col, cstride);
  else
    col_build_generic(xrow, wp, kh, kw, pixels, col, cstride);
}

void tap_store_avx512(const float* src, std::int64_t tap_stride, std::int64_t taps, std::int64_t channels,
                      float* dst, bool accumulate, bool stream) {
  std::int64_t done = 0;
  if (taps == 9) {
    done = channels / 16 * 16;
    // Streaming needs 64-byte aligned vectors: 9 x 16 floats per block keep dst's alignment.
    const bool nt = stream && !accumulate && reinterpret_cast<std::uintptr_t>(dst) % 64 == 0;
    kernels::tap_store_blocks<9, kernels::VecAvx512Nt>(src, tap_stride, done / 16, dst, accumulate, nt);
  }
  if (done < channels) tap_interleave_avx512(src + done, tap_stride, taps, channels - done, dst + done * taps, accumulate);
}

void pad_block_avx512(const float* src, std::int64_t lanes, std::int64_t h, std::int64_t w, float* dst,
                      std::int64_t wp) {
  kernels::pad_block_8x8(src, lanes, h, w, dst, wp);
}

}  // namespace taihu::dnn::conv
