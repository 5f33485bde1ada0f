// libtaihu_blas's error reporting (blas_report.hpp): the calls into xerbla_ and
// cblas_xerbla, which resolve through the dynamic linker, so an application's own
// handler runs in place of taihu's defaults (xerbla.cpp).
#include "blas_report.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "taihu_cblas.h"
#include "taihu_cblas64.h"
#include "xerbla_state.hpp"

namespace taihu::blas {

thread_local bool t_row_major_report = false;

int netlib_row_major_swap(const char* routine, int info) {
  auto swap = [info](int x, int y) { return info == x ? y : info == y ? x : info; };
  if (std::strstr(routine, "gemm") != nullptr) {  // gemm, and gemmt by the same rule
    return info == 9 || info == 11 ? swap(9, 11) : swap(4, 5);
  }
  if (std::strstr(routine, "symm") != nullptr) return swap(4, 5);
  if (std::strstr(routine, "trmm") != nullptr || std::strstr(routine, "trsm") != nullptr)
    return swap(6, 7);
  return info;
}

namespace {

// netlib CBLAS's global "the current call is row major", read by its cblas_xerbla
// (and by handlers written after it, such as its test programs'); null where no
// loaded CBLAS defines it.
int* row_major_strg() {
  static int* const p = static_cast<int*>(dlsym(RTLD_DEFAULT, "RowMajorStrg"));
  return p;
}

}  // namespace

void report_fortran(Abi abi, const char* srname, const Illegal& illegal) {
  if (abi == Abi::ilp64) {
    const std::int64_t info = illegal.number;
    xerbla_64_(srname, &info, std::strlen(srname));
  } else {
    const int info = illegal.number;
    xerbla_(srname, &info, std::strlen(srname));
  }
}

void report_cblas(Abi abi, const char* routine, bool row_major, const Illegal& illegal) {
  const int info =
      row_major ? netlib_row_major_swap(routine, illegal.number) : illegal.number;
  int* const strg = row_major_strg();
  const int saved = strg != nullptr ? *strg : 0;
  if (strg != nullptr) *strg = row_major ? 1 : 0;
  t_row_major_report = row_major;
  if (abi == Abi::ilp64) {
    cblas_xerbla64_(info, routine, "%s\n", illegal.detail);
  } else {
    cblas_xerbla(info, routine, "%s\n", illegal.detail);
  }
  t_row_major_report = false;
  if (strg != nullptr) *strg = saved;
}

void report_failure(const char* routine, const char* what) {
  std::fprintf(stderr, "taihu_blas: %s failed: %s\n", routine, what);
}

}  // namespace taihu::blas
