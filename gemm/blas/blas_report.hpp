// How libtaihu_blas reports a bad argument: as reference BLAS and CBLAS do, through
// the error handlers an application may replace (xerbla.cpp has taihu's defaults).
//   sgemm_/dgemm_:            xerbla_("SGEMM ", &info, 6), reference BLAS's numbering
//   cblas_sgemm/cblas_dgemm:  cblas_xerbla(info, "cblas_sgemm", "%s\n", detail),
//                             netlib CBLAS's numbering (see report_cblas)
//   the ILP64 twins (sgemm_64_, cblas_sgemm64_; blas_abi.hpp): the same, through
//   xerbla_64_ (64-bit info) and cblas_xerbla64_, with the reference routine names
// Under TAIHU_VERBOSE taihu also logs what was wrong ("taihu: blas: SGEMM: LDA = 3,
// must be >= max(1, M) = 5 (TRANSA = 'N')"). C is left alone; nothing aborts and no
// exception crosses the C ABI (an exception from the library is reported on stderr).
#pragma once
#include <exception>

#include "taihu/arch/log.hpp"

#include "blas_abi.hpp"

namespace taihu::blas {

// An argument check's verdict: number == 0 means every argument is legal.
struct Illegal {
  int number = 0;            // parameter position in the caller's interface (CBLAS or Fortran)
  const char* name = "";     // parameter name as that interface spells it
  char detail[192] = {};     // its value and the rule it breaks
};

// Calls xerbla_ (ILP64: xerbla_64_) with (srname, &illegal.number, strlen(srname));
// srname is reference BLAS's 6-character name ("SGEMM ").
void report_fortran(Abi abi, const char* srname, const Illegal& illegal);

// Calls cblas_xerbla with the info netlib's CBLAS passes for `routine`: the parameter
// position, except row major, where netlib's cblas_?gemm, ?symm, ?trmm and ?trsm hand
// the swapped problem to the Fortran routine and so report M and N (and gemm's lda and
// ldb) at each other's positions (netlib_row_major_swap, xerbla_state.hpp); its
// cblas_xerbla swaps them back while RowMajorStrg is set, which taihu sets too where a
// CBLAS defines it. illegal.number is the real position. ILP64: cblas_xerbla64_.
void report_cblas(Abi abi, const char* routine, bool row_major, const Illegal& illegal);

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

// The common tail of every exported routine: an illegal argument is reported through
// report() and C is left alone; otherwise call() runs guarded, logging once per
// routine under TAIHU_VERBOSE that libtaihu_blas served it.
template <typename Report, typename Call>
void serve(const char* routine, const Illegal& illegal, Report&& report, Call&& call) noexcept {
  if (illegal.number != 0) {
    run_guarded(routine, [&] {
      arch::log_verbose("blas: %s: %s", routine, illegal.detail);
      report();
    });
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
