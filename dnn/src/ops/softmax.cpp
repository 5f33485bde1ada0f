// Softmax over an axis and SoftmaxWithLoss (softmax.hpp), Caffe semantics.
#include "taihu/dnn/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 8192;

void check_sizes(const char* what, index_t outer, index_t channels, index_t inner) {
  ops::check_non_negative(what, "outer", outer);
  ops::check_positive(what, "channels", channels);
  ops::check_non_negative(what, "inner", inner);
}

// Class index at one position, or -1 when ignored. Throws for out-of-range labels.
template <class T>
index_t label_at(const SoftmaxLossParams& p, const T* labels, index_t pos, const char* what) {
  const T raw = labels[pos];
  if (!std::isfinite(raw)) ops::fail(what, "labels[" + std::to_string(pos) + "] is not finite");
  const auto label = static_cast<index_t>(raw);
  if (p.has_ignore_label && label == p.ignore_label) return -1;
  if (label < 0 || label >= p.channels)
    ops::fail(what, "labels[" + std::to_string(pos) + "] is " + std::to_string(label) +
                        ", expected 0.." + std::to_string(p.channels - 1) +
                        (p.has_ignore_label ? " or ignore_label " + std::to_string(p.ignore_label)
                                            : std::string()));
  return label;
}

}  // namespace

void SoftmaxLossParams::validate(const char* what) const {
  check_sizes(what, outer, channels, inner);
}

template <class T>
void softmax_forward(index_t outer, index_t channels, index_t inner, const T* x, T* y) {
  constexpr const char* what = "softmax_forward";
  check_sizes(what, outer, channels, inner);
  const index_t slice = channels * inner;
  ops::check_pointers(what, outer * slice, {{"x", x}, {"y", y}});
  if (outer * slice == 0) return;
  const auto kernel =
      ops::kernel_for<T>(&ops::FloatKernels::softmax_slice, &ops::k_softmax_slice<double>);
  ops::parallel_tasks(outer, std::max<index_t>(1, kGrain / slice),
                      [&](index_t o) { kernel(channels, inner, x + o * slice, y + o * slice); });
}

template <class T>
void softmax_backward(index_t outer, index_t channels, index_t inner, const T* y, const T* dy,
                      T* dx) {
  constexpr const char* what = "softmax_backward";
  check_sizes(what, outer, channels, inner);
  const index_t slice = channels * inner;
  ops::check_pointers(what, outer * slice, {{"y", y}, {"dy", dy}, {"dx", dx}});
  if (outer * slice == 0) return;
  const auto kernel =
      ops::kernel_for<T>(&ops::FloatKernels::softmax_bwd_slice, &ops::k_softmax_bwd_slice<double>);
  ops::parallel_tasks(outer, std::max<index_t>(1, kGrain / slice), [&](index_t o) {
    kernel(channels, inner, y + o * slice, dy + o * slice, dx + o * slice);
  });
}

template <class T>
T softmax_loss_normalizer(const SoftmaxLossParams& p, const T* labels) {
  constexpr const char* what = "softmax_loss_normalizer";
  p.validate(what);
  double n = 1;
  switch (p.normalization) {
    case LossNormalization::full:
      n = static_cast<double>(p.outer * p.inner);
      break;
    case LossNormalization::valid: {
      ops::check_pointers(what, p.outer * p.inner, {{"labels", labels}});
      index_t valid = 0;
      for (index_t i = 0; i < p.outer * p.inner; ++i)
        valid += label_at(p, labels, i, what) >= 0 ? 1 : 0;
      n = static_cast<double>(valid);
      break;
    }
    case LossNormalization::batch_size:
      n = static_cast<double>(p.outer);
      break;
    case LossNormalization::none:
      n = 1;
      break;
  }
  return static_cast<T>(std::max(1.0, n));
}

template <class T>
T softmax_loss_forward(const SoftmaxLossParams& p, const T* x, const T* labels, T* prob) {
  constexpr const char* what = "softmax_loss_forward";
  p.validate(what);
  const index_t positions = p.outer * p.inner;
  ops::check_pointers(what, positions, {{"x", x}, {"labels", labels}, {"prob", prob}});
  // Validate every label before any work, so a bad one throws from this thread.
  for (index_t i = 0; i < positions; ++i) label_at(p, labels, i, what);
  softmax_forward<T>(p.outer, p.channels, p.inner, x, prob);
  double loss = 0;
  for (index_t o = 0; o < p.outer; ++o)
    for (index_t j = 0; j < p.inner; ++j) {
      const index_t label = label_at(p, labels, o * p.inner + j, what);
      if (label < 0) continue;
      const T pr = prob[(o * p.channels + label) * p.inner + j];
      loss -= std::log(std::max(static_cast<double>(pr),
                                static_cast<double>(std::numeric_limits<float>::min())));
    }
  return static_cast<T>(loss / static_cast<double>(softmax_loss_normalizer<T>(p, labels)));
}

template <class T>
void softmax_loss_backward(const SoftmaxLossParams& p, const T* prob, const T* labels,
                           Scalar<T> loss_weight, T* dx) {
  constexpr const char* what = "softmax_loss_backward";
  p.validate(what);
  const index_t positions = p.outer * p.inner;
  ops::check_pointers(what, positions, {{"prob", prob}, {"labels", labels}, {"dx", dx}});
  for (index_t i = 0; i < positions; ++i) label_at(p, labels, i, what);  // throws on a bad one
  const T factor = loss_weight / softmax_loss_normalizer<T>(p, labels);
  const index_t slice = p.channels * p.inner;
  ops::parallel_tasks(p.outer, std::max<index_t>(1, kGrain / slice), [&](index_t o) {
    for (index_t j = 0; j < p.inner; ++j) {
      const auto raw = static_cast<index_t>(labels[o * p.inner + j]);  // checked above
      const bool ignored = p.has_ignore_label && raw == p.ignore_label;
      for (index_t c = 0; c < p.channels; ++c) {
        const index_t at = o * slice + c * p.inner + j;
        dx[at] = ignored ? T(0) : (prob[at] - (c == raw ? T(1) : T(0))) * factor;
      }
    }
  });
}

template void softmax_forward<float>(index_t, index_t, index_t, const float*, float*);
template void softmax_forward<double>(index_t, index_t, index_t, const double*, double*);
template void softmax_backward<float>(index_t, index_t, index_t, const float*, const float*,
                                      float*);
template void softmax_backward<double>(index_t, index_t, index_t, const double*, const double*,
                                       double*);
template float softmax_loss_normalizer<float>(const SoftmaxLossParams&, const float*);
template double softmax_loss_normalizer<double>(const SoftmaxLossParams&, const double*);
template float softmax_loss_forward<float>(const SoftmaxLossParams&, const float*, const float*,
                                           float*);
template double softmax_loss_forward<double>(const SoftmaxLossParams&, const double*, const double*,
                                             double*);
template void softmax_loss_backward<float>(const SoftmaxLossParams&, const float*, const float*,
                                           Scalar<float>, float*);
template void softmax_loss_backward<double>(const SoftmaxLossParams&, const double*, const double*,
                                            Scalar<double>, double*);

}  // namespace taihu::dnn
