/* taihu_blas_prototypes.h: the prototypes of libtaihu_blas.so's BLAS routines, written
 * once for both integer ABIs. Not a header to include on its own: taihu_cblas.h
 * includes it with TAIHU_BLAS_INT = int and TAIHU_BLAS_NAME(name) = name (LP64:
 * sgemm_, cblas_sgemm), taihu_cblas64.h with TAIHU_BLAS_INT = int64_t and
 * TAIHU_BLAS_NAME(name) = name##64_ (ILP64: sgemm_64_, cblas_sgemm64_, OpenBLAS's
 * INTERFACE64 + SYMBOLSUFFIX=64_ names). Every integer argument (sizes, leading
 * dimensions, strides, counts, xerbla's info) is TAIHU_BLAS_INT; the CBLAS enums stay
 * int-sized in both. No include guard, by design. */
#if !defined(TAIHU_BLAS_INT) || !defined(TAIHU_BLAS_NAME)
#error "include taihu_cblas.h or taihu_cblas64.h, not taihu_blas_prototypes.h"
#endif

/* GEMM: the CBLAS interface, and the Fortran 77 interface as gfortran calls it (every
 * argument by pointer, column major, then one hidden size_t length per CHARACTER
 * argument, never read, so C callers that omit them are served too). */
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_sgemm)(
    enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
    TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, float alpha, const float* a,
    TAIHU_BLAS_INT lda, const float* b, TAIHU_BLAS_INT ldb, float beta, float* c,
    TAIHU_BLAS_INT ldc);
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_dgemm)(
    enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
    TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, double alpha, const double* a,
    TAIHU_BLAS_INT lda, const double* b, TAIHU_BLAS_INT ldb, double beta, double* c,
    TAIHU_BLAS_INT ldc);
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(sgemm_)(
    const char* transa, const char* transb, const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n,
    const TAIHU_BLAS_INT* k, const float* alpha, const float* a, const TAIHU_BLAS_INT* lda,
    const float* b, const TAIHU_BLAS_INT* ldb, const float* beta, float* c,
    const TAIHU_BLAS_INT* ldc, size_t transa_len, size_t transb_len);
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(dgemm_)(
    const char* transa, const char* transb, const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n,
    const TAIHU_BLAS_INT* k, const double* alpha, const double* a, const TAIHU_BLAS_INT* lda,
    const double* b, const TAIHU_BLAS_INT* ldb, const double* beta, double* c,
    const TAIHU_BLAS_INT* ldc, size_t transa_len, size_t transb_len);

/* bf16-in / fp32-out GEMM: C (float) = alpha op(A) op(B) + beta C with A and B in
 * bfloat16 (the upper half of an IEEE binary32, as uint16_t). cblas_sbgemm and sbgemm_
 * have OpenBLAS's signatures, cblas_gemm_bf16bf16f32 MKL's (the same arguments).
 * Arguments are checked and reported as for cblas_sgemm / sgemm_. */
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_sbgemm)(
    enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
    TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, float alpha, const taihu_bfloat16* a,
    TAIHU_BLAS_INT lda, const taihu_bfloat16* b, TAIHU_BLAS_INT ldb, float beta, float* c,
    TAIHU_BLAS_INT ldc);
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_gemm_bf16bf16f32)(
    enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
    TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, float alpha, const taihu_bfloat16* a,
    TAIHU_BLAS_INT lda, const taihu_bfloat16* b, TAIHU_BLAS_INT ldb, float beta, float* c,
    TAIHU_BLAS_INT ldc);
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(sbgemm_)(
    const char* transa, const char* transb, const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n,
    const TAIHU_BLAS_INT* k, const float* alpha, const taihu_bfloat16* a,
    const TAIHU_BLAS_INT* lda, const taihu_bfloat16* b, const TAIHU_BLAS_INT* ldb,
    const float* beta, float* c, const TAIHU_BLAS_INT* ldc, size_t transa_len,
    size_t transb_len);

/* The other level-3 routines, s and d, with netlib CBLAS's and reference BLAS's
 * signatures; ?gemmt (C's uplo triangle of alpha op(A) op(B) + beta C, C n x n) has
 * MKL's and OpenBLAS's. */
