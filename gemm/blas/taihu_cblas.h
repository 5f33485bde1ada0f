/* taihu_cblas.h: what libtaihu_blas.so exports, for C and C++ callers that link
 * taihu::blas directly (examples, tests).
 *
 *   cblas_sgemm, cblas_dgemm  the CBLAS interface (LP64: int sizes)
 *   cblas_sbgemm, cblas_gemm_bf16bf16f32, sbgemm_   bf16 inputs, fp32 C (below)
 *   sgemm_, dgemm_            the Fortran 77 interface as gfortran calls it: every
 *                             argument by pointer, column major, then one hidden
 *                             size_t length per CHARACTER argument (never read, so
 *                             C callers that omit them are served too)
 *
 *   xerbla_, cblas_xerbla     the error handlers: a bad argument to sgemm_/dgemm_
 *                             calls xerbla_("SGEMM ", &info, 6) with reference BLAS's
 *                             parameter number, one to cblas_?gemm calls
 *                             cblas_xerbla(info, "cblas_sgemm", form, ...) with netlib
 *                             CBLAS's. Both resolve through the dynamic linker, so a
 *                             program's own definition replaces taihu's; taihu's
 *                             (weak) defaults print the reference wording on stderr
 *                               " ** On entry to SGEMM  parameter number  8 had an illegal value"
 *                               "Parameter 9 to routine cblas_sgemm was incorrect"
 *                             and return. The call returns without touching C; nothing
 *                             aborts, nothing throws.
 *   thread control            taihu_set/get_num_threads and the names programs and
 *                             threadpoolctl call on OpenBLAS, MKL and BLIS (below)
 *
 *   ILP64 twins               every routine above with int64_t integers and the name
 *                             followed by "64_" (sgemm_64_, cblas_sgemm64_,
 *                             xerbla_64_, cblas_xerbla64_): taihu_cblas64.h
 *
 * The enums are the standard CBLAS ones (the same names and values as cblas.h), so
 * include this header instead of cblas.h, or after it (then cblas.h's are used). */
#ifndef TAIHU_CBLAS_H
#define TAIHU_CBLAS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TAIHU_BLAS_EXPORT __attribute__((visibility("default")))
#else
#define TAIHU_BLAS_EXPORT
#endif

#ifdef __cplusplus
/* C++ gets a fixed underlying type so that any int a C caller passes is a valid
 * enum value (the C ABI is the same: an int-sized argument). */
#define TAIHU_CBLAS_ENUM_BASE : int
extern "C" {
#else
#define TAIHU_CBLAS_ENUM_BASE
#endif

#ifndef CBLAS_H
enum CBLAS_ORDER TAIHU_CBLAS_ENUM_BASE { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE TAIHU_CBLAS_ENUM_BASE {
  CblasNoTrans = 111,
  CblasTrans = 112,
  CblasConjTrans = 113 /* the same as CblasTrans for real matrices */
};
enum CBLAS_UPLO TAIHU_CBLAS_ENUM_BASE { CblasUpper = 121, CblasLower = 122 };
enum CBLAS_DIAG TAIHU_CBLAS_ENUM_BASE { CblasNonUnit = 131, CblasUnit = 132 };
enum CBLAS_SIDE TAIHU_CBLAS_ENUM_BASE { CblasLeft = 141, CblasRight = 142 };
#endif

/* bf16 storage: the upper half of an IEEE binary32. */
typedef uint16_t taihu_bfloat16;

/* The BLAS routines with 32-bit int integers (LP64); taihu_cblas64.h declares their
 * ILP64 twins (int64_t integers, names + "64_"). */
#define TAIHU_BLAS_INT int
#define TAIHU_BLAS_NAME(name) name
#include "taihu_blas_prototypes.h"
#undef TAIHU_BLAS_NAME
#undef TAIHU_BLAS_INT

/* Thread control. Setters: n >= 1 sets taihu's thread count for the process, n < 1
 * returns to the default (TAIHU_NUM_THREADS, else the physical cores capped by the
 * OpenMP nthreads-var); the peers' names also call the same function of a library
 * loaded after taihu (the system BLAS under LD_PRELOAD). Getters return the count a
 * call from this thread uses. */
TAIHU_BLAS_EXPORT void taihu_set_num_threads(int n);
TAIHU_BLAS_EXPORT int taihu_get_num_threads(void);
TAIHU_BLAS_EXPORT void openblas_set_num_threads(int n);
TAIHU_BLAS_EXPORT int openblas_get_num_threads(void);
TAIHU_BLAS_EXPORT void goto_set_num_threads(int n);
TAIHU_BLAS_EXPORT void mkl_set_num_threads(int n);
TAIHU_BLAS_EXPORT void MKL_Set_Num_Threads(int n);
/* This thread only: n > 0 sets, 0 removes, n < 0 changes nothing; returns the
 * previous thread-local count (0: none was set), as MKL's. */
TAIHU_BLAS_EXPORT int mkl_set_num_threads_local(int n);
TAIHU_BLAS_EXPORT int mkl_get_max_threads(void);
/* BLIS's dim_t: a 64-bit integer. */
TAIHU_BLAS_EXPORT void bli_thread_set_num_threads(int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* TAIHU_CBLAS_H */
