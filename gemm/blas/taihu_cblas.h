/* taihu_cblas.h: the four standard BLAS entry points libtaihu_blas.so exports,
 * for C and C++ callers that link taihu::blas directly (examples, tests).
 *
 *   cblas_sgemm, cblas_dgemm  the CBLAS interface (LP64: int sizes)
 *   sgemm_, dgemm_            the Fortran 77 interface as gfortran calls it: every
 *                             argument by pointer, column major, then one hidden
 *                             size_t length per CHARACTER argument (never read, so
 *                             C callers that omit them are served too)
 *
 * Bad arguments are reported like reference BLAS's xerbla, one line on stderr naming
 * the routine, the parameter number (CBLAS or Fortran numbering) and its value, and
 * the call returns without touching C; nothing aborts, nothing throws.
 *
 * The enums are the standard CBLAS ones (the same names and values as cblas.h), so
 * include this header instead of cblas.h, or after it (then cblas.h's are used). */
#ifndef TAIHU_CBLAS_H
#define TAIHU_CBLAS_H

#include <stddef.h>

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
#endif

TAIHU_BLAS_EXPORT void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a,
                                   enum CBLAS_TRANSPOSE trans_b, int m, int n, int k,
                                   float alpha, const float* a, int lda, const float* b,
                                   int ldb, float beta, float* c, int ldc);

TAIHU_BLAS_EXPORT void cblas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a,
                                   enum CBLAS_TRANSPOSE trans_b, int m, int n, int k,
                                   double alpha, const double* a, int lda, const double* b,
                                   int ldb, double beta, double* c, int ldc);

TAIHU_BLAS_EXPORT void sgemm_(const char* transa, const char* transb, const int* m,
                              const int* n, const int* k, const float* alpha, const float* a,
                              const int* lda, const float* b, const int* ldb,
                              const float* beta, float* c, const int* ldc, size_t transa_len,
                              size_t transb_len);

TAIHU_BLAS_EXPORT void dgemm_(const char* transa, const char* transb, const int* m,
                              const int* n, const int* k, const double* alpha,
                              const double* a, const int* lda, const double* b,
                              const int* ldb, const double* beta, double* c, const int* ldc,
                              size_t transa_len, size_t transb_len);

#ifdef __cplusplus
}
#endif

#endif /* TAIHU_CBLAS_H */
