// Argument checks shared by the CBLAS and Fortran GEMM entry points. Each returns an
// Illegal whose number is 0 when the argument is fine; callers check in the order
// reference BLAS does and report the first failure with their own numbering.
#pragma once
#include <cstdio>

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
inline bool bad_size(Illegal& out, int number, const char* name, int value) {
  if (value >= 0) return false;
  return fail(out, number, name, "%s = %d, must be >= 0", name, value);
}

// A leading dimension must be >= max(1, rows), rows being the stored matrix's extent
// along the leading dimension (`rows_name` says which size that is, `why` says why).
inline bool bad_leading_dim(Illegal& out, int number, const char* name, int ld,
                            const char* rows_name, int rows, const char* why) {
  const int need = rows > 1 ? rows : 1;
  if (ld >= need) return false;
  return fail(out, number, name, "%s = %d, must be >= max(1, %s) = %d (%s)", name, ld,
              rows_name, need, why);
}

}  // namespace taihu::blas
