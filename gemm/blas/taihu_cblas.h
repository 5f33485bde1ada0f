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

/* bf16-in / fp32-out GEMM: C (float) = alpha op(A) op(B) + beta C with A and B in
 * bfloat16 (the upper half of an IEEE binary32, as uint16_t). cblas_sbgemm and sbgemm_
 * have OpenBLAS's signatures, cblas_gemm_bf16bf16f32 MKL's (the same arguments).
 * Arguments are checked and reported as for cblas_sgemm / sgemm_. */
typedef uint16_t taihu_bfloat16;
TAIHU_BLAS_EXPORT void cblas_sbgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a,
                                    enum CBLAS_TRANSPOSE trans_b, int m, int n, int k,
                                    float alpha, const taihu_bfloat16* a, int lda,
                                    const taihu_bfloat16* b, int ldb, float beta, float* c,
                                    int ldc);
TAIHU_BLAS_EXPORT void cblas_gemm_bf16bf16f32(enum CBLAS_ORDER order,
                                              enum CBLAS_TRANSPOSE trans_a,
                                              enum CBLAS_TRANSPOSE trans_b, int m, int n, int k,
                                              float alpha, const taihu_bfloat16* a, int lda,
                                              const taihu_bfloat16* b, int ldb, float beta,
                                              float* c, int ldc);
TAIHU_BLAS_EXPORT void sbgemm_(const char* transa, const char* transb, const int* m,
                               const int* n, const int* k, const float* alpha,
                               const taihu_bfloat16* a, const int* lda,
                               const taihu_bfloat16* b, const int* ldb, const float* beta,
                               float* c, const int* ldc, size_t transa_len, size_t transb_len);

/* The other level-3 routines, s and d, with netlib CBLAS's and reference BLAS's
 * signatures; ?gemmt (C's uplo triangle of alpha op(A) op(B) + beta C, C n x n) has
 * MKL's and OpenBLAS's. */
#define TAIHU_BLAS_LEVEL3(T, P)                                                              \
  TAIHU_BLAS_EXPORT void cblas_##P##gemmt(enum CBLAS_ORDER order, enum CBLAS_UPLO uplo,      \
                                          enum CBLAS_TRANSPOSE trans_a,                      \
                                          enum CBLAS_TRANSPOSE trans_b, int n, int k,        \
                                          T alpha, const T* a, int lda, const T* b, int ldb, \
                                          T beta, T* c, int ldc);                            \
  TAIHU_BLAS_EXPORT void cblas_##P##syrk(enum CBLAS_ORDER order, enum CBLAS_UPLO uplo,       \
                                         enum CBLAS_TRANSPOSE trans, int n, int k, T alpha,  \
                                         const T* a, int lda, T beta, T* c, int ldc);        \
  TAIHU_BLAS_EXPORT void cblas_##P##syr2k(enum CBLAS_ORDER order, enum CBLAS_UPLO uplo,      \
                                          enum CBLAS_TRANSPOSE trans, int n, int k, T alpha, \
                                          const T* a, int lda, const T* b, int ldb, T beta,  \
                                          T* c, int ldc);                                    \
  TAIHU_BLAS_EXPORT void cblas_##P##symm(enum CBLAS_ORDER order, enum CBLAS_SIDE side,       \
                                         enum CBLAS_UPLO uplo, int m, int n, T alpha,        \
                                         const T* a, int lda, const T* b, int ldb, T beta,   \
                                         T* c, int ldc);                                     \
  TAIHU_BLAS_EXPORT void cblas_##P##trmm(enum CBLAS_ORDER order, enum CBLAS_SIDE side,       \
                                         enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans_a, \
                                         enum CBLAS_DIAG diag, int m, int n, T alpha,        \
                                         const T* a, int lda, T* b, int ldb);                \
  TAIHU_BLAS_EXPORT void cblas_##P##trsm(enum CBLAS_ORDER order, enum CBLAS_SIDE side,       \
                                         enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans_a, \
                                         enum CBLAS_DIAG diag, int m, int n, T alpha,        \
                                         const T* a, int lda, T* b, int ldb);                \
  TAIHU_BLAS_EXPORT void P##gemmt_(const char* uplo, const char* transa, const char* transb, \
                                   const int* n, const int* k, const T* alpha, const T* a,   \
                                   const int* lda, const T* b, const int* ldb, const T* beta, \
                                   T* c, const int* ldc, size_t, size_t, size_t);            \
  TAIHU_BLAS_EXPORT void P##syrk_(const char* uplo, const char* trans, const int* n,         \
                                  const int* k, const T* alpha, const T* a, const int* lda,  \
                                  const T* beta, T* c, const int* ldc, size_t, size_t);      \
  TAIHU_BLAS_EXPORT void P##syr2k_(const char* uplo, const char* trans, const int* n,        \
                                   const int* k, const T* alpha, const T* a, const int* lda, \
                                   const T* b, const int* ldb, const T* beta, T* c,          \
                                   const int* ldc, size_t, size_t);                          \
  TAIHU_BLAS_EXPORT void P##symm_(const char* side, const char* uplo, const int* m,          \
                                  const int* n, const T* alpha, const T* a, const int* lda,  \
                                  const T* b, const int* ldb, const T* beta, T* c,           \
                                  const int* ldc, size_t, size_t);                           \
  TAIHU_BLAS_EXPORT void P##trmm_(const char* side, const char* uplo, const char* transa,    \
                                  const char* diag, const int* m, const int* n,              \
                                  const T* alpha, const T* a, const int* lda, T* b,          \
                                  const int* ldb, size_t, size_t, size_t, size_t);           \
  TAIHU_BLAS_EXPORT void P##trsm_(const char* side, const char* uplo, const char* transa,    \
                                  const char* diag, const int* m, const int* n,              \
                                  const T* alpha, const T* a, const int* lda, T* b,          \
                                  const int* ldb, size_t, size_t, size_t, size_t);
TAIHU_BLAS_LEVEL3(float, s)
TAIHU_BLAS_LEVEL3(double, d)
#undef TAIHU_BLAS_LEVEL3

/* Batched GEMM with MKL's signatures (OpenBLAS 0.3.29+ has the same): one problem over
 * strided matrices, and group_count groups of group_size[g] problems each (parameters
 * at index g, pointers consecutive over the groups). */
#define TAIHU_BLAS_BATCH(T, P)                                                                \
  TAIHU_BLAS_EXPORT void cblas_##P##gemm_batch_strided(                                       \
      enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,     \
      int m, int n, int k, T alpha, const T* a, int lda, int stride_a, const T* b, int ldb,   \
      int stride_b, T beta, T* c, int ldc, int stride_c, int batch_size);                     \
  TAIHU_BLAS_EXPORT void cblas_##P##gemm_batch(                                               \
      enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE* trans_a,                            \
      const enum CBLAS_TRANSPOSE* trans_b, const int* m, const int* n, const int* k,          \
      const T* alpha, const T** a, const int* lda, const T** b, const int* ldb,               \
      const T* beta, T** c, const int* ldc, int group_count, const int* group_size);
TAIHU_BLAS_BATCH(float, s)
TAIHU_BLAS_BATCH(double, d)
#undef TAIHU_BLAS_BATCH

/* Error handlers: weak defaults, replaced by a program's own definitions. */
TAIHU_BLAS_EXPORT void xerbla_(const char* srname, const int* info, size_t srname_len);
TAIHU_BLAS_EXPORT void cblas_xerbla(int info, const char* rout, const char* form, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

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
