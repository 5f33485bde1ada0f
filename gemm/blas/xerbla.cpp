// taihu's default xerbla_ and cblas_xerbla. Both are weak, default-visibility symbols
// that libtaihu_blas calls through the dynamic linker, so an application (or a test
// program, or LAPACK) that defines its own gets its own called instead, as with
// reference BLAS. The defaults print the reference wording on stderr and return:
// unlike reference BLAS's XERBLA (STOP) and netlib CBLAS's cblas_xerbla (exit), they
// never end the program, as OpenBLAS's xerbla does not; C is left untouched.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "taihu_cblas.h"
#include "xerbla_state.hpp"

extern "C" {

__attribute__((weak)) void xerbla_(const char* srname, const int* info, size_t srname_len) {
  // srname is a Fortran CHARACTER: srname_len characters, not NUL terminated.
  std::fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n",
               static_cast<int>(srname_len), srname, *info);
}

__attribute__((weak)) void cblas_xerbla(int info, const char* rout, const char* form, ...) {
  int position = info;
  // netlib's cblas_xerbla undoes its row-major swap (blas_report.hpp) the same way.
  if (taihu::blas::t_row_major_report) position = taihu::blas::netlib_row_major_swap(rout, info);
  if (info != 0) std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", position, rout);
  va_list args;
  va_start(args, form);
  std::vfprintf(stderr, form, args);
  va_end(args);
}

}  // extern "C"
