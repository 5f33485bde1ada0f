// Inner product (inner_product.hpp): three taihu::gemm calls, Caffe's layout.
#include "taihu/dnn/inner_product.hpp"

#include <algorithm>

#include "ops/check.hpp"
#include "ops/gemm_t.hpp"
#include "core/parallel.hpp"

namespace taihu::dnn {

void InnerProductShape::validate(const char* what) const {
  ops::check_non_negative(what, "batch", batch);
  ops::check_positive(what, "inputs", inputs);
  ops::check_positive(what, "outputs", outputs);
}

template <class T>
void inner_product_forward(const InnerProductShape& s, const T* x, const T* weight, const T* bias,
                           T* y) {
  constexpr const char* what = "inner_product_forward";
  s.validate(what);
  if (s.batch == 0) return;
  ops::check_pointers(what, 1, {{"x", x}, {"weight", weight}, {"y", y}});
  const index_t m = s.batch, n = s.outputs, k = s.inputs;
  if (bias != nullptr)
    ops::parallel_tasks(m, std::max<index_t>(1, 16384 / n),
                        [&](index_t r) { std::copy(bias, bias + n, y + r * n); });
  ops::gemm_rm<T>(false, !s.transpose, m, n, k, T(1), x, k, weight, s.transpose ? n : k,
                  bias != nullptr ? T(1) : T(0), y, n);
}

template <class T>
void inner_product_backward_data(const InnerProductShape& s, const T* dy, const T* weight, T* dx) {
  constexpr const char* what = "inner_product_backward_data";
  s.validate(what);
  if (s.batch == 0) return;
  ops::check_pointers(what, 1, {{"dy", dy}, {"weight", weight}, {"dx", dx}});
  const index_t m = s.batch, n = s.outputs, k = s.inputs;
  // dx[m][k] = dy[m][n] W[n][k]   (transpose: W is [k][n])
  ops::gemm_rm<T>(false, s.transpose, m, k, n, T(1), dy, n, weight, s.transpose ? n : k, T(0), dx,
                  k);
}

template <class T>
void inner_product_backward_weights(const InnerProductShape& s, const T* x, const T* dy, T* dweight,
                                    T* dbias, bool accumulate) {
  constexpr const char* what = "inner_product_backward_weights";
  s.validate(what);
  const index_t m = s.batch, n = s.outputs, k = s.inputs;
  if (m > 0) ops::check_pointers(what, 1, {{"dy", dy}});
  const T beta = accumulate ? T(1) : T(0);
  if (dweight != nullptr) {
    if (m > 0) ops::check_pointer(what, "x", x);
    if (!s.transpose)  // dW[n][k] = dy^T x
      ops::gemm_rm<T>(true, false, n, k, m, T(1), dy, n, x, k, beta, dweight, k);
    else  // dW[k][n] = x^T dy
      ops::gemm_rm<T>(true, false, k, n, m, T(1), x, k, dy, n, beta, dweight, n);
  }
  if (dbias != nullptr) ops::column_sums<T>(m, n, dy, dbias, accumulate);
}

template void inner_product_forward<float>(const InnerProductShape&, const float*, const float*,
                                           const float*, float*);
template void inner_product_forward<double>(const InnerProductShape&, const double*, const double*,
                                            const double*, double*);
template void inner_product_backward_data<float>(const InnerProductShape&, const float*,
                                                 const float*, float*);
template void inner_product_backward_data<double>(const InnerProductShape&, const double*,
                                                  const double*, double*);
template void inner_product_backward_weights<float>(const InnerProductShape&, const float*,
                                                    const float*, float*, float*, bool);
template void inner_product_backward_weights<double>(const InnerProductShape&, const double*,
                                                     const double*, double*, double*, bool);

}  // namespace taihu::dnn
