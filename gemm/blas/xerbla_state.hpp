// State shared by the reporting calls (blas_report.cpp) and taihu's default
// cblas_xerbla (xerbla.cpp): whether the report in progress is a row-major call's,
// whose info netlib's convention swaps (blas_report.hpp), so the default prints the
// parameter's real position.
#pragma once

namespace taihu::blas {

extern thread_local bool t_row_major_report;

// The swap netlib CBLAS's cblas_xerbla applies to a row-major call's info (an
// involution): gemm 4<->5 and 9<->11 (taihu's gemmt follows the same rule, as its name
// matches), symm 4<->5, trmm/trsm 6<->7, others none. Netlib's row-major routines hand
// the swapped problem to Fortran, so the info they pass is this swap of the position.
int netlib_row_major_swap(const char* routine, int info);

}  // namespace taihu::blas
