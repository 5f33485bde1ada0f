// Pre-packed operands: pack a weight matrix once into the micro-kernel's panel format,
// then multiply it many times (dnn/ packs its convolution and FC weights this way).
// The packed form is tied to the ISA level and block sizes in force when it was made.
#pragma once
#include <memory>

#include "taihu/gemm/gemm.hpp"

namespace taihu::gemm {

template <class T>
class PackedA {
 public:
  // Packs op(A) (m x k) given in `layout`.
  PackedA(Layout layout, Trans trans_a, index_t m, index_t k, const T* a, index_t lda);
  ~PackedA();
  PackedA(PackedA&&) noexcept;
  PackedA& operator=(PackedA&&) noexcept;

  index_t rows() const;
  index_t depth() const;

  // Packs new values of op(A), the same shape, layout, trans and lda as at
  // construction, into this object's storage (as MKL's sgemm_pack into a buffer the
  // caller keeps): no allocation, so no fresh pages to fault in, where a layer repacks
  // its weights every call. Re-allocates only if the ISA level changed since. Throws
  // taihu::Error for a null a (m, k > 0).
  void repack(const T* a);

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// C (m x n, `layout`) = alpha * A_packed * op(B) + beta * C, with op(B) k x n.
void gemm_packed(Layout layout, const PackedA<float>& a, Trans trans_b, index_t n, float alpha,
                 const float* b, index_t ldb, float beta, float* c, index_t ldc);
void gemm_packed(Layout layout, const PackedA<double>& a, Trans trans_b, index_t n, double alpha,
                 const double* b, index_t ldb, double beta, double* c, index_t ldc);

extern template class PackedA<float>;
extern template class PackedA<double>;

}  // namespace taihu::gemm
