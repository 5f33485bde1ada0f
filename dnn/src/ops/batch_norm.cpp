// Batch normalization, Caffe's BatchNorm (batch_norm.hpp): per-channel statistics
// accumulated in double, normalization and backward as streaming passes, one OpenMP
// task per channel.
#include "taihu/dnn/batch_norm.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

template <class T>
struct Kernels {
  double (*sum)(index_t, const T*);
  double (*dot)(index_t, const T*, const T*);
  double (*centered_sumsq)(index_t, const T*, T);
  void (*affine)(index_t, const T*, T, T, T*);
};

template <class T>
Kernels<T> kernels() {
  return {ops::kernel_for<T>(&ops::FloatKernels::sum, &ops::k_sum<double>),
          ops::kernel_for<T>(&ops::FloatKernels::dot, &ops::k_dot<double>),
          ops::kernel_for<T>(&ops::FloatKernels::centered_sumsq, &ops::k_centered_sumsq<double>),
          ops::kernel_for<T>(&ops::FloatKernels::affine, &ops::k_affine<double>)};
}

index_t tasks_grain(const BatchNormShape& s) {
  return std::max<index_t>(1, 16384 / std::max<index_t>(1, s.batch * s.spatial));
}

void check_eps(const char* what, double eps) {
  if (!(eps >= 0.0) || !std::isfinite(eps))
    ops::fail(what, "eps is " + std::to_string(eps) + ", expected a finite value >= 0");
}

// y = (x - mean) * inv_std for every image of channel c.
template <class T>
void normalize_channel(const BatchNormShape& s, const Kernels<T>& k, index_t c, T mean, T inv_std,
                       const T* x, T* y) {
  for (index_t n = 0; n < s.batch; ++n) {
    const index_t off = (n * s.channels + c) * s.spatial;
    k.affine(s.spatial, x + off, inv_std, -mean * inv_std, y + off);
  }
}

}  // namespace

void BatchNormShape::validate(const char* what) const {
  ops::check_positive(what, "batch", batch);
  ops::check_positive(what, "channels", channels);
  ops::check_positive(what, "spatial", spatial);
}

template <class T>
void batch_norm_forward_training(const BatchNormShape& s, Scalar<T> eps, const T* x, T* y, T* mean,
                                 T* var) {
  constexpr const char* what = "batch_norm_forward_training";
  s.validate(what);
  check_eps(what, static_cast<double>(eps));
  ops::check_pointers(what, 1, {{"x", x}, {"y", y}, {"mean", mean}, {"var", var}});
  const Kernels<T> k = kernels<T>();
  const auto m = static_cast<double>(s.batch * s.spatial);
  ops::parallel_tasks(s.channels, tasks_grain(s), [&](index_t c) {
    double sum = 0;
    for (index_t n = 0; n < s.batch; ++n)
      sum += k.sum(s.spatial, x + (n * s.channels + c) * s.spatial);
    const T mu = static_cast<T>(sum / m);
    double sq = 0;
    for (index_t n = 0; n < s.batch; ++n)
      sq += k.centered_sumsq(s.spatial, x + (n * s.channels + c) * s.spatial, mu);
    const T v = static_cast<T>(sq / m);
    mean[c] = mu;
    var[c] = v;
    normalize_channel(s, k, c, mu, static_cast<T>(1.0 / std::sqrt(static_cast<double>(v) + eps)), x,
                      y);
  });
}

template <class T>
void batch_norm_forward_inference(const BatchNormShape& s, Scalar<T> eps, const T* mean,
                                  const T* var, const T* x, T* y) {
  constexpr const char* what = "batch_norm_forward_inference";
  s.validate(what);
  check_eps(what, static_cast<double>(eps));
  ops::check_pointers(what, 1, {{"x", x}, {"y", y}, {"mean", mean}, {"var", var}});
  for (index_t c = 0; c < s.channels; ++c)
    if (!(var[c] + eps > T(0)))
      ops::fail(what, "var[" + std::to_string(c) + "] + eps is not positive");
  const Kernels<T> k = kernels<T>();
  ops::parallel_tasks(s.channels, tasks_grain(s), [&](index_t c) {
    normalize_channel(s, k, c, mean[c],
                      static_cast<T>(1.0 / std::sqrt(static_cast<double>(var[c]) + eps)), x, y);
  });
}

