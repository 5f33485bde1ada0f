/* dropin.c: a program that knows only the standard BLAS interface. It multiplies
 * with cblas_sgemm (row major, padded lda) and with Fortran dgemm_ (column major,
 * A transposed), checks both against a naive loop and prints what it computed and
 * which shared library each routine came from. Built twice: linked against
 * libtaihu_blas.so, and against the system BLAS, where
 *   LD_PRELOAD=libtaihu_blas.so blas-dropin-system
 * swaps in taihu's GEMM while saxpy_ and the rest stay the system BLAS's.
 * --require-taihu: exit 1 unless cblas_sgemm and dgemm_ came from libtaihu_blas (and
 * saxpy_, when present, did not). Exit status 0 means the products were right. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "taihu_cblas.h"

/* The file of the shared object the dynamic linker binds `symbol` to, or NULL. */
static const char* provider(const char* symbol) {
  Dl_info info;
  void* address = dlsym(RTLD_DEFAULT, symbol);
  if (address == NULL || dladdr(address, &info) == 0) return NULL;
  return info.dli_fname;
}

static void print_matrix(const char* name, const double* x, int rows, int cols) {
  for (int i = 0; i < rows; ++i) {
    printf("  %-5s %s [", i == 0 ? name : "", i == 0 ? "=" : " ");
    for (int j = 0; j < cols; ++j) printf(" %7.1f", x[i * cols + j]);
    printf(" ]\n");
  }
}

/* cblas_sgemm, row major: C (2x4) = A (2x3, stored with lda 5) * B (3x4). */
static double check_cblas_sgemm(void) {
  enum { M = 2, N = 4, K = 3, LDA = 5 };
  float a[M * LDA], b[K * N], c[M * N];
  double naive[M * N], shown[M * N], worst = 0.0;
  for (int i = 0; i < M * LDA; ++i) a[i] = (float)(i % LDA + 1 + 10 * (i / LDA));
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 7) - 2.0f;
  for (int i = 0; i < M * N; ++i) c[i] = -1.0f; /* beta = 0: never read */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, LDA, b, N, 0.0f, c,
              N);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double sum = 0.0;
      for (int p = 0; p < K; ++p) sum += (double)a[i * LDA + p] * b[p * N + j];
      naive[i * N + j] = sum;
      shown[i * N + j] = c[i * N + j];
      worst = fmax(worst, fabs(sum - c[i * N + j]));
    }
  }
  printf("cblas_sgemm: row major, C(2x4) = A(2x3, lda 5) * B(3x4)\n");
  print_matrix("C", shown, M, N);
  print_matrix("naive", naive, M, N);
  printf("  max |C - naive| = %g\n", worst);
  return worst;
}

/* dgemm_, column major: C (2x2) = 2 * A^T * B + C, A and B are 3x2. */
static double check_dgemm(void) {
  const int m = 2, n = 2, k = 3, lda = 3, ldb = 3, ldc = 2;
  const double alpha = 2.0, beta = 1.0;
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, -1, 2, 1, 0}, c[4] = {1, 1, 1, 1};
  double naive[4], shown[4], worst = 0.0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double sum = 0.0;
      for (int p = 0; p < k; ++p) sum += a[i * lda + p] * b[j * ldb + p];
      naive[i * n + j] = alpha * sum + beta * c[j * ldc + i];
    }
  }
  dgemm_("T", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      shown[i * n + j] = c[j * ldc + i];
      worst = fmax(worst, fabs(naive[i * n + j] - c[j * ldc + i]));
    }
  }
  printf("dgemm_: column major, C(2x2) = 2 * A^T * B + C, A and B 3x2\n");
  print_matrix("C", shown, m, n);
  print_matrix("naive", naive, m, n);
  printf("  max |C - naive| = %g\n", worst);
  return worst;
}

static int from_taihu(const char* file) { return file != NULL && strstr(file, "taihu_blas"); }

int main(int argc, char** argv) {
  const int require_taihu = argc > 1 && strcmp(argv[1], "--require-taihu") == 0;
  const char* symbols[] = {"cblas_sgemm", "dgemm_", "saxpy_"};
  const char* files[3];
  int ok = 1;
  printf("BLAS routines in this process:\n");
  for (int i = 0; i < 3; ++i) {
    files[i] = provider(symbols[i]);
    printf("  %-12s %s%s\n", symbols[i], files[i] ? "from " : "",
           files[i] ? files[i] : "not in this process");
  }
  if (check_cblas_sgemm() > 1e-4) ok = 0;
  if (check_dgemm() > 1e-12) ok = 0;
  if (require_taihu && (!from_taihu(files[0]) || !from_taihu(files[1]) || from_taihu(files[2]))) {
    printf("FAILED: expected cblas_sgemm and dgemm_ from libtaihu_blas, saxpy_ from elsewhere\n");
    return 1;
  }
  printf(ok ? "OK: both products match the naive loops\n" : "FAILED: wrong products\n");
  return ok ? 0 : 1;
}
