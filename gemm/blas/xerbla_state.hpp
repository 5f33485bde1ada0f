// State shared by the reporting calls (blas_report.cpp) and taihu's default
// cblas_xerbla (xerbla.cpp): whether the report in progress is a row-major GEMM's,
// whose info netlib's convention swaps (blas_report.hpp), so the default prints the
// parameter's real position.
#pragma once

namespace taihu::blas {

extern thread_local bool t_row_major_gemm_report;

}  // namespace taihu::blas
