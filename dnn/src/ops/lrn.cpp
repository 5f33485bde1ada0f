// Local response normalization, Caffe's LRN (lrn.hpp).
// ACROSS_CHANNELS: per image, a running window sum of x^2 over channels, vectorized
// over a tile of spatial positions (one OpenMP task per (image, tile)); the tile runs
// the ISA's kernel (ops/kernels.hpp: k_lrn_across_fwd / _bwd).
// WITHIN_CHANNEL: a separable box sum of x^2 per plane (one task per plane).
// scale^-beta uses two square roots when beta == 0.75 (AlexNet, CaffeNet, GoogLeNet).
#include "taihu/dnn/lrn.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"
#include "ops/vec_math.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 16384;  // elements per thread below which one thread runs

// Pixels per across-channel task: whole planes up to kLrnTile, where the hardware
// prefetcher follows each plane's contiguous rows (512-pixel tiles with software
// prefetch measured 3-10% slower on Zen 4), cut down to 512 only while there are fewer
// than 4 tasks per thread.
index_t tile_width(const LrnParams& p) {
  constexpr index_t kSmallest = 512;
  const index_t hw = p.height * p.width;
  const index_t threads = arch::threads_for_call();
  index_t tiles = (hw + ops::kLrnTile - 1) / ops::kLrnTile;
  const index_t most = std::max<index_t>(tiles, (hw + kSmallest - 1) / kSmallest);
  while (tiles < most && p.batch * tiles < 4 * threads) ++tiles;
  return std::min(ops::kLrnTile, ((hw + tiles - 1) / tiles + 15) / 16 * 16);
}

index_t tile_grain(const LrnParams& p, index_t width) {
  return std::max<index_t>(1, kGrain / (std::min(width, p.height * p.width) * p.channels));
}

// The s^-0.75 kernel where beta is 0.75 (AlexNet, CaffeNet, GoogLeNet), else nullptr
// (ops::lrn_power then calls std::pow).
template <class T>
void (*pow075_for(double beta))(index_t, const T*, T*) {
  if (beta != 0.75) return nullptr;
  return ops::kernel_for<T>(&ops::FloatKernels::pow_minus_075, &ops::k_pow_minus_075<double>);
}

template <class T>
void power_neg_beta(index_t n, const T* s, double beta, T* out) {
  ops::lrn_power(pow075_for<T>(beta), beta, n, s, out);
}

// out[h][w] = sum of in over the size x size window centred on (h, w), zero padded.
template <class T>
void box_sum(const T* in, index_t height, index_t width, index_t size, T* tmp, T* out) {
  const index_t half = (size - 1) / 2;
  for (index_t h = 0; h < height; ++h) {
    const T* r = in + h * width;
    T* t = tmp + h * width;
    for (index_t w = 0; w < width; ++w) {
      T acc = 0;
      const index_t lo = std::max<index_t>(0, w - half), hi = std::min(width, w + half + 1);
      for (index_t v = lo; v < hi; ++v) acc += r[v];
      t[w] = acc;
    }
  }
  for (index_t h = 0; h < height; ++h) {
    T* o = out + h * width;
    std::fill(o, o + width, T(0));
    const index_t lo = std::max<index_t>(0, h - half), hi = std::min(height, h + half + 1);
    for (index_t u = lo; u < hi; ++u) {
      const T* t = tmp + u * width;
#pragma omp simd
      for (index_t w = 0; w < width; ++w) o[w] += t[w];
    }
  }
}

// The across-channel tile kernels: the ISA's float table, the generic templates for double.
template <class T>
ops::LrnAcrossTile<T> across_tile(const LrnParams& p, index_t width) {
  return {p.channels,
          p.height * p.width,
          width,
          p.local_size,
          static_cast<T>(p.alpha / static_cast<double>(p.local_size)),
          static_cast<T>(p.k),
          p.beta,
          pow075_for<T>(p.beta)};
}

template <class T>
auto lrn_across_fwd_kernel() {
  return ops::kernel_for<T>(&ops::FloatKernels::lrn_across_fwd, &ops::k_lrn_across_fwd<double>);
}

template <class T>
auto lrn_across_bwd_kernel() {
  return ops::kernel_for<T>(&ops::FloatKernels::lrn_across_bwd, &ops::k_lrn_across_bwd<double>);
}

}  // namespace

