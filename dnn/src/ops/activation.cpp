// ReLU / LeakyReLU, Sigmoid and TanH (activation.hpp): argument checks, OpenMP split,
// then the ISA's float kernels or the double reference loops.
#include "taihu/dnn/activation.hpp"

#include <type_traits>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 16384;  // elements per thread below which one thread runs

}  // namespace

template <class T>
void relu_forward(index_t count, const T* x, T* y, Scalar<T> negative_slope) {
  ops::check_pointers("relu_forward", count, {{"x", x}, {"y", y}});
  const auto kernel = ops::kernel_for<T>(&ops::FloatKernels::relu_fwd, &ops::k_relu_fwd<double>);
  ops::parallel_for(count, kGrain,
                    [&](index_t b, index_t e) { kernel(e - b, x + b, y + b, negative_slope); });
}

template <class T>
void relu_backward(index_t count, const T* x, const T* dy, T* dx, Scalar<T> negative_slope) {
  ops::check_pointers("relu_backward", count, {{"x", x}, {"dy", dy}, {"dx", dx}});
  const auto kernel = ops::kernel_for<T>(&ops::FloatKernels::relu_bwd, &ops::k_relu_bwd<double>);
  ops::parallel_for(count, kGrain, [&](index_t b, index_t e) {
    kernel(e - b, x + b, dy + b, dx + b, negative_slope);
  });
}

template <class T>
void sigmoid_forward(index_t count, const T* x, T* y) {
  ops::check_pointers("sigmoid_forward", count, {{"x", x}, {"y", y}});
  const auto kernel =
      ops::kernel_for<T>(&ops::FloatKernels::sigmoid_fwd, &ops::k_sigmoid_fwd<double>);
  ops::parallel_for(count, kGrain, [&](index_t b, index_t e) { kernel(e - b, x + b, y + b); });
}

template <class T>
void sigmoid_backward(index_t count, const T* y, const T* dy, T* dx) {
  ops::check_pointers("sigmoid_backward", count, {{"y", y}, {"dy", dy}, {"dx", dx}});
  const auto kernel =
      ops::kernel_for<T>(&ops::FloatKernels::sigmoid_bwd, &ops::k_sigmoid_bwd<double>);
  ops::parallel_for(count, kGrain,
                    [&](index_t b, index_t e) { kernel(e - b, y + b, dy + b, dx + b); });
}

template <class T>
void tanh_forward(index_t count, const T* x, T* y) {
  ops::check_pointers("tanh_forward", count, {{"x", x}, {"y", y}});
  const auto kernel = ops::kernel_for<T>(&ops::FloatKernels::tanh_fwd, &ops::k_tanh_fwd<double>);
  ops::parallel_for(count, kGrain, [&](index_t b, index_t e) { kernel(e - b, x + b, y + b); });
}

template <class T>
void tanh_backward(index_t count, const T* y, const T* dy, T* dx) {
  ops::check_pointers("tanh_backward", count, {{"y", y}, {"dy", dy}, {"dx", dx}});
  const auto kernel = ops::kernel_for<T>(&ops::FloatKernels::tanh_bwd, &ops::k_tanh_bwd<double>);
  ops::parallel_for(count, kGrain,
                    [&](index_t b, index_t e) { kernel(e - b, y + b, dy + b, dx + b); });
}

#define TAIHU_DNN_INSTANTIATE(T)                                              \
  template void relu_forward<T>(index_t, const T*, T*, Scalar<T>);            \
  template void relu_backward<T>(index_t, const T*, const T*, T*, Scalar<T>); \
  template void sigmoid_forward<T>(index_t, const T*, T*);                    \
  template void sigmoid_backward<T>(index_t, const T*, const T*, T*);         \
  template void tanh_forward<T>(index_t, const T*, T*);                       \
  template void tanh_backward<T>(index_t, const T*, const T*, T*);
TAIHU_DNN_INSTANTIATE(float)
TAIHU_DNN_INSTANTIATE(double)
#undef TAIHU_DNN_INSTANTIATE

}  // namespace taihu::dnn