template <class T>
void batch_norm_update_moving_average(const BatchNormShape& s, Scalar<T> moving_average_fraction,
                                      const T* mean, const T* var, T* mean_sum, T* var_sum,
                                      T* scale_factor) {
  constexpr const char* what = "batch_norm_update_moving_average";
  s.validate(what);
  ops::check_pointers(what, 1,
                      {{"mean", mean},
                       {"var", var},
                       {"mean_sum", mean_sum},
                       {"var_sum", var_sum},
                       {"scale_factor", scale_factor}});
  const T f = moving_average_fraction;
  const index_t m = s.batch * s.spatial;
  const T correction =
      m > 1 ? static_cast<T>(static_cast<double>(m) / static_cast<double>(m - 1)) : T(1);
  *scale_factor = *scale_factor * f + T(1);
  for (index_t c = 0; c < s.channels; ++c) {
    mean_sum[c] = mean[c] + f * mean_sum[c];
    var_sum[c] = correction * var[c] + f * var_sum[c];
  }
}

template <class T>
void batch_norm_global_stats(index_t channels, const T* mean_sum, const T* var_sum,
                             Scalar<T> scale_factor, T* mean, T* var) {
  constexpr const char* what = "batch_norm_global_stats";
  ops::check_positive(what, "channels", channels);
  ops::check_pointers(what, channels,
                      {{"mean_sum", mean_sum}, {"var_sum", var_sum}, {"mean", mean}, {"var", var}});
  const T factor = scale_factor == T(0) ? T(0) : T(1) / scale_factor;
  for (index_t c = 0; c < channels; ++c) {
    mean[c] = mean_sum[c] * factor;
    var[c] = var_sum[c] * factor;
  }
}

template <class T>
void batch_norm_backward(const BatchNormShape& s, Scalar<T> eps, const T* y, const T* var,
                         const T* dy, T* dx, bool use_global_stats) {
  constexpr const char* what = "batch_norm_backward";
  s.validate(what);
  check_eps(what, static_cast<double>(eps));
  ops::check_pointers(what, 1, {{"var", var}, {"dy", dy}, {"dx", dx}});
  if (!use_global_stats) ops::check_pointer(what, "y", y);
  const Kernels<T> k = kernels<T>();
  const auto m = static_cast<double>(s.batch * s.spatial);
  ops::parallel_tasks(s.channels, tasks_grain(s), [&](index_t c) {
    const double inv = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps);
    const auto inv_std = static_cast<T>(inv);
    if (use_global_stats) {
      for (index_t n = 0; n < s.batch; ++n) {
        const index_t off = (n * s.channels + c) * s.spatial;
        k.affine(s.spatial, dy + off, inv_std, T(0), dx + off);
      }
      return;
    }
    double sum_dy = 0, sum_dyy = 0;
    for (index_t n = 0; n < s.batch; ++n) {
      const index_t off = (n * s.channels + c) * s.spatial;
      sum_dy += k.sum(s.spatial, dy + off);
      sum_dyy += k.dot(s.spatial, dy + off, y + off);
    }
    // dx = inv * dy - inv * mean(dy) - inv * mean(dy * y) * y
    const auto shift = static_cast<T>(-inv * sum_dy / m);
    const auto slope = static_cast<T>(-inv * sum_dyy / m);
    for (index_t n = 0; n < s.batch; ++n) {
      const index_t off = (n * s.channels + c) * s.spatial;
      const T* g = dy + off;
      const T* yy = y + off;
      T* o = dx + off;
#pragma omp simd
      for (index_t i = 0; i < s.spatial; ++i) o[i] = inv_std * g[i] + slope * yy[i] + shift;
    }
  });
}

#define TAIHU_DNN_INSTANTIATE(T)                                                                   \
  template void batch_norm_forward_training<T>(const BatchNormShape&, Scalar<T>, const T*, T*, T*, \
                                               T*);                                                \
  template void batch_norm_forward_inference<T>(const BatchNormShape&, Scalar<T>, const T*,        \
                                                const T*, const T*, T*);                           \
  template void batch_norm_update_moving_average<T>(const BatchNormShape&, Scalar<T>, const T*,    \
                                                    const T*, T*, T*, T*);                         \
  template void batch_norm_global_stats<T>(index_t, const T*, const T*, Scalar<T>, T*, T*);        \
  template void batch_norm_backward<T>(const BatchNormShape&, Scalar<T>, const T*, const T*,       \
                                       const T*, T*, bool);
TAIHU_DNN_INSTANTIATE(float)
TAIHU_DNN_INSTANTIATE(double)
#undef TAIHU_DNN_INSTANTIATE

}  // namespace taihu::dnn
