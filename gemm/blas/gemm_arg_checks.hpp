// Argument checks shared by the CBLAS and Fortran entry points of both integer ABIs
// (blas_abi.hpp). Each returns true and fills an Illegal when the argument is bad;
// callers check in the order reference BLAS does and report the first failure with
// their own numbering. Sizes are taken as 64-bit values, so an ILP64 value such as
// M = 2^33 is checked as it is, never truncated (an LP64 int widens losslessly).
// require_addressable then guards what reference BLAS has no rule for: an ILP64 call
// whose legal-looking sizes describe a matrix larger than the address space.
#pragma once
#include <cstddef>
#include <cstdio>
#include <stdexcept>

#include "blas_report.hpp"
#include "taihu/gemm/gemm.hpp"

namespace taihu::blas {

using gemm::index_t;
using gemm::Layout;
using gemm::Trans;

// The taihu entry point a wrapper forwards to (taihu::gemm::sgemm or dgemm).
template <typename T>
using GemmFn = void (*)(Layout, Trans, Trans, index_t, index_t, index_t, T, const T*, index_t,
                        const T*, index_t, T, T*, index_t);

// Fills `out` and returns true (the check failed): detail is printf-formatted.
template <typename... Args>
bool fail(Illegal& out, int number, const char* name, const char* format, Args... args) {
  out.number = number;
  out.name = name;
  std::snprintf(out.detail, sizeof out.detail, format, args...);
  return true;
}

// A size (M, N, K) must be >= 0.
inline bool bad_size(Illegal& out, int number, const char* name, index_t value) {
  if (value >= 0) return false;
  return fail(out, number, name, "%s = %lld, must be >= 0", name, static_cast<long long>(value));
}

// A leading dimension must be >= max(1, rows), rows being the stored matrix's extent
// along the leading dimension (`rows_name` says which size that is, `why` says why).
inline bool bad_leading_dim(Illegal& out, int number, const char* name, index_t ld,
                            const char* rows_name, index_t rows, const char* why) {
  const index_t need = rows > 1 ? rows : 1;
  if (ld >= need) return false;
  return fail(out, number, name, "%s = %lld, must be >= max(1, %s) = %lld (%s)", name,
              static_cast<long long>(ld), rows_name, static_cast<long long>(need), why);
}

// Throws std::length_error unless a rows x cols matrix stored with leading dimension ld
// (>= its leading extent; row major: ld spans columns) fits in the address space:
// (ld * (other - 1) + lead) * element_size <= INT64_MAX. 32-bit sizes always fit; 64-bit
// ones that do not describe an array no process holds, and computing with them would
// overflow the size products the library allocates by (each is bounded by one matrix's
// extent). serve() reports the exception ("taihu_blas: SGEMM failed: ...") and C stays
// untouched. An empty matrix is never touched and always fits.
inline void require_addressable(const char* matrix, bool row_major, index_t rows, index_t cols,
                                index_t ld, std::size_t element_size) {
  if (rows <= 0 || cols <= 0) return;
  const index_t lead = row_major ? cols : rows;
  const index_t other = row_major ? rows : cols;
  index_t elements = 0;
  index_t bytes = 0;
  if (!__builtin_mul_overflow(ld, other - 1, &elements) &&
      !__builtin_add_overflow(elements, lead, &elements) &&
      !__builtin_mul_overflow(elements, static_cast<index_t>(element_size), &bytes)) {
    return;
  }
  char what[192];
  std::snprintf(what, sizeof what,
                "%s (%lld x %lld, leading dimension %lld) is larger than the address space", matrix,
                static_cast<long long>(rows), static_cast<long long>(cols),
                static_cast<long long>(ld));
  throw std::length_error(what);
}

// GEMM's A (op(A) m x k), B (op(B) k x n) and C (m x n) as taihu::gemm takes them.
inline void require_gemm_addressable(bool row_major, bool trans_a, bool trans_b, index_t m,
                                     index_t n, index_t k, index_t lda, index_t ldb, index_t ldc,
                                     std::size_t ab_size, std::size_t c_size) {
  require_addressable("A", row_major, trans_a ? k : m, trans_a ? m : k, lda, ab_size);
  require_addressable("B", row_major, trans_b ? n : k, trans_b ? k : n, ldb, ab_size);
  require_addressable("C", row_major, m, n, ldc, c_size);
}

// syrk (ldb == 0: no B) and syr2k: A and B op n x k, C n x n.
inline void require_rank_k_addressable(bool row_major, bool trans, index_t n, index_t k,
                                       index_t lda, index_t ldb, index_t ldc, std::size_t size) {
  require_addressable("A", row_major, trans ? k : n, trans ? n : k, lda, size);
  if (ldb != 0) require_addressable("B", row_major, trans ? k : n, trans ? n : k, ldb, size);
  require_addressable("C", row_major, n, n, ldc, size);
}

// symm and trmm/trsm (ldc == 0: no C): A order x order (M on the left, else N), B and
// C m x n.
inline void require_side_addressable(bool row_major, bool left, index_t m, index_t n, index_t lda,
                                     index_t ldb, index_t ldc, std::size_t size) {
  const index_t order = left ? m : n;
  require_addressable("A", row_major, order, order, lda, size);
  require_addressable("B", row_major, m, n, ldb, size);
  if (ldc != 0) require_addressable("C", row_major, m, n, ldc, size);
}

}  // namespace taihu::blas
