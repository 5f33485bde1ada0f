/* taihu_cblas64.h: the ILP64 interface of libtaihu_blas.so, as OpenBLAS's cblas.h
 * declares it in an INTERFACE64=1 SYMBOLSUFFIX=64_ build: every BLAS routine of
 * taihu_cblas.h with 64-bit integers (int64_t sizes, leading dimensions, strides,
 * counts, info) and its name followed by "64_":
 *
 *   cblas_sgemm64_, cblas_dgemm64_, sgemm_64_, dgemm_64_
 *   cblas_sbgemm64_, cblas_gemm_bf16bf16f3264_, sbgemm_64_
 *   cblas_?gemmt64_ ?syrk64_ ?syr2k64_ ?symm64_ ?trmm64_ ?trsm64_, ?gemmt_64_ ... ?trsm_64_
 *   cblas_?gemm_batch_strided64_, cblas_?gemm_batch64_
 *   xerbla_64_, cblas_xerbla64_   the error handlers the ILP64 routines call (weak
 *                                 defaults; Reference-LAPACK's ILP64 build defines
 *                                 xerbla_64_ too, and a program's own replaces taihu's)
 *
 * The Fortran names are Reference-LAPACK's ILP64 names as well (its liblapack64 built
 * with BUILD_INDEX64_EXT_API calls dgemm_64_, dtrsm_64_, xerbla_64_). Arguments are
 * checked as in the LP64 routines, on the full 64-bit values; the reference routine
 * names ("SGEMM ", "cblas_sgemm") are what the handlers receive. The thread-control
 * functions of taihu_cblas.h take no BLAS integers and have no twin. The LP64
 * declarations come with this header (it includes taihu_cblas.h). */
#ifndef TAIHU_CBLAS64_H
#define TAIHU_CBLAS64_H

#include "taihu_cblas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OpenBLAS's name for its integer type in a 64-bit build. */
typedef int64_t taihu_blasint64;

#define TAIHU_BLAS_INT taihu_blasint64
#define TAIHU_BLAS_NAME(name) name##64_
#include "taihu_blas_prototypes.h"
#undef TAIHU_BLAS_NAME
#undef TAIHU_BLAS_INT

#ifdef __cplusplus
}
#endif

#endif /* TAIHU_CBLAS64_H */
