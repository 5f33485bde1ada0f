// Pre-packed left operand: packed once as A panels (column-major callers) or as B
// panels (row-major callers, whose product the driver computes transposed).
#include <algorithm>
#include <string>

#include "driver.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/gemm/packed.hpp"

namespace taihu::gemm {

template <class T>
struct PackedA<T>::Impl {
  Layout layout = Layout::col_major;
  Trans trans = Trans::no;
  index_t m = 0, k = 0, lda = 1;
  PrepackedPanels<T> panels;
};

namespace {
[[noreturn]] void bad(const char* routine, const char* what, index_t value, const std::string& rule) {
  throw Error(std::string("taihu: ") + routine + ": " + what + " = " + std::to_string(value) + " " + rule);
}
}  // namespace

template <class T>
PackedA<T>::PackedA(Layout layout, Trans ta, index_t m, index_t k, const T* a, index_t lda)
    : impl_(std::make_unique<Impl>()) {
  if (m < 0) bad("PackedA", "m", m, "must be >= 0");
  if (k < 0) bad("PackedA", "k", k, "must be >= 0");
  const index_t span = (layout == Layout::row_major) == (ta == Trans::no) ? k : m;
  if (lda < std::max<index_t>(1, span))
    bad("PackedA", "lda", lda, "must be >= max(1, " + std::to_string(span) + ")");
  if (a == nullptr && m > 0 && k > 0) throw Error("taihu: PackedA: a is null");
  impl_->layout = layout;
  impl_->trans = ta;
  impl_->m = m;
  impl_->k = k;
  impl_->lda = lda;
  if (m == 0 || k == 0) return;
  const MatrixView<T> view{a, lda, ta == Trans::yes};
  prepack(view, m, k, layout == Layout::row_major, kernels::microkernel_of<T>(kernels::active_kernels()), impl_->panels);
}

template <class T>
void PackedA<T>::repack(const T* a) {
  Impl& I = *impl_;
  if (I.m == 0 || I.k == 0) return;
  if (a == nullptr) throw Error("taihu: PackedA::repack: a is null");
  const MatrixView<T> view{a, I.lda, I.trans == Trans::yes};
  prepack(view, I.m, I.k, I.layout == Layout::row_major, kernels::microkernel_of<T>(kernels::active_kernels()), I.panels);
}

template <class T>
PackedA<T>::~PackedA() = default;
template <class T>
PackedA<T>::PackedA(PackedA&&) noexcept = default;
template <class T>
PackedA<T>& PackedA<T>::operator=(PackedA&&) noexcept = default;
template <class T>
index_t PackedA<T>::rows() const { return impl_->m; }
template <class T>
index_t PackedA<T>::depth() const { return impl_->k; }

template class PackedA<float>;
template class PackedA<double>;

namespace {
template <class T>
void packed_impl(Layout layout, const PackedA<T>& pa, Trans tb, index_t n, T alpha, const T* b,
                 index_t ldb, T beta, T* c, index_t ldc) {
  const auto& p = pa.impl();
  const index_t m = p.m, k = p.k;
  if (layout != p.layout) throw Error("taihu: gemm_packed: layout differs from the one A was packed for");
  if (n < 0) bad("gemm_packed", "n", n, "must be >= 0");
  const bool row = layout == Layout::row_major;
  const index_t b_span = row ? (tb == Trans::no ? n : k) : (tb == Trans::no ? k : n);
  if (ldb < std::max<index_t>(1, b_span))
    bad("gemm_packed", "ldb", ldb, "must be >= max(1, " + std::to_string(b_span) + ")");
  const index_t c_span = row ? n : m;
  if (ldc < std::max<index_t>(1, c_span))
    bad("gemm_packed", "ldc", ldc, "must be >= max(1, " + std::to_string(c_span) + ")");
  if (m == 0 || n == 0) return;
  Problem<T> pr;
  pr.k = k, pr.alpha = alpha, pr.beta = beta, pr.c = c, pr.ldc = ldc;
  const MatrixView<T> bv{b, ldb, tb == Trans::yes};
  if (!row) {
    pr.m = m, pr.n = n, pr.b = bv, pr.packed_a = &p.panels;
  } else {
    pr.m = n, pr.n = m, pr.a = bv, pr.packed_b = &p.panels;
  }
  if (k == 0 || alpha == T(0)) {
    scale_c(pr.m, pr.n, beta, c, ldc);
    return;
  }
  if (b == nullptr) throw Error("taihu: gemm_packed: b is null");
  run_driver(pr, kernels::microkernel_of<T>(kernels::active_kernels()), threads_for_gemm(pr.m, pr.n, pr.k));
}
}  // namespace

void gemm_packed(Layout layout, const PackedA<float>& a, Trans tb, index_t n, float alpha,
                 const float* b, index_t ldb, float beta, float* c, index_t ldc) {
  packed_impl(layout, a, tb, n, alpha, b, ldb, beta, c, ldc);
}
void gemm_packed(Layout layout, const PackedA<double>& a, Trans tb, index_t n, double alpha,
                 const double* b, index_t ldb, double beta, double* c, index_t ldc) {
  packed_impl(layout, a, tb, n, alpha, b, ldb, beta, c, ldc);
}

}  // namespace taihu::gemm
