// 2x2 stride-2 MAX pooling kernels (see pool2x2.hpp). Planes are independent and
// handed to threads in static blocks (the work per plane is equal).
#include "layers/pool2x2.hpp"

#include <emmintrin.h>

#include <algorithm>
#include <limits>

#include "taihu/arch/threads.hpp"

namespace taihu::caffe {

using dnn::index_t;

bool pool2x2_applies(const dnn::PoolingShape& s) {
  return s.kernel_h == 2 && s.kernel_w == 2 && s.stride_h == 2 && s.stride_w == 2 && s.pad_h == 0 && s.pad_w == 0 &&
         s.height % 2 == 0 && s.width % 2 == 0 && s.height * s.width <= std::numeric_limits<std::int32_t>::max();
}

namespace {

// One plane. Per output: taps (0,0), (0,1), (1,0), (1,1), each taken when strictly
// greater than the running maximum that starts at the lowest float with mask -1.
void forward_plane(index_t h, index_t w, const float* x, float* y, std::int32_t* m) {
  const index_t ow = w / 2, oh = h / 2, vec_end = ow - ow % 4;
  const float lowest = std::numeric_limits<float>::lowest();
  const __m128i lane2 = _mm_setr_epi32(0, 2, 4, 6);
  for (index_t ph = 0; ph < oh; ++ph) {
    const float* r0 = x + 2 * ph * w;
    float* yr = y + ph * ow;
    std::int32_t* mr = m + ph * ow;
    for (index_t pw = 0; pw < vec_end; pw += 4) {
      __m128 acc = _mm_set1_ps(lowest);
      __m128i arg = _mm_set1_epi32(-1);
      auto take = [&](__m128 v, std::int32_t at) {
        const __m128 wins = _mm_cmpgt_ps(v, acc);
        acc = _mm_or_ps(_mm_and_ps(wins, v), _mm_andnot_ps(wins, acc));
        const __m128i idx = _mm_add_epi32(_mm_set1_epi32(at), lane2);
        const __m128i wi = _mm_castps_si128(wins);
        arg = _mm_or_si128(_mm_and_si128(wi, idx), _mm_andnot_si128(wi, arg));
      };
      for (index_t dh = 0; dh < 2; ++dh) {
        const float* row = r0 + dh * w + 2 * pw;
        const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
        const __m128 a0 = _mm_loadu_ps(row), a1 = _mm_loadu_ps(row + 4);
        take(_mm_shuffle_ps(a0, a1, 0x88), at);
        take(_mm_shuffle_ps(a0, a1, 0xDD), at + 1);
      }
      _mm_storeu_ps(yr + pw, acc);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(mr + pw), arg);
    }
    for (index_t pw = vec_end; pw < ow; ++pw) {
      float best = lowest;
      std::int32_t arg = -1;
      for (index_t dh = 0; dh < 2; ++dh)
        for (index_t dw = 0; dw < 2; ++dw) {
          const index_t at = (2 * ph + dh) * w + 2 * pw + dw;
          if (x[at] > best) {
            best = x[at];
            arg = static_cast<std::int32_t>(at);
          }
        }
      yr[pw] = best;
      mr[pw] = arg;
    }
  }
}

// One plane: input (2ph + dh, 2pw + dw) gets 0 + dy[ph][pw] when it is the window's
// argmax, else 0.
void backward_plane(index_t h, index_t w, const float* dy, const std::int32_t* m, float* dx) {
  const index_t ow = w / 2, oh = h / 2, vec_end = ow - ow % 4;
  const __m128i lane2 = _mm_setr_epi32(0, 2, 4, 6);
  const __m128 zero = _mm_setzero_ps();
  for (index_t ph = 0; ph < oh; ++ph) {
    const float* dyr = dy + ph * ow;
    const std::int32_t* mr = m + ph * ow;
    for (index_t pw = 0; pw < vec_end; pw += 4) {
      const __m128 g = _mm_add_ps(zero, _mm_loadu_ps(dyr + pw));
      const __m128i arg = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mr + pw));
      for (index_t dh = 0; dh < 2; ++dh) {
        const auto at = static_cast<std::int32_t>((2 * ph + dh) * w + 2 * pw);
        const __m128i i0 = _mm_add_epi32(_mm_set1_epi32(at), lane2);
        const __m128i i1 = _mm_add_epi32(i0, _mm_set1_epi32(1));
        const __m128 v0 = _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(arg, i0)), g);
        const __m128 v1 = _mm_and_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(arg, i1)), g);
        float* out = dx + (2 * ph + dh) * w + 2 * pw;
        _mm_storeu_ps(out, _mm_unpacklo_ps(v0, v1));
        _mm_storeu_ps(out + 4, _mm_unpackhi_ps(v0, v1));
      }
    }
    for (index_t pw = vec_end; pw < ow; ++pw)
      for (index_t dh = 0; dh < 2; ++dh)
        for (index_t dw = 0; dw < 2; ++dw) {
          const index_t at = (2 * ph + dh) * w + 2 * pw + dw;
          dx[at] = mr[pw] == at ? 0.0f + dyr[pw] : 0.0f;
        }
  }
}

template <class F>
void for_each_plane(const dnn::PoolingShape& s, F&& f) {
  const index_t planes = s.batch * s.channels;
  const int nt = static_cast<int>(std::min<index_t>(arch::threads_for_call(), planes));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (index_t p = 0; p < planes; ++p) f(p);
}

}  // namespace

void max_pool2x2_forward(const dnn::PoolingShape& s, const float* x, float* y, std::int32_t* mask) {
  const index_t in = s.height * s.width, out = in / 4;
  for_each_plane(s, [&](index_t p) { forward_plane(s.height, s.width, x + p * in, y + p * out, mask + p * out); });
}

void max_pool2x2_backward(const dnn::PoolingShape& s, const float* dy, const std::int32_t* mask, float* dx) {
  const index_t in = s.height * s.width, out = in / 4;
  for_each_plane(s, [&](index_t p) { backward_plane(s.height, s.width, dy + p * out, mask + p * out, dx + p * in); });
}

}  // namespace taihu::caffe
