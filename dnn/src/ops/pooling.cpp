// Max and average pooling with Caffe's geometry (pooling.hpp). One OpenMP task per
// (image, channel) plane; inside, each output row is built kernel-row by kernel-column
// over all output columns at once, so the inner loop is a vector loop without bounds
// tests (the column range where the tap lands inside the input is computed up front).
// The visiting order per output (h then w, strict >) matches Caffe's argmax ties.
#include "taihu/dnn/pooling.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/check.hpp"
#include "ops/parallel.hpp"
#include "ops/vec_math.hpp"

namespace taihu::dnn {
namespace {

// Caffe: ceil rounding, then the clip applies when either dimension is padded.
index_t pooled_size(index_t in, index_t kernel, index_t stride, index_t pad, bool any_pad) {
  const index_t span = in + 2 * pad - kernel;
  index_t out = (span + stride - 1) / stride + 1;  // ceil, span >= 0 after validate()
  if (any_pad && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Output columns [lo, hi) whose tap at kernel column kw lands inside [0, width).
void tap_range(index_t kw, index_t stride, index_t pad, index_t width, index_t out_w, index_t* lo,
               index_t* hi) {
  // w = pw * stride - pad + kw in [0, width)
  const index_t first = pad - kw;  // pw * stride >= first
  *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  const index_t last = width - 1 + pad - kw;  // pw * stride <= last
  *hi = last < 0 ? 0 : std::min(out_w, last / stride + 1);
  if (*hi < *lo) *hi = *lo;
}

}  // namespace

index_t PoolingShape::out_h() const {
  return pooled_size(height, kernel_h, stride_h, pad_h, pad_h > 0 || pad_w > 0);
}
index_t PoolingShape::out_w() const {
  return pooled_size(width, kernel_w, stride_w, pad_w, pad_h > 0 || pad_w > 0);
}

void PoolingShape::validate(const char* what) const {
  ops::check_positive(what, "batch", batch);
  ops::check_positive(what, "channels", channels);
  ops::check_positive(what, "height", height);
  ops::check_positive(what, "width", width);
  ops::check_positive(what, "kernel_h", kernel_h);
  ops::check_positive(what, "kernel_w", kernel_w);
  ops::check_positive(what, "stride_h", stride_h);
  ops::check_positive(what, "stride_w", stride_w);
  ops::check_non_negative(what, "pad_h", pad_h);
  ops::check_non_negative(what, "pad_w", pad_w);
  if (pad_h >= kernel_h || pad_w >= kernel_w)
    ops::fail(what, "pad (" + std::to_string(pad_h) + ", " + std::to_string(pad_w) +
                        ") must be smaller than kernel (" + std::to_string(kernel_h) + ", " +
                        std::to_string(kernel_w) + ")");
  if (height + 2 * pad_h < kernel_h || width + 2 * pad_w < kernel_w)
    ops::fail(what, "kernel (" + std::to_string(kernel_h) + ", " + std::to_string(kernel_w) +
                        ") is larger than the padded input (" + std::to_string(height + 2 * pad_h) +
                        ", " + std::to_string(width + 2 * pad_w) + ")");
}

template <class T>
void pooling_forward(const PoolingShape& s, const T* x, T* y, std::int32_t* mask) {
  constexpr const char* what = "pooling_forward";
  s.validate(what);
  ops::check_pointers(what, 1, {{"x", x}, {"y", y}});
  if (s.height * s.width > std::numeric_limits<std::int32_t>::max())
    ops::fail(what, "height * width exceeds the int32 argmax mask");
  const index_t oh = s.out_h(), ow = s.out_w(), plane = s.height * s.width;
  const bool is_max = s.method == PoolMethod::max;
  // AVE divisor per output column / row: the window clipped to [-pad, in + pad).
  std::vector<T> col_size(static_cast<std::size_t>(ow));
  for (index_t pw = 0; pw < ow; ++pw) {
    const index_t ws = pw * s.stride_w - s.pad_w;
    col_size[pw] = static_cast<T>(std::min(ws + s.kernel_w, s.width + s.pad_w) - ws);
  }
  ops::parallel_tasks(s.batch * s.channels, std::max<index_t>(1, 4096 / (oh * ow)), [&](index_t p) {
    const T* xp = x + p * plane;
    T* yp = y + p * oh * ow;
    std::int32_t* mp = mask ? mask + p * oh * ow : nullptr;
    for (index_t ph = 0; ph < oh; ++ph) {
      const index_t hs_raw = ph * s.stride_h - s.pad_h;
      const index_t he_pad = std::min(hs_raw + s.kernel_h, s.height + s.pad_h);
      const index_t hs = std::max<index_t>(hs_raw, 0), he = std::min(he_pad, s.height);
      T* yr = yp + ph * ow;
      std::int32_t* mr = mp ? mp + ph * ow : nullptr;
      const T init = is_max ? std::numeric_limits<T>::lowest() : T(0);
      for (index_t pw = 0; pw < ow; ++pw) yr[pw] = init;
      if (mr)
        for (index_t pw = 0; pw < ow; ++pw) mr[pw] = -1;
      for (index_t h = hs; h < he; ++h) {
        const T* xr = xp + h * s.width;
        for (index_t kw = 0; kw < s.kernel_w; ++kw) {
          index_t lo = 0, hi = 0;
          tap_range(kw, s.stride_w, s.pad_w, s.width, ow, &lo, &hi);
          // 32-bit indices in the vector loops (AVX2 has no 64-bit multiply; the plane
          // fits int32, checked above).
          const auto off = static_cast<std::int32_t>(kw - s.pad_w);
          const auto sw = static_cast<std::int32_t>(s.stride_w);
          const auto lo32 = static_cast<std::int32_t>(lo), hi32 = static_cast<std::int32_t>(hi);
          if (!is_max) {
#pragma omp simd
            for (std::int32_t pw = lo32; pw < hi32; ++pw) yr[pw] += xr[pw * sw + off];
          } else if (mr) {
            const auto row = static_cast<std::int32_t>(h * s.width);
#pragma omp simd
            for (std::int32_t pw = lo32; pw < hi32; ++pw) {
              const std::int32_t at = pw * sw + off;
              const T v = xr[at], cur = yr[pw];
              const bool wins = v > cur;
              // Bit selects: a `?:` here becomes a branch and keeps the loop scalar.
              yr[pw] = ops::select(wins, v, cur);
              const std::int32_t keep = -static_cast<std::int32_t>(wins);
              mr[pw] = ((row + at) & keep) | (mr[pw] & ~keep);
            }
          } else {
#pragma omp simd
            for (std::int32_t pw = lo32; pw < hi32; ++pw) {
              const T v = xr[pw * sw + off];
              yr[pw] = v > yr[pw] ? v : yr[pw];
            }
          }
        }
      }
      if (!is_max) {
        const T rows = static_cast<T>(he_pad - hs_raw);
        for (index_t pw = 0; pw < ow; ++pw) yr[pw] /= rows * col_size[pw];
      }
    }
  });
}

template <class T>
void pooling_backward(const PoolingShape& s, const T* dy, const std::int32_t* mask, T* dx) {
  constexpr const char* what = "pooling_backward";
  s.validate(what);
  ops::check_pointers(what, 1, {{"dy", dy}, {"dx", dx}});
  const bool is_max = s.method == PoolMethod::max;
  if (is_max) ops::check_pointer(what, "mask", mask);
  const index_t oh = s.out_h(), ow = s.out_w(), plane = s.height * s.width;
  ops::parallel_tasks(s.batch * s.channels, std::max<index_t>(1, 4096 / plane), [&](index_t p) {
    T* dxp = dx + p * plane;
    const T* dyp = dy + p * oh * ow;
    std::fill(dxp, dxp + plane, T(0));
    if (is_max) {
      const std::int32_t* mp = mask + p * oh * ow;
      for (index_t i = 0; i < oh * ow; ++i)
        if (mp[i] >= 0) dxp[mp[i]] += dyp[i];
      return;
    }
    for (index_t ph = 0; ph < oh; ++ph) {
      const index_t hs_raw = ph * s.stride_h - s.pad_h;
      const index_t he_pad = std::min(hs_raw + s.kernel_h, s.height + s.pad_h);
      const index_t hs = std::max<index_t>(hs_raw, 0), he = std::min(he_pad, s.height);
      for (index_t pw = 0; pw < ow; ++pw) {
        const index_t ws_raw = pw * s.stride_w - s.pad_w;
        const index_t we_pad = std::min(ws_raw + s.kernel_w, s.width + s.pad_w);
        const index_t ws = std::max<index_t>(ws_raw, 0), we = std::min(we_pad, s.width);
        const T g = dyp[ph * ow + pw] / static_cast<T>((he_pad - hs_raw) * (we_pad - ws_raw));
        for (index_t h = hs; h < he; ++h)
          for (index_t w = ws; w < we; ++w) dxp[h * s.width + w] += g;
      }
    }
  });
}

template void pooling_forward<float>(const PoolingShape&, const float*, float*, std::int32_t*);
template void pooling_forward<double>(const PoolingShape&, const double*, double*, std::int32_t*);
template void pooling_backward<float>(const PoolingShape&, const float*, const std::int32_t*,
                                      float*);
template void pooling_backward<double>(const PoolingShape&, const double*, const std::int32_t*,
                                       double*);

}  // namespace taihu::dnn
