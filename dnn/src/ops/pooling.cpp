// Max and average pooling with Caffe's geometry (pooling.hpp). One OpenMP task per
// (image, channel) plane; inside, each output row is built kernel-row by kernel-column
// over all output columns at once, so the inner loop is a vector loop without bounds
// tests (the column range where the tap lands inside the input is computed up front);
// horizontal strides 1 and 2 are compile-time constants there. AVE backward runs the
// same tap loops in reverse (dy / window size added to each tap's input), or for
// short rows (<= 16 outputs) Caffe's window-by-window loop.
// The visiting order per output (h then w, strict >) matches Caffe's argmax ties.
// Float pools of the common geometries run pool_kernels.hpp's per-ISA kernels instead,
// with the same values and masks: MAX 2x2 stride 2 without padding (and a backward that
// stores each input once instead of zero-filling and scattering), and the rows of
// stride-2 pools of kernel width 2 or 3 without horizontal padding (MAX with a mask, AVE),
// and AVE of planes with short rows, eight planes at a time.
#include "taihu/dnn/pooling.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "ops/check.hpp"
#include "core/parallel.hpp"
#include "ops/pool_kernels.hpp"
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

namespace {

// One output row of one plane: taps of input rows [hs, he) over output columns.
// SW is the horizontal stride when it is a compile-time constant (1, 2: the common
// ones, whose strided reads GCC vectorises as loads + permutes), 0 for a runtime one.
// Output columns [first, ow) only (the ones before are done by PoolKernels::row_s2).
template <int SW, class T>
void pool_row_forward(const PoolingShape& s, const T* xp, index_t ph, index_t first, index_t ow, bool is_max, T* yr,
                      std::int32_t* mr, const T* col_size) {
  const index_t sw = SW > 0 ? SW : s.stride_w;
  const index_t hs_raw = ph * s.stride_h - s.pad_h;
  const index_t he_pad = std::min(hs_raw + s.kernel_h, s.height + s.pad_h);
  const index_t hs = std::max<index_t>(hs_raw, 0), he = std::min(he_pad, s.height);
  const T init = is_max ? std::numeric_limits<T>::lowest() : T(0);
  for (index_t pw = first; pw < ow; ++pw) yr[pw] = init;
  if (mr)
    for (index_t pw = first; pw < ow; ++pw) mr[pw] = -1;
  for (index_t h = hs; h < he; ++h) {
    const T* xr = xp + h * s.width;
    for (index_t kw = 0; kw < s.kernel_w; ++kw) {
      index_t lo = 0, hi = 0;
      tap_range(kw, sw, s.pad_w, s.width, ow, &lo, &hi);
      lo = std::max(lo, first);
      hi = std::max(hi, lo);
      // 32-bit indices in the vector loops (AVX2 has no 64-bit multiply; the plane
      // fits int32, checked by the caller).
      const auto off = static_cast<std::int32_t>(kw - s.pad_w);
      const auto lo32 = static_cast<std::int32_t>(lo), hi32 = static_cast<std::int32_t>(hi);
      const auto sw32 = static_cast<std::int32_t>(sw);
      const T* xo = xr + off;
      if (!is_max) {
#pragma omp simd
        for (std::int32_t pw = lo32; pw < hi32; ++pw) yr[pw] += xo[pw * sw32];
      } else if (mr) {
        const auto base = static_cast<std::int32_t>(h * s.width) + off;
#pragma omp simd
        for (std::int32_t pw = lo32; pw < hi32; ++pw) {
          const T v = xo[pw * sw32], cur = yr[pw];
          const bool wins = v > cur;
          // Bit selects: a `?:` here becomes a branch and keeps the loop scalar.
          yr[pw] = ops::select(wins, v, cur);
          const std::int32_t keep = -static_cast<std::int32_t>(wins);
          mr[pw] = ((base + pw * sw32) & keep) | (mr[pw] & ~keep);
        }
      } else {
#pragma omp simd
        for (std::int32_t pw = lo32; pw < hi32; ++pw) {
          const T v = xo[pw * sw32];
          yr[pw] = v > yr[pw] ? v : yr[pw];
        }
      }
    }
  }
  if (!is_max) {
    const T rows = static_cast<T>(he_pad - hs_raw);
    for (index_t pw = first; pw < ow; ++pw) yr[pw] /= rows * col_size[pw];
  }
}

// AVE backward of one output row: each tap adds dy / window size to its input.
template <int SW, class T>
void pool_row_backward_ave(const PoolingShape& s, const T* dyr, index_t ph, index_t ow, const T* col_size, T* scaled,
                           T* dxp) {
  const index_t sw = SW > 0 ? SW : s.stride_w;
  const index_t hs_raw = ph * s.stride_h - s.pad_h;
  const index_t he_pad = std::min(hs_raw + s.kernel_h, s.height + s.pad_h);
  const index_t hs = std::max<index_t>(hs_raw, 0), he = std::min(he_pad, s.height);
  const T rows = static_cast<T>(he_pad - hs_raw);
  for (index_t pw = 0; pw < ow; ++pw) scaled[pw] = dyr[pw] / (rows * col_size[pw]);
  for (index_t h = hs; h < he; ++h) {
    T* xr = dxp + h * s.width;
    for (index_t kw = 0; kw < s.kernel_w; ++kw) {
      index_t lo = 0, hi = 0;
      tap_range(kw, sw, s.pad_w, s.width, ow, &lo, &hi);
      const auto sw32 = static_cast<std::int32_t>(sw);
      const auto lo32 = static_cast<std::int32_t>(lo), hi32 = static_cast<std::int32_t>(hi);
      T* xo = xr + (kw - s.pad_w);
      // Distinct targets within one tap (stride >= 1), so the loop is a vector loop.
#pragma omp simd
      for (std::int32_t pw = lo32; pw < hi32; ++pw) xo[pw * sw32] += scaled[pw];
    }
  }
}

template <class T>
std::vector<T> window_widths(const PoolingShape& s, index_t ow) {
  // AVE divisor per output column: the window clipped to [-pad, in + pad).
  std::vector<T> col_size(static_cast<std::size_t>(ow));
  for (index_t pw = 0; pw < ow; ++pw) {
    const index_t ws = pw * s.stride_w - s.pad_w;
    col_size[static_cast<std::size_t>(pw)] = static_cast<T>(std::min(ws + s.kernel_w, s.width + s.pad_w) - ws);
  }
  return col_size;
}

// f(first plane, planes) over the runs of kAveLanesPlanes planes (the lanes kernels'
// unit), threads split as the plane loops' (about 4096 elements a task).
template <class F>
void for_plane_groups(const PoolingShape& s, index_t elements_per_plane, F&& f) {
  constexpr index_t kGroup = ops::kAveLanesPlanes;
  const index_t planes = s.batch * s.channels, groups = (planes + kGroup - 1) / kGroup;
  ops::parallel_tasks(groups, std::max<index_t>(1, 4096 / (kGroup * elements_per_plane)), [&](index_t g) {
    f(g * kGroup, std::min(kGroup, planes - g * kGroup));
  });
}

}  // namespace

