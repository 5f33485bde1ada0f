// libtaihu_blas's xerbla: the one-line reports of blas_report.hpp.
#include "blas_report.hpp"

#include <cstdio>

namespace taihu::blas {

void report_illegal(const char* routine, const Illegal& illegal) {
  std::fprintf(stderr,
               "taihu_blas: ** On entry to %s parameter number %d (%s) had an illegal value: "
               "%s\n",
               routine, illegal.number, illegal.name, illegal.detail);
}

void report_failure(const char* routine, const char* what) {
  std::fprintf(stderr, "taihu_blas: %s failed: %s\n", routine, what);
}

}  // namespace taihu::blas
