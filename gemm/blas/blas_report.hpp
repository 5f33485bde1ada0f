// The xerbla of libtaihu_blas: how the BLAS ABI reports a bad argument or a failure.
// One line on stderr, never abort(), never an exception through the C ABI:
//   taihu_blas: ** On entry to SGEMM parameter number 8 (LDA) had an illegal value:
//   LDA = 3, must be >= max(1, M) = 5 (TRANSA = 'N')
// (one line; wrapped here). The reference BLAS wording is kept so that scripts
// grepping for "On entry to SGEMM parameter number 8" still match.
#pragma once
#include <exception>

#include "taihu/arch/log.hpp"

namespace taihu::blas {

// An argument check's verdict: number == 0 means every argument is legal.
struct Illegal {
  int number = 0;            // parameter number in the caller's numbering (CBLAS or Fortran)
  const char* name = "";     // parameter name as that interface spells it
  char detail[192] = {};     // its value and the rule it breaks
};

// Prints the illegal-value line for `routine` (e.g. "SGEMM", "cblas_sgemm").
void report_illegal(const char* routine, const Illegal& illegal);

// Prints "taihu_blas: <routine> failed: <what>" (an exception from the library).
void report_failure(const char* routine, const char* what);

// Runs fn(); any exception is reported and swallowed so none crosses the C ABI.
template <typename Fn>
void run_guarded(const char* routine, Fn&& fn) noexcept {
  try {
    fn();
  } catch (const std::exception& e) {
    report_failure(routine, e.what());
  } catch (...) {
    report_failure(routine, "unknown exception");
  }
}

// The common tail of every exported routine: an illegal argument is reported and C
// is left alone; otherwise call() runs guarded, logging once per routine under
// TAIHU_VERBOSE that libtaihu_blas served it.
template <typename Call>
void serve(const char* routine, const Illegal& illegal, Call&& call) noexcept {
  if (illegal.number != 0) {
    report_illegal(routine, illegal);
    return;
  }
  run_guarded(routine, [&] {
    static const bool logged =
        (arch::log_verbose("blas: %s served by libtaihu_blas", routine), true);
    (void)logged;
    call();
  });
}

}  // namespace taihu::blas
