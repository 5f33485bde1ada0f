// taihu's default error handlers: xerbla_ and cblas_xerbla, and their ILP64 twins
// xerbla_64_ and cblas_xerbla64_ (64-bit info; blas_abi.hpp), written once. All are
// weak, default-visibility symbols that libtaihu_blas calls through the dynamic linker,
// so an application (or a test program, or LAPACK) that defines its own gets its own
// called instead, as with reference BLAS. The defaults print the reference wording on
// stderr and return: unlike reference BLAS's XERBLA (STOP) and netlib CBLAS's
// cblas_xerbla (exit), they never end the program, as OpenBLAS's xerbla does not; C is
// left untouched.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "blas_abi.hpp"
#include "taihu_cblas.h"
#include "taihu_cblas64.h"
#include "xerbla_state.hpp"

namespace taihu::blas {
namespace {

template <typename Int>
void default_xerbla(const char* srname, const Int* info, size_t srname_len) {
  // srname is a Fortran CHARACTER: srname_len characters, not NUL terminated.
  std::fprintf(stderr, " ** On entry to %.*s parameter number %2lld had an illegal value\n",
               static_cast<int>(srname_len), srname, static_cast<long long>(*info));
}

template <typename Int>
void default_cblas_xerbla(Int info, const char* rout, const char* form, va_list args) {
  long long position = info;
  // netlib's cblas_xerbla undoes its row-major swap (blas_report.hpp) the same way.
  if (t_row_major_report) position = netlib_row_major_swap(rout, static_cast<int>(info));
  if (info != 0)
    std::fprintf(stderr, "Parameter %lld to routine %s was incorrect\n", position, rout);
  std::vfprintf(stderr, form, args);
}

}  // namespace
}  // namespace taihu::blas

#define TAIHU_BLAS_XERBLA_ABI(Int, NAME)                                                      \
  __attribute__((weak)) void NAME(xerbla_)(const char* srname, const Int* info,               \
                                           size_t srname_len) {                               \
    taihu::blas::default_xerbla(srname, info, srname_len);                                    \
  }                                                                                           \
  __attribute__((weak)) void NAME(cblas_xerbla)(Int info, const char* rout, const char* form, \
                                                ...) {                                        \
    va_list args;                                                                             \
    va_start(args, form);                                                                     \
    taihu::blas::default_cblas_xerbla(info, rout, form, args);                                \
    va_end(args);                                                                             \
  }

extern "C" {
TAIHU_BLAS_XERBLA_ABI(int, TAIHU_BLAS_LP64_NAME)
TAIHU_BLAS_XERBLA_ABI(taihu_blasint64, TAIHU_BLAS_ILP64_NAME)
}
#undef TAIHU_BLAS_XERBLA_ABI
