// Eltwise SUM / PROD / MAX (eltwise.hpp). Each thread walks its chunk in cache-sized
// blocks so the output stays in L1/L2 while the inputs stream through.
#include "taihu/dnn/eltwise.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 16384;
constexpr index_t kBlock = 4096;

template <class T>
struct Kernels {
  void (*axpby)(index_t, T, const T*, T, T*);
  void (*mul)(index_t, const T*, const T*, T*);
  void (*max_first)(index_t, const T*, const T*, T*, std::int32_t*);
  void (*max_next)(index_t, const T*, std::int32_t, T*, std::int32_t*);
};

template <class T>
Kernels<T> kernels() {
  return {ops::kernel_for<T>(&ops::FloatKernels::axpby, &ops::k_axpby<double>),
          ops::kernel_for<T>(&ops::FloatKernels::mul, &ops::k_mul<double>),
          ops::kernel_for<T>(&ops::FloatKernels::max_first, &ops::k_max_first<double>),
          ops::kernel_for<T>(&ops::FloatKernels::max_next, &ops::k_max_next<double>)};
}

template <class T>
void check_args(const char* what, EltwiseOp op, index_t count, std::span<const T* const> inputs,
                std::span<const T> coeffs) {
  ops::check_non_negative(what, "count", count);
  if (inputs.size() < 2)
    ops::fail(what, "inputs has " + std::to_string(inputs.size()) + " entries, expected >= 2");
  if (op == EltwiseOp::sum && !coeffs.empty() && coeffs.size() != inputs.size())
    ops::fail(what, "coeffs has " + std::to_string(coeffs.size()) + " entries, expected " +
                        std::to_string(inputs.size()) + " (one per input) or none");
  if (count == 0) return;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == nullptr) ops::fail(what, "inputs[" + std::to_string(i) + "] is null");
}

}  // namespace

template <class T>
void eltwise_forward(EltwiseOp op, index_t count, std::span<const Scalar<T>* const> inputs,
                     std::span<const Scalar<T>> coeffs, T* y, std::int32_t* mask) {
  constexpr const char* what = "eltwise_forward";
  check_args<T>(what, op, count, inputs, coeffs);
  ops::check_pointers(what, count, {{"y", y}});
  const Kernels<T> k = kernels<T>();
  const auto coeff = [&](std::size_t i) { return coeffs.empty() ? T(1) : coeffs[i]; };
  ops::parallel_for(count, kGrain, [&](index_t begin, index_t end) {
    for (index_t b = begin; b < end; b += kBlock) {
      const index_t n = std::min(kBlock, end - b);
      std::int32_t* m = mask ? mask + b : nullptr;
      switch (op) {
        case EltwiseOp::sum:
          k.axpby(n, coeff(0), inputs[0] + b, T(0), y + b);
          for (std::size_t i = 1; i < inputs.size(); ++i)
            k.axpby(n, coeff(i), inputs[i] + b, T(1), y + b);
          break;
        case EltwiseOp::prod:
          k.mul(n, inputs[0] + b, inputs[1] + b, y + b);
          for (std::size_t i = 2; i < inputs.size(); ++i) k.mul(n, y + b, inputs[i] + b, y + b);
          break;
        case EltwiseOp::max:
          k.max_first(n, inputs[0] + b, inputs[1] + b, y + b, m);
          for (std::size_t i = 2; i < inputs.size(); ++i)
            k.max_next(n, inputs[i] + b, static_cast<std::int32_t>(i), y + b, m);
          break;
      }
    }
  });
}

template <class T>
void eltwise_backward(EltwiseOp op, index_t count, std::span<const Scalar<T>* const> inputs,
                      std::span<const Scalar<T>> coeffs, const std::int32_t* mask, const T* dy,
                      index_t which, T* dx) {
  constexpr const char* what = "eltwise_backward";
  check_args<T>(what, op, count, inputs, coeffs);
  if (which < 0 || which >= static_cast<index_t>(inputs.size()))
    ops::fail(what, "which is " + std::to_string(which) + ", expected 0.." +
                        std::to_string(inputs.size() - 1));
  ops::check_pointers(what, count, {{"dy", dy}, {"dx", dx}});
  if (op == EltwiseOp::max) ops::check_pointers(what, count, {{"mask", mask}});
  const Kernels<T> k = kernels<T>();
  const auto w = static_cast<std::size_t>(which);
  ops::parallel_for(count, kGrain, [&](index_t begin, index_t end) {
    for (index_t b = begin; b < end; b += kBlock) {
      const index_t n = std::min(kBlock, end - b);
      switch (op) {
        case EltwiseOp::sum:
          k.axpby(n, coeffs.empty() ? T(1) : coeffs[w], dy + b, T(0), dx + b);
          break;
        case EltwiseOp::prod: {
          bool first = true;
          for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (i == w) continue;
            k.mul(n, first ? dy + b : dx + b, inputs[i] + b, dx + b);
            first = false;
          }
          break;
        }
        case EltwiseOp::max: {
          const std::int32_t* m = mask + b;
          const auto iw = static_cast<std::int32_t>(which);
          const T* g = dy + b;
          T* o = dx + b;
#pragma omp simd
          for (index_t i = 0; i < n; ++i) o[i] = ops::select(m[i] == iw, g[i], T(0));
          break;
        }
      }
    }
  });
}

template void eltwise_forward<float>(EltwiseOp, index_t, std::span<const float* const>,
                                     std::span<const float>, float*, std::int32_t*);
template void eltwise_forward<double>(EltwiseOp, index_t, std::span<const double* const>,
                                      std::span<const double>, double*, std::int32_t*);
template void eltwise_backward<float>(EltwiseOp, index_t, std::span<const float* const>,
                                      std::span<const float>, const std::int32_t*, const float*,
                                      index_t, float*);
template void eltwise_backward<double>(EltwiseOp, index_t, std::span<const double* const>,
                                       std::span<const double>, const std::int32_t*, const double*,
                                       index_t, double*);

}  // namespace taihu::dnn