template <class T>
void pooling_forward(const PoolingShape& s, const T* x, T* y, std::int32_t* mask) {
  constexpr const char* what = "pooling_forward";
  s.validate(what);
  ops::check_pointers(what, 1, {{"x", x}, {"y", y}});
  if (s.height * s.width > std::numeric_limits<std::int32_t>::max())
    ops::fail(what, "height * width exceeds the int32 argmax mask");
  const index_t oh = s.out_h(), ow = s.out_w(), plane = s.height * s.width;
  const bool is_max = s.method == PoolMethod::max;
  if constexpr (std::is_same_v<T, float>) {
    if (ops::pool_max2x2_applies(s)) {
      const ops::PoolKernels& k = ops::pool_kernels();
      ops::parallel_tasks(s.batch * s.channels, std::max<index_t>(1, 4096 / (oh * ow)), [&](index_t p) {
        k.max2x2_forward(s.height, s.width, x + p * plane, y + p * oh * ow, mask ? mask + p * oh * ow : nullptr);
      });
      return;
    }
    if (ops::ave_lanes_applies(s)) {
      const ops::PoolKernels& k = ops::pool_kernels();
      const std::vector<float> col_size = window_widths<float>(s, ow);
      for_plane_groups(s, oh * ow, [&](index_t p, index_t planes) {
        k.ave_lanes_forward(s, col_size.data(), x + p * plane, y + p * oh * ow, planes);
      });
      return;
    }
  }
  const std::vector<T> col_size = window_widths<T>(s, ow);
  [[maybe_unused]] const ops::PoolKernels& kernels = ops::pool_kernels();
  ops::parallel_tasks(s.batch * s.channels, std::max<index_t>(1, 4096 / (oh * ow)), [&](index_t p) {
    const T* xp = x + p * plane;
    T* yp = y + p * oh * ow;
    std::int32_t* mp = mask ? mask + p * oh * ow : nullptr;
    for (index_t ph = 0; ph < oh; ++ph) {
      T* yr = yp + ph * ow;
      std::int32_t* mr = mp ? mp + ph * ow : nullptr;
      index_t first = 0;
      if constexpr (std::is_same_v<T, float>) {
        first = kernels.row_s2(s, xp, ph, ow, yr, mr, col_size.data());
      }
      if (first == ow) continue;
      if (s.stride_w == 1) pool_row_forward<1>(s, xp, ph, first, ow, is_max, yr, mr, col_size.data());
      else if (s.stride_w == 2) pool_row_forward<2>(s, xp, ph, first, ow, is_max, yr, mr, col_size.data());
      else pool_row_forward<0>(s, xp, ph, first, ow, is_max, yr, mr, col_size.data());
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
  if constexpr (std::is_same_v<T, float>) {
    if (ops::pool_max2x2_applies(s)) {
      const ops::PoolKernels& k = ops::pool_kernels();
      ops::parallel_tasks(s.batch * s.channels, std::max<index_t>(1, 4096 / plane), [&](index_t p) {
        k.max2x2_backward(s.height, s.width, dy + p * oh * ow, mask + p * oh * ow, dx + p * plane);
      });
      return;
    }
    if (ops::ave_lanes_applies(s)) {
      const ops::PoolKernels& k = ops::pool_kernels();
      const std::vector<float> col_size = window_widths<float>(s, ow);
      for_plane_groups(s, plane, [&](index_t p, index_t planes) {
        k.ave_lanes_backward(s, col_size.data(), dy + p * oh * ow, dx + p * plane, planes);
      });
      return;
    }
  }
  const std::vector<T> col_size = window_widths<T>(s, ow);
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
    if (ow <= 16) {
      // Short rows: window by window, as Caffe's loop (the tap loops below would spend
      // their time on loop set-up).
      for (index_t ph = 0; ph < oh; ++ph)
        for (index_t pw = 0; pw < ow; ++pw) {
          index_t hs, he, ws, we;
          const T g = dyp[ph * ow + pw] / ops::ave_window(s, ph, pw, col_size.data(), &hs, &he, &ws, &we);
          for (index_t h = hs; h < he; ++h)
            for (index_t w = ws; w < we; ++w) dxp[h * s.width + w] += g;
        }
      return;
    }
    constexpr index_t kStackRow = 256;
    T stack_row[kStackRow];
    std::vector<T> heap_row(ow > kStackRow ? static_cast<std::size_t>(ow) : 0);
    T* scaled = ow > kStackRow ? heap_row.data() : stack_row;
    for (index_t ph = 0; ph < oh; ++ph) {
      const T* dyr = dyp + ph * ow;
      if (s.stride_w == 1) pool_row_backward_ave<1>(s, dyr, ph, ow, col_size.data(), scaled, dxp);
      else if (s.stride_w == 2) pool_row_backward_ave<2>(s, dyr, ph, ow, col_size.data(), scaled, dxp);
      else pool_row_backward_ave<0>(s, dyr, ph, ow, col_size.data(), scaled, dxp);
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
