// Scale / Bias (scale.hpp): y = x * scale[d] + bias[d] over [outer][dim][inner].
#include "taihu/dnn/scale.hpp"

#include <algorithm>
#include <type_traits>

#include "ops/check.hpp"
#include "ops/float_kernels.hpp"
#include "ops/kernels.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {
namespace {

constexpr index_t kGrain = 16384;

void check_sizes(const char* what, index_t outer, index_t dim, index_t inner) {
  ops::check_non_negative(what, "outer", outer);
  ops::check_positive(what, "dim", dim);
  ops::check_non_negative(what, "inner", inner);
}

template <class T>
auto affine_kernel() {
  return ops::kernel_for<T>(&ops::FloatKernels::affine, &ops::k_affine<double>);
}

}  // namespace

template <class T>
void scale_forward(index_t outer, index_t dim, index_t inner, const T* x, const T* scale,
                   const T* bias, T* y) {
  constexpr const char* what = "scale_forward";
  check_sizes(what, outer, dim, inner);
  const index_t count = outer * dim * inner;
  ops::check_pointers(what, count, {{"x", x}, {"y", y}});
  if (count == 0) return;
  if (inner == 1) {
    ops::parallel_tasks(outer, std::max<index_t>(1, kGrain / dim), [&](index_t o) {
      const T* xo = x + o * dim;
      T* yo = y + o * dim;
#pragma omp simd
      for (index_t d = 0; d < dim; ++d)
        yo[d] = xo[d] * (scale ? scale[d] : T(1)) + (bias ? bias[d] : T(0));
    });
    return;
  }
  const auto kernel = affine_kernel<T>();
  ops::parallel_tasks(outer * dim, std::max<index_t>(1, kGrain / inner), [&](index_t row) {
    const index_t d = row % dim;
    kernel(inner, x + row * inner, scale ? scale[d] : T(1), bias ? bias[d] : T(0), y + row * inner);
  });
}

template <class T>
void scale_backward(index_t outer, index_t dim, index_t inner, const T* x, const T* scale,
                    const T* dy, T* dx, T* dscale, T* dbias, bool accumulate) {
  constexpr const char* what = "scale_backward";
  check_sizes(what, outer, dim, inner);
  const index_t count = outer * dim * inner;
  ops::check_pointers(what, count, {{"dy", dy}});
  if (dscale != nullptr) ops::check_pointers(what, count, {{"x", x}});
  // Parameter gradients first (dx may overwrite dy): one task per d, summing over outer.
  if (dscale != nullptr || dbias != nullptr) {
    ops::parallel_tasks(dim, std::max<index_t>(1, kGrain / std::max<index_t>(1, outer * inner)),
                        [&](index_t d) {
                          double ds = 0, db = 0;
                          for (index_t o = 0; o < outer; ++o) {
                            const index_t off = (o * dim + d) * inner;
                            if (dscale) ds += ops::k_dot<T>(inner, dy + off, x + off);
                            if (dbias) db += ops::k_sum<T>(inner, dy + off);
                          }
                          if (dscale)
                            dscale[d] = static_cast<T>(ds) + (accumulate ? dscale[d] : T(0));
                          if (dbias) dbias[d] = static_cast<T>(db) + (accumulate ? dbias[d] : T(0));
                        });
  }
  if (dx != nullptr) scale_forward<T>(outer, dim, inner, dy, scale, nullptr, dx);
}

template void scale_forward<float>(index_t, index_t, index_t, const float*, const float*,
                                   const float*, float*);
template void scale_forward<double>(index_t, index_t, index_t, const double*, const double*,
                                    const double*, double*);
template void scale_backward<float>(index_t, index_t, index_t, const float*, const float*,
                                    const float*, float*, float*, float*, bool);
template void scale_backward<double>(index_t, index_t, index_t, const double*, const double*,
                                     const double*, double*, double*, double*, bool);

}  // namespace taihu::dnn
