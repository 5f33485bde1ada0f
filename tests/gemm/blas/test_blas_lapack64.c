/* test_blas_lapack64.c: Reference-LAPACK's ILP64 build (64-bit integers, "64_" names:
 * dgesv_64_ calling dgemm_64_, dtrsm_64_, ...) on top of libtaihu_blas.so's ILP64 ABI.
 * The build links Debian's liblapack64/libblas64 archives with every Fortran symbol
 * renamed name_ -> name_64_ (suffix_lapack64.cmake: what Reference-LAPACK's
 * BUILD_INDEX64_EXT_API produces), in front of which libtaihu_blas.so supplies the
 * level-3 routines it exports; the renamed reference BLAS supplies the rest (idamax,
 * dscal, ...). Checks:
 *   - dgemm_64_, dtrsm_64_, dsyrk_64_ resolve to libtaihu_blas.so, so LAPACK's calls
 *     run taihu's code (TAIHU_VERBOSE=1 logs "DGEMM served by libtaihu_blas");
 *   - dgesv_64_ (LU, dgemm/dtrsm) and dposv_64_ (Cholesky, dsyrk/dtrsm/dgemm) solve
 *     300 x 300 systems with 7 right-hand sides to the solution of a naive Gaussian
 *     elimination in long double, with small residuals;
 *   - a singular matrix gives INFO > 0 (the 64-bit INFO is written in full).
 * Prints one line per failed check; exit status 0 when all pass. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stddef.h>

/* LAPACK's ILP64 drivers (not declared by taihu's headers). */
void dgesv_64_(const int64_t* n, const int64_t* nrhs, double* a, const int64_t* lda,
               int64_t* ipiv, double* b, const int64_t* ldb, int64_t* info);
void dposv_64_(const char* uplo, const int64_t* n, const int64_t* nrhs, double* a,
               const int64_t* lda, double* b, const int64_t* ldb, int64_t* info, size_t);

#include "c_test_check.h"

enum { N = 300, NRHS = 7 };

static uint64_t rng_state = 0x2545f4914f6cdd1du;
static double next_uniform(void) { /* xorshift64*: in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717u) >> 11) / 4503599627370496.0 - 1.0;
}

/* The independent reference: Gaussian elimination with partial pivoting in long
 * double on copies of A (column major, n x n) and B (n x nrhs); x overwrites xb. */
static void naive_solve(int n, int nrhs, const double* a, const double* b, double* x) {
  long double* m = malloc(sizeof(long double) * (size_t)n * (size_t)n);
  long double* r = malloc(sizeof(long double) * (size_t)n * (size_t)nrhs);
  if (m == NULL || r == NULL) abort();
  for (size_t i = 0; i < (size_t)n * (size_t)n; ++i) m[i] = a[i];
  for (size_t i = 0; i < (size_t)n * (size_t)nrhs; ++i) r[i] = b[i];
#define M_(i, j) m[(size_t)(i) + (size_t)(j) * (size_t)n]
#define R_(i, j) r[(size_t)(i) + (size_t)(j) * (size_t)n]
  for (int col = 0; col < n; ++col) {
    int piv = col;
    for (int i = col + 1; i < n; ++i)
      if (fabsl(M_(i, col)) > fabsl(M_(piv, col))) piv = i;
    if (piv != col) {
      for (int j = 0; j < n; ++j) {
        const long double t = M_(col, j);
        M_(col, j) = M_(piv, j);
        M_(piv, j) = t;
      }
      for (int j = 0; j < nrhs; ++j) {
        const long double t = R_(col, j);
        R_(col, j) = R_(piv, j);
        R_(piv, j) = t;
      }
    }
    for (int i = col + 1; i < n; ++i) {
      const long double f = M_(i, col) / M_(col, col);
      if (f == 0) continue;
      for (int j = col; j < n; ++j) M_(i, j) -= f * M_(col, j);
      for (int j = 0; j < nrhs; ++j) R_(i, j) -= f * R_(col, j);
    }
  }
  for (int j = 0; j < nrhs; ++j)
    for (int i = n - 1; i >= 0; --i) {
      long double s = R_(i, j);
      for (int p = i + 1; p < n; ++p) s -= M_(i, p) * R_(p, j);
      R_(i, j) = s / M_(i, i);
    }
  for (size_t i = 0; i < (size_t)n * (size_t)nrhs; ++i) x[i] = (double)r[i];
#undef M_
#undef R_
  free(m);
  free(r);
}

/* max |x - y| / max |y| */
static double relative_error(const double* x, const double* y, size_t len) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < len; ++i) {
    diff = fmax(diff, fabs(x[i] - y[i]));
    scale = fmax(scale, fabs(y[i]));
  }
  return diff / scale;
}

