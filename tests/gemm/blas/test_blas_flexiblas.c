/* A program that knows only FlexiBLAS (linked with -lflexiblas), run with FLEXIBLAS=taihu
 * (the backend libflexiblas_taihu.so named in a FlexiBLAS configuration file):
 * - dgemm_ (Fortran) and cblas_sgemm, checked against a naive double loop; ctest's
 *   PASS_REGULAR_EXPRESSION requires TAIHU_VERBOSE's "served by libtaihu_blas" lines for
 *   both, so they were taihu's and not FlexiBLAS's fallback;
 * - cblas_daxpy, which taihu does not export: the system BLAS behind it computes it;
 * - flexiblas_set_num_threads(1) reaches taihu's thread control, and the backend in use
 *   is the one configured.
 * Prints FAILED (ctest's FAIL_REGULAR_EXPRESSION) on any mismatch. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>
#include <flexiblas_api.h>

void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, size_t, size_t);

enum { M = 37, N = 29, K = 41 };

int main(void) {
  static double a[M * K], b[K * N], c[M * N], ref[M * N];
  static float as[M * K], bs[K * N], cs[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = as[i] = (float)((i * 7 % 13) - 6) / 8.0f;
  for (int i = 0; i < K * N; ++i) b[i] = bs[i] = (float)((i * 5 % 11) - 5) / 4.0f;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      double s = 0;
      for (int p = 0; p < K; ++p) s += a[i + p * M] * b[p + j * K];
      ref[i + j * M] = s;
      c[i + j * M] = -1;
      cs[i + j * M] = -1;
    }
  int status = 0;
  char backend[64] = "";
  flexiblas_current_backend(backend, sizeof backend);
  if (strcmp(backend, "TAIHU") != 0) {
    printf("FAILED: FlexiBLAS runs backend '%s', not TAIHU\n", backend);
    status = 1;
  }
  flexiblas_set_num_threads(1);
  if (flexiblas_get_num_threads() != 1) {
    printf("FAILED: flexiblas_set_num_threads(1) left %d threads\n", flexiblas_get_num_threads());
    status = 1;
  }

  const double one = 1, zero = 0;
  const int m = M, n = N, k = K;
  dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, as, M, bs, K, 0.0f, cs, M);
  double err_d = 0, err_s = 0;
  for (int i = 0; i < M * N; ++i) {
    err_d = fmax(err_d, fabs(c[i] - ref[i]));
    err_s = fmax(err_s, fabs(cs[i] - ref[i]));
  }
  cblas_daxpy(M * N, -1.0, ref, 1, c, 1);
  double residual = 0;
  for (int i = 0; i < M * N; ++i) residual = fmax(residual, fabs(c[i]));
  printf("backend %s: dgemm_ max error %.3g, cblas_sgemm %.3g, cblas_daxpy residual %.3g\n", backend,
         err_d, err_s, residual);
  if (!(err_d < 1e-12 && err_s < 1e-4 && residual < 1e-12)) {
    printf("FAILED: products or axpy differ from the naive loop\n");
    status = 1;
  }
  return status;
}