void LrnParams::validate(const char* what) const {
  ops::check_positive(what, "batch", batch);
  ops::check_positive(what, "channels", channels);
  ops::check_positive(what, "height", height);
  ops::check_positive(what, "width", width);
  ops::check_positive(what, "local_size", local_size);
  if (local_size % 2 == 0)
    ops::fail(what, "local_size is " + std::to_string(local_size) + ", expected an odd number");
  if (!std::isfinite(alpha) || !std::isfinite(beta) || !std::isfinite(k))
    ops::fail(what, "alpha, beta and k must be finite");
  if (region == LrnRegion::across_channels && !(k > 0.0))
    ops::fail(what, "k is " + std::to_string(k) + ", expected > 0");
}

template <class T>
void lrn_forward(const LrnParams& p, const T* x, T* y, T* scale) {
  constexpr const char* what = "lrn_forward";
  p.validate(what);
  ops::check_pointers(what, 1, {{"x", x}, {"y", y}, {"scale", scale}});
  const index_t hw = p.height * p.width, chw = p.channels * hw;
  if (p.region == LrnRegion::across_channels) {
    const index_t width = tile_width(p), tiles = (hw + width - 1) / width;
    const auto kernel = lrn_across_fwd_kernel<T>();
    ops::parallel_tasks(p.batch * tiles, tile_grain(p, width), [&](index_t task) {
      const index_t n = task / tiles, t0 = (task % tiles) * width;
      const index_t at = n * chw + t0;
      kernel(across_tile<T>(p, std::min(width, hw - t0)), x + at, scale + at, y + at);
    });
    return;
  }
  const T a = static_cast<T>(p.alpha / static_cast<double>(p.local_size * p.local_size));
  ops::parallel_tasks(p.batch * p.channels, std::max<index_t>(1, kGrain / hw), [&](index_t plane) {
    std::vector<T> sq(static_cast<std::size_t>(hw)), tmp(sq.size()), pw(sq.size());
    const T* xp = x + plane * hw;
    T* s = scale + plane * hw;
    for (index_t i = 0; i < hw; ++i) sq[i] = xp[i] * xp[i];
    box_sum(sq.data(), p.height, p.width, p.local_size, tmp.data(), s);
    for (index_t i = 0; i < hw; ++i) s[i] = T(1) + a * s[i];
    power_neg_beta(hw, s, p.beta, pw.data());
    T* yp = y + plane * hw;
    for (index_t i = 0; i < hw; ++i) yp[i] = xp[i] * pw[i];
  });
}

template <class T>
void lrn_backward(const LrnParams& p, const T* x, const T* y, const T* scale, const T* dy, T* dx) {
  constexpr const char* what = "lrn_backward";
  p.validate(what);
  ops::check_pointers(what, 1, {{"x", x}, {"y", y}, {"scale", scale}, {"dy", dy}, {"dx", dx}});
  const index_t hw = p.height * p.width, chw = p.channels * hw;
  const double n_window = p.region == LrnRegion::across_channels
                              ? static_cast<double>(p.local_size)
                              : static_cast<double>(p.local_size * p.local_size);
  const T cache_ratio = static_cast<T>(2.0 * p.alpha * p.beta / n_window);
  if (p.region == LrnRegion::across_channels) {
    const index_t width = tile_width(p), tiles = (hw + width - 1) / width;
    const auto kernel = lrn_across_bwd_kernel<T>();
    ops::parallel_tasks(p.batch * tiles, tile_grain(p, width), [&](index_t task) {
      const index_t n = task / tiles, t0 = (task % tiles) * width;
      const index_t at = n * chw + t0;
      kernel(across_tile<T>(p, std::min(width, hw - t0)), cache_ratio, x + at, y + at, scale + at,
             dy + at, dx + at);
    });
    return;
  }
  ops::parallel_tasks(p.batch * p.channels, std::max<index_t>(1, kGrain / hw), [&](index_t plane) {
    const index_t off = plane * hw;
    std::vector<T> ratio(static_cast<std::size_t>(hw)), tmp(ratio.size()), acc(ratio.size()),
        pw(ratio.size());
    for (index_t i = 0; i < hw; ++i) ratio[i] = dy[off + i] * y[off + i] / scale[off + i];
    box_sum(ratio.data(), p.height, p.width, p.local_size, tmp.data(), acc.data());
    power_neg_beta(hw, scale + off, p.beta, pw.data());
    for (index_t i = 0; i < hw; ++i)
      dx[off + i] = dy[off + i] * pw[i] - cache_ratio * x[off + i] * acc[i];
  });
}

template void lrn_forward<float>(const LrnParams&, const float*, float*, float*);
template void lrn_forward<double>(const LrnParams&, const double*, double*, double*);
template void lrn_backward<float>(const LrnParams&, const float*, const float*, const float*,
                                  const float*, float*);
template void lrn_backward<double>(const LrnParams&, const double*, const double*, const double*,
                                   const double*, double*);

}  // namespace taihu::dnn