/* max over columns of ||A x - b||_inf / (||A||_inf ||x||_inf) */
static double residual(const double* a, const double* x, const double* b) {
  double anorm = 0, worst = 0;
  for (int i = 0; i < N; ++i) {
    double row = 0;
    for (int j = 0; j < N; ++j) row += fabs(a[i + (size_t)j * N]);
    anorm = fmax(anorm, row);
  }
  for (int c = 0; c < NRHS; ++c) {
    double rnorm = 0, xnorm = 0;
    for (int i = 0; i < N; ++i) {
      long double s = -(long double)b[i + (size_t)c * N];
      for (int j = 0; j < N; ++j) s += (long double)a[i + (size_t)j * N] * x[j + (size_t)c * N];
      rnorm = fmax(rnorm, fabs((double)s));
      xnorm = fmax(xnorm, fabs(x[i + (size_t)c * N]));
    }
    worst = fmax(worst, rnorm / (anorm * xnorm));
  }
  return worst;
}

static void check_served_by_taihu(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  const int found = address != NULL && dladdr(address, &info) != 0 && info.dli_fname != NULL;
  CHECK(found && strstr(info.dli_fname, "libtaihu_blas") != NULL, "%s resolves to %s", symbol,
        found ? info.dli_fname : "(nothing)");
}

int main(void) {
  check_served_by_taihu("dgemm_64_");
  check_served_by_taihu("dtrsm_64_");
  check_served_by_taihu("dsyrk_64_");

  static double a[N * N], a_copy[N * N], b[N * NRHS], x[N * NRHS], ref[N * NRHS];
  static int64_t ipiv[N];
  const int64_t n = N, nrhs = NRHS, ld = N;
  int64_t info = -1;

  /* General system: LU with partial pivoting (dgetrf's blocked path calls dgemm/dtrsm). */
  for (size_t i = 0; i < (size_t)N * N; ++i) a[i] = next_uniform();
  for (size_t i = 0; i < (size_t)N * NRHS; ++i) b[i] = next_uniform();
  naive_solve(N, NRHS, a, b, ref);
  memcpy(a_copy, a, sizeof a);
  memcpy(x, b, sizeof b);
  dgesv_64_(&n, &nrhs, a_copy, &ld, ipiv, x, &ld, &info);
  CHECK(info == 0, "dgesv_64_ INFO = %lld", (long long)info);
  const double gesv_error = relative_error(x, ref, (size_t)N * NRHS);
  const double gesv_residual = residual(a, x, b);
  CHECK(gesv_error < 1e-9, "dgesv_64_ differs from the naive solution by %g", gesv_error);
  CHECK(gesv_residual < 1e-13, "dgesv_64_ residual %g", gesv_residual);

  /* Symmetric positive definite system: A = G^T G + N I, Cholesky (dsyrk/dtrsm/dgemm). */
  static double g[N * N];
  for (size_t i = 0; i < (size_t)N * N; ++i) g[i] = next_uniform();
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      double s = i == j ? N : 0.0;
      for (int p = 0; p < N; ++p) s += g[p + (size_t)i * N] * g[p + (size_t)j * N];
      a[i + (size_t)j * N] = s;
    }
  naive_solve(N, NRHS, a, b, ref);
  memcpy(a_copy, a, sizeof a);
  memcpy(x, b, sizeof b);
  info = -1;
  dposv_64_("L", &n, &nrhs, a_copy, &ld, x, &ld, &info, 1);
  CHECK(info == 0, "dposv_64_ INFO = %lld", (long long)info);
  const double posv_error = relative_error(x, ref, (size_t)N * NRHS);
  CHECK(posv_error < 1e-10, "dposv_64_ differs from the naive solution by %g", posv_error);
  CHECK(residual(a, x, b) < 1e-13, "dposv_64_ residual %g", residual(a, x, b));

  /* Singular: column 100 zero, so U(101, 101) = 0 exactly and INFO = 101. */
  for (size_t i = 0; i < (size_t)N * N; ++i) a[i] = next_uniform();
  for (int i = 0; i < N; ++i) a[i + (size_t)100 * N] = 0.0;
  memcpy(x, b, sizeof b);
  info = -1;
  dgesv_64_(&n, &nrhs, a, &ld, ipiv, x, &ld, &info);
  CHECK(info == 101, "singular dgesv_64_ INFO = %lld, expected 101", (long long)info);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("OK: LAPACK ILP64 on libtaihu_blas: dgesv_64_ error %.2g residual %.2g, dposv_64_ "
         "error %.2g\n",
         gesv_error, gesv_residual, posv_error);
  return 0;
}
