// Argument checks shared by the CBLAS and Fortran entry points of both integer ABIs
// (blas_abi.hpp). Each returns true and fills an Illegal when the argument is bad;
// callers check in the order reference BLAS does and report the first failure with
// their own numbering. Sizes are taken as 64-bit values, so an ILP64 value such as
// M = 2^33 is checked as it is, never truncated (an LP64 int widens losslessly).
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

}  // namespace taihu::blas