#define TAIHU_BLAS_LEVEL3(T, P)                                                               \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##gemmt)(                                   \
      enum CBLAS_ORDER order, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans_a,             \
      enum CBLAS_TRANSPOSE trans_b, TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, T alpha, const T* a,  \
      TAIHU_BLAS_INT lda, const T* b, TAIHU_BLAS_INT ldb, T beta, T* c, TAIHU_BLAS_INT ldc);  \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##syrk)(                                    \
      enum CBLAS_ORDER order, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans,               \
      TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, T alpha, const T* a, TAIHU_BLAS_INT lda, T beta,    \
      T* c, TAIHU_BLAS_INT ldc);                                                              \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##syr2k)(                                   \
      enum CBLAS_ORDER order, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans,               \
      TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, T alpha, const T* a, TAIHU_BLAS_INT lda,            \
      const T* b, TAIHU_BLAS_INT ldb, T beta, T* c, TAIHU_BLAS_INT ldc);                      \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##symm)(                                    \
      enum CBLAS_ORDER order, enum CBLAS_SIDE side, enum CBLAS_UPLO uplo, TAIHU_BLAS_INT m,   \
      TAIHU_BLAS_INT n, T alpha, const T* a, TAIHU_BLAS_INT lda, const T* b,                  \
      TAIHU_BLAS_INT ldb, T beta, T* c, TAIHU_BLAS_INT ldc);                                  \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##trmm)(                                    \
      enum CBLAS_ORDER order, enum CBLAS_SIDE side, enum CBLAS_UPLO uplo,                     \
      enum CBLAS_TRANSPOSE trans_a, enum CBLAS_DIAG diag, TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, \
      T alpha, const T* a, TAIHU_BLAS_INT lda, T* b, TAIHU_BLAS_INT ldb);                     \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##trsm)(                                    \
      enum CBLAS_ORDER order, enum CBLAS_SIDE side, enum CBLAS_UPLO uplo,                     \
      enum CBLAS_TRANSPOSE trans_a, enum CBLAS_DIAG diag, TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, \
      T alpha, const T* a, TAIHU_BLAS_INT lda, T* b, TAIHU_BLAS_INT ldb);                     \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(P##gemmt_)(                                          \
      const char* uplo, const char* transa, const char* transb, const TAIHU_BLAS_INT* n,      \
      const TAIHU_BLAS_INT* k, const T* alpha, const T* a, const TAIHU_BLAS_INT* lda,         \
      const T* b, const TAIHU_BLAS_INT* ldb, const T* beta, T* c, const TAIHU_BLAS_INT* ldc,  \
      size_t, size_t, size_t);                                                                \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(P##syrk_)(                                           \
      const char* uplo, const char* trans, const TAIHU_BLAS_INT* n, const TAIHU_BLAS_INT* k,  \
      const T* alpha, const T* a, const TAIHU_BLAS_INT* lda, const T* beta, T* c,             \
      const TAIHU_BLAS_INT* ldc, size_t, size_t);                                             \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(P##syr2k_)(                                          \
      const char* uplo, const char* trans, const TAIHU_BLAS_INT* n, const TAIHU_BLAS_INT* k,  \
      const T* alpha, const T* a, const TAIHU_BLAS_INT* lda, const T* b,                      \
      const TAIHU_BLAS_INT* ldb, const T* beta, T* c, const TAIHU_BLAS_INT* ldc, size_t,      \
      size_t);                                                                                \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(P##symm_)(                                           \
      const char* side, const char* uplo, const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n,   \
      const T* alpha, const T* a, const TAIHU_BLAS_INT* lda, const T* b,                      \
      const TAIHU_BLAS_INT* ldb, const T* beta, T* c, const TAIHU_BLAS_INT* ldc, size_t,      \
      size_t);                                                                                \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(P##trmm_)(                                           \
      const char* side, const char* uplo, const char* transa, const char* diag,               \
      const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n, const T* alpha, const T* a,           \
      const TAIHU_BLAS_INT* lda, T* b, const TAIHU_BLAS_INT* ldb, size_t, size_t, size_t,     \
      size_t);                                                                                \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(P##trsm_)(                                           \
      const char* side, const char* uplo, const char* transa, const char* diag,               \
      const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n, const T* alpha, const T* a,           \
      const TAIHU_BLAS_INT* lda, T* b, const TAIHU_BLAS_INT* ldb, size_t, size_t, size_t,     \
      size_t);
TAIHU_BLAS_LEVEL3(float, s)
TAIHU_BLAS_LEVEL3(double, d)
#undef TAIHU_BLAS_LEVEL3

/* Batched GEMM with MKL's signatures (OpenBLAS 0.3.29+ has the same): one problem over
 * strided matrices, and group_count groups of group_size[g] problems each (parameters
 * at index g, pointers consecutive over the groups). */
#define TAIHU_BLAS_BATCH(T, P)                                                                 \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##gemm_batch_strided)(                       \
      enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,      \
      TAIHU_BLAS_INT m, TAIHU_BLAS_INT n, TAIHU_BLAS_INT k, T alpha, const T* a,               \
      TAIHU_BLAS_INT lda, TAIHU_BLAS_INT stride_a, const T* b, TAIHU_BLAS_INT ldb,             \
      TAIHU_BLAS_INT stride_b, T beta, T* c, TAIHU_BLAS_INT ldc, TAIHU_BLAS_INT stride_c,      \
      TAIHU_BLAS_INT batch_size);                                                              \
  TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_##P##gemm_batch)(                               \
      enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE* trans_a,                             \
      const enum CBLAS_TRANSPOSE* trans_b, const TAIHU_BLAS_INT* m, const TAIHU_BLAS_INT* n,   \
      const TAIHU_BLAS_INT* k, const T* alpha, const T** a, const TAIHU_BLAS_INT* lda,         \
      const T** b, const TAIHU_BLAS_INT* ldb, const T* beta, T** c, const TAIHU_BLAS_INT* ldc, \
      TAIHU_BLAS_INT group_count, const TAIHU_BLAS_INT* group_size);
TAIHU_BLAS_BATCH(float, s)
TAIHU_BLAS_BATCH(double, d)
#undef TAIHU_BLAS_BATCH

/* Error handlers: weak defaults, replaced by a program's own definitions. */
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(xerbla_)(const char* srname, const TAIHU_BLAS_INT* info,
                                                size_t srname_len);
TAIHU_BLAS_EXPORT void TAIHU_BLAS_NAME(cblas_xerbla)(TAIHU_BLAS_INT info, const char* rout,
                                                     const char* form, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
