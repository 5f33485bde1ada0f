/* test_blas_ilp64.c: libtaihu_blas.so's two integer ABIs from C, as a program sees
 * them through taihu_cblas64.h.
 *   - sgemm_/dgemm_/cblas_?gemm (LP64) and sgemm_64_/dgemm_64_/cblas_?gemm64_ (ILP64)
 *     against a naive loop, every transpose case, both CBLAS layouts;
 *   - every other ILP64 twin (gemmt, syrk, syr2k, symm, trmm, trsm, both batch forms,
 *     sbgemm) gives bit for bit the LP64 routine's result (same code, and the LP64
 *     routines are checked against naive loops in test_blas_level3/batch/sbgemm), so a
 *     wrong argument order or width in the twin shows;
 *   - bad arguments whose badness needs 64 bits (M = 2^32 + 2 with LDA = 3, which a
 *     routine truncating to 32 bits would take as M = 2, a legal call; N = -2^40, whose
 *     low half is 0) reach this program's own xerbla_64_ / cblas_xerbla64_ with the
 *     reference parameter number, never xerbla_, and leave C untouched; legal calls
 *     with M = 2^33 and nothing to compute return at once;
 *   - sizes that pass reference BLAS's rules but describe matrices larger than the
 *     address space fail cleanly (C untouched, no handler, no crash).
 * Prints one line per failed check; exit status 0 when all pass. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taihu_cblas64.h"

#include "c_test_check.h"

/* ---- this program's error handlers (they replace taihu's weak defaults) ---- */
static char last_srname[8];
static long long last_info;
static int lp64_xerbla_calls, ilp64_xerbla_calls, lp64_cblas_calls, ilp64_cblas_calls;
static char last_rout[40];

void xerbla_(const char* srname, const int* info, size_t len) {
  ++lp64_xerbla_calls;
  last_info = *info;
  snprintf(last_srname, sizeof last_srname, "%.*s", (int)len, srname);
}
void xerbla_64_(const char* srname, const int64_t* info, size_t len) {
  ++ilp64_xerbla_calls;
  last_info = (long long)*info;
  snprintf(last_srname, sizeof last_srname, "%.*s", (int)len, srname);
}
void cblas_xerbla(int info, const char* rout, const char* form, ...) {
  (void)form;
  ++lp64_cblas_calls;
  last_info = info;
  snprintf(last_rout, sizeof last_rout, "%s", rout);
}
void cblas_xerbla64_(int64_t info, const char* rout, const char* form, ...) {
  (void)form;
  ++ilp64_cblas_calls;
  last_info = (long long)info;
  snprintf(last_rout, sizeof last_rout, "%s", rout);
}

static void reset_handlers(void) {
  lp64_xerbla_calls = ilp64_xerbla_calls = lp64_cblas_calls = ilp64_cblas_calls = 0;
  last_info = 0;
  last_srname[0] = last_rout[0] = '\0';
}

/* ---- data ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double next_uniform(void) { /* xorshift64*: in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717u) >> 11) / 4503599627370496.0 - 1.0;
}
static void fill_d(double* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = next_uniform();
}
static void fill_s(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = (float)next_uniform();
}

/* C = alpha op(A) op(B) + beta C, column major, in long double. */
static void naive_gemm(int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                       const double* b, int ldb, double beta, double* c, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double sum = 0;
      for (int p = 0; p < k; ++p) {
        const double av = ta ? a[p + (size_t)i * lda] : a[i + (size_t)p * lda];
        const double bv = tb ? b[j + (size_t)p * ldb] : b[p + (size_t)j * ldb];
        sum += (long double)av * bv;
      }
      c[i + (size_t)j * ldc] = (double)(alpha * (double)sum + beta * c[i + (size_t)j * ldc]);
    }
}

static double max_diff_d(const double* x, const double* y, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = fmax(worst, fabs(x[i] - y[i]));
  return worst;
}
static double max_diff_s(const float* x, const double* y, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = fmax(worst, fabs((double)x[i] - y[i]));
  return worst;
}

enum { M = 37, N = 29, K = 41, LD = 53 }; /* odd sizes: edge tiles everywhere */

/* GEMM through all six entry points (two CBLAS layouts: row major computes the
 * transposed problem) against the naive loop. */
static void check_gemm(void) {
  static double a[LD * LD], b[LD * LD], c0[LD * LD], ref[LD * LD], cd[LD * LD];
  static float as[LD * LD], bs[LD * LD], cs[LD * LD];
  const char letters[2] = {'N', 'T'};
  fill_d(a, LD * LD);
  fill_d(b, LD * LD);
  fill_d(c0, LD * LD);
  for (size_t i = 0; i < LD * LD; ++i) {
    /* float inputs exactly representable: the double reference is exact for them */
    as[i] = (float)a[i];
    bs[i] = (float)b[i];
  }
  const double alpha = 0.75, beta = -0.5;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      double ad[LD * LD], bd[LD * LD];
      for (size_t i = 0; i < LD * LD; ++i) {
        ad[i] = as[i];
        bd[i] = bs[i];
      }
      memcpy(ref, c0, sizeof ref);
      naive_gemm(ta, tb, M, N, K, alpha, ad, LD, bd, LD, beta, ref, LD);
      const int m = M, n = N, k = K, ld = LD;
      const int64_t m64 = M, n64 = N, k64 = K, ld64 = LD;
      const float alpha_s = (float)alpha, beta_s = (float)beta;
      const enum CBLAS_TRANSPOSE cta = ta ? CblasTrans : CblasNoTrans;
      const enum CBLAS_TRANSPOSE ctb = tb ? CblasTrans : CblasNoTrans;

      memcpy(cd, c0, sizeof cd);
      dgemm_(&letters[ta], &letters[tb], &m, &n, &k, &alpha, ad, &ld, bd, &ld, &beta, cd, &ld, 1,
             1);
      CHECK(max_diff_d(cd, ref, LD * LD) < 1e-12, "dgemm_ %c%c", letters[ta], letters[tb]);
      memcpy(cd, c0, sizeof cd);
      dgemm_64_(&letters[ta], &letters[tb], &m64, &n64, &k64, &alpha, ad, &ld64, bd, &ld64, &beta,
                cd, &ld64, 1, 1);
      CHECK(max_diff_d(cd, ref, LD * LD) < 1e-12, "dgemm_64_ %c%c", letters[ta], letters[tb]);
      memcpy(cd, c0, sizeof cd);
      cblas_dgemm64_(CblasColMajor, cta, ctb, m64, n64, k64, alpha, ad, ld64, bd, ld64, beta, cd,
                     ld64);
      CHECK(max_diff_d(cd, ref, LD * LD) < 1e-12, "cblas_dgemm64_ col %c%c", letters[ta],
            letters[tb]);
      /* Row major: C^T = op(B)^T op(A)^T, so the same storage with A and B swapped. */
      memcpy(cd, c0, sizeof cd);
      cblas_dgemm64_(CblasRowMajor, ctb, cta, n64, m64, k64, alpha, bd, ld64, ad, ld64, beta, cd,
                     ld64);
      CHECK(max_diff_d(cd, ref, LD * LD) < 1e-12, "cblas_dgemm64_ row %c%c", letters[ta],
            letters[tb]);

      const double tol_s = 1e-4;
      for (int which = 0; which < 4; ++which) {
        for (size_t i = 0; i < LD * LD; ++i) cs[i] = (float)c0[i];
        switch (which) {
          case 0:
            sgemm_(&letters[ta], &letters[tb], &m, &n, &k, &alpha_s, as, &ld, bs, &ld, &beta_s, cs,
                   &ld, 1, 1);
            break;
          case 1:
            sgemm_64_(&letters[ta], &letters[tb], &m64, &n64, &k64, &alpha_s, as, &ld64, bs, &ld64,
                      &beta_s, cs, &ld64, 1, 1);
            break;
          case 2:
            cblas_sgemm(CblasColMajor, cta, ctb, m, n, k, alpha_s, as, ld, bs, ld, beta_s, cs, ld);
            break;
          default:
            cblas_sgemm64_(CblasColMajor, cta, ctb, m64, n64, k64, alpha_s, as, ld64, bs, ld64,
                           beta_s, cs, ld64);
        }
        /* c0 rounded to float differs from the reference's c0 by beta * 2^-24 */
        CHECK(max_diff_s(cs, ref, LD * LD) < tol_s, "sgemm entry %d %c%c: %g", which, letters[ta],
              letters[tb], max_diff_s(cs, ref, LD * LD));
      }
    }
}

/* The ILP64 level-3, batch and bf16 twins against their LP64 routines, bit for bit. */
static void check_twins(void) {
  enum { S = LD * LD };
  static double a[S], b[S], c0[S], x[S], y[S];
  static float af[S], bf[S], cf0[S], xf[S], yf[S];
  fill_d(a, S);
  fill_d(b, S);
  fill_d(c0, S);
  fill_s(af, S);
  fill_s(bf, S);
  fill_s(cf0, S);
  for (int i = 0; i < LD; ++i) a[i + (size_t)i * LD] += 4.0; /* trsm: well conditioned */
  for (int i = 0; i < LD; ++i) af[i + (size_t)i * LD] += 4.0f;
  const int m = M, n = N, k = K, ld = LD;
  const int64_t m64 = M, n64 = N, k64 = K, ld64 = LD;
  const double alpha = 1.25, beta = 0.5;
  const float alpha_f = 1.25f, beta_f = 0.5f;

#define TWIN_D(label, lp64_call, ilp64_call)                       \
  do {                                                             \
    memcpy(x, c0, sizeof x);                                       \
    memcpy(y, c0, sizeof y);                                       \
    {                                                              \
      double* c = x;                                               \
      lp64_call;                                                   \
    }                                                              \
    {                                                              \
      double* c = y;                                               \
      ilp64_call;                                                  \
    }                                                              \
    CHECK(memcmp(x, y, sizeof x) == 0, "%s differs", label);       \
    CHECK(memcmp(x, c0, sizeof x) != 0, "%s left C alone", label); \
  } while (0)
#define TWIN_S(label, lp64_call, ilp64_call)                          \
  do {                                                                \
    memcpy(xf, cf0, sizeof xf);                                       \
    memcpy(yf, cf0, sizeof yf);                                       \
    {                                                                 \
      float* c = xf;                                                  \
      lp64_call;                                                      \
    }                                                                 \
    {                                                                 \
      float* c = yf;                                                  \
      ilp64_call;                                                     \
    }                                                                 \
    CHECK(memcmp(xf, yf, sizeof xf) == 0, "%s differs", label);       \
    CHECK(memcmp(xf, cf0, sizeof xf) != 0, "%s left C alone", label); \
  } while (0)

  TWIN_D(
      "dgemmt_64_", dgemmt_("L", "N", "T", &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1, 1),
      dgemmt_64_("L", "N", "T", &n64, &k64, &alpha, a, &ld64, b, &ld64, &beta, c, &ld64, 1, 1, 1));
  TWIN_D("cblas_dgemmt64_",
         cblas_dgemmt(CblasRowMajor, CblasUpper, CblasTrans, CblasNoTrans, n, k, alpha, a, ld, b,
                      ld, beta, c, ld),
         cblas_dgemmt64_(CblasRowMajor, CblasUpper, CblasTrans, CblasNoTrans, n64, k64, alpha, a,
                         ld64, b, ld64, beta, c, ld64));
  TWIN_D("dsyrk_64_", dsyrk_("U", "T", &n, &k, &alpha, a, &ld, &beta, c, &ld, 1, 1),
         dsyrk_64_("U", "T", &n64, &k64, &alpha, a, &ld64, &beta, c, &ld64, 1, 1));
  TWIN_S("cblas_ssyrk64_",
         cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, alpha_f, af, ld, beta_f, c, ld),
         cblas_ssyrk64_(CblasColMajor, CblasLower, CblasNoTrans, n64, k64, alpha_f, af, ld64,
                        beta_f, c, ld64));
  TWIN_D("dsyr2k_64_", dsyr2k_("L", "N", &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1),
         dsyr2k_64_("L", "N", &n64, &k64, &alpha, a, &ld64, b, &ld64, &beta, c, &ld64, 1, 1));
  TWIN_S("cblas_ssyr2k64_",
         cblas_ssyr2k(CblasRowMajor, CblasUpper, CblasTrans, n, k, alpha_f, af, ld, bf, ld, beta_f,
                      c, ld),
         cblas_ssyr2k64_(CblasRowMajor, CblasUpper, CblasTrans, n64, k64, alpha_f, af, ld64, bf,
                         ld64, beta_f, c, ld64));
  TWIN_D("dsymm_64_", dsymm_("R", "U", &m, &n, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1),
         dsymm_64_("R", "U", &m64, &n64, &alpha, a, &ld64, b, &ld64, &beta, c, &ld64, 1, 1));
  TWIN_S("cblas_ssymm64_",
         cblas_ssymm(CblasColMajor, CblasLeft, CblasLower, m, n, alpha_f, af, ld, bf, ld, beta_f, c,
                     ld),
         cblas_ssymm64_(CblasColMajor, CblasLeft, CblasLower, m64, n64, alpha_f, af, ld64, bf, ld64,
                        beta_f, c, ld64));
  /* trmm/trsm overwrite B: C plays B here. */
  TWIN_D("dtrmm_64_", dtrmm_("L", "U", "T", "N", &m, &n, &alpha, a, &ld, c, &ld, 1, 1, 1, 1),
         dtrmm_64_("L", "U", "T", "N", &m64, &n64, &alpha, a, &ld64, c, &ld64, 1, 1, 1, 1));
  TWIN_S("cblas_strmm64_",
         cblas_strmm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, m, n, alpha_f,
                     af, ld, c, ld),
         cblas_strmm64_(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, m64, n64,
                        alpha_f, af, ld64, c, ld64));
  TWIN_D("dtrsm_64_", dtrsm_("R", "L", "N", "N", &m, &n, &alpha, a, &ld, c, &ld, 1, 1, 1, 1),
         dtrsm_64_("R", "L", "N", "N", &m64, &n64, &alpha, a, &ld64, c, &ld64, 1, 1, 1, 1));
  TWIN_S("strsm_64_", strsm_("L", "L", "T", "U", &m, &n, &alpha_f, af, &ld, c, &ld, 1, 1, 1, 1),
         strsm_64_("L", "L", "T", "U", &m64, &n64, &alpha_f, af, &ld64, c, &ld64, 1, 1, 1, 1));
  TWIN_D("cblas_dtrsm64_",
         cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, alpha,
                     a, ld, c, ld),
         cblas_dtrsm64_(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, m64, n64,
                        alpha, a, ld64, c, ld64));
  TWIN_S("sgemmt_64_",
         sgemmt_("U", "T", "N", &n, &k, &alpha_f, af, &ld, bf, &ld, &beta_f, c, &ld, 1, 1, 1),
         sgemmt_64_("U", "T", "N", &n64, &k64, &alpha_f, af, &ld64, bf, &ld64, &beta_f, c, &ld64, 1,
                    1, 1));

  /* Strided batch: 3 problems of 8x7x6 in the first LD*LD elements. */
  {
    const int bm = 8, bn = 7, bk = 6, bld = 9, stride = 90, count = 3;
    const int64_t bm64 = bm, bn64 = bn, bk64 = bk, bld64 = bld, stride64 = stride, count64 = count;
    TWIN_D("cblas_dgemm_batch_strided64_",
           cblas_dgemm_batch_strided(CblasColMajor, CblasNoTrans, CblasTrans, bm, bn, bk, alpha, a,
                                     bld, stride, b, bld, stride, beta, c, bld, stride, count),
           cblas_dgemm_batch_strided64_(CblasColMajor, CblasNoTrans, CblasTrans, bm64, bn64, bk64,
                                        alpha, a, bld64, stride64, b, bld64, stride64, beta, c,
                                        bld64, stride64, count64));
    TWIN_S(
        "cblas_sgemm_batch_strided64_",
        cblas_sgemm_batch_strided(CblasRowMajor, CblasTrans, CblasNoTrans, bm, bn, bk, alpha_f, af,
                                  bld, stride, bf, bld, stride, beta_f, c, bld, stride, count),
        cblas_sgemm_batch_strided64_(CblasRowMajor, CblasTrans, CblasNoTrans, bm64, bn64, bk64,
                                     alpha_f, af, bld64, stride64, bf, bld64, stride64, beta_f, c,
                                     bld64, stride64, count64));
  }
  /* Grouped batch: two groups (2 and 1 problems) with their own sizes. */
  {
    const enum CBLAS_TRANSPOSE ta[2] = {CblasNoTrans, CblasTrans};
    const enum CBLAS_TRANSPOSE tb[2] = {CblasTrans, CblasNoTrans};
    const int gm[2] = {5, 9}, gn[2] = {6, 4}, gk[2] = {7, 3}, gld[2] = {11, 12}, gsize[2] = {2, 1};
    const int64_t gm64[2] = {5, 9}, gn64[2] = {6, 4}, gk64[2] = {7, 3}, gld64[2] = {11, 12},
                  gsize64[2] = {2, 1};
    const double galpha[2] = {1.5, -0.5}, gbeta[2] = {0.25, 2.0};
    const double* pa[3] = {a, a + 200, a + 400};
    const double* pb[3] = {b, b + 200, b + 400};
    double* pc_x[3] = {x, x + 200, x + 400};
    double* pc_y[3] = {y, y + 200, y + 400};
    memcpy(x, c0, sizeof x);
    memcpy(y, c0, sizeof y);
    cblas_dgemm_batch(CblasColMajor, ta, tb, gm, gn, gk, galpha, pa, gld, pb, gld, gbeta, pc_x, gld,
                      2, gsize);
    cblas_dgemm_batch64_(CblasColMajor, ta, tb, gm64, gn64, gk64, galpha, pa, gld64, pb, gld64,
                         gbeta, pc_y, gld64, 2, gsize64);
    CHECK(memcmp(x, y, sizeof x) == 0, "cblas_dgemm_batch64_ differs");
    CHECK(memcmp(x, c0, sizeof x) != 0, "cblas_dgemm_batch64_ left C alone");
    const float galpha_f[2] = {1.5f, -0.5f}, gbeta_f[2] = {0.25f, 2.0f};
    const float* paf[3] = {af, af + 200, af + 400};
    const float* pbf[3] = {bf, bf + 200, bf + 400};
    float* pcf_x[3] = {xf, xf + 200, xf + 400};
    float* pcf_y[3] = {yf, yf + 200, yf + 400};
    memcpy(xf, cf0, sizeof xf);
    memcpy(yf, cf0, sizeof yf);
    cblas_sgemm_batch(CblasRowMajor, ta, tb, gm, gn, gk, galpha_f, paf, gld, pbf, gld, gbeta_f,
                      pcf_x, gld, 2, gsize);
    cblas_sgemm_batch64_(CblasRowMajor, ta, tb, gm64, gn64, gk64, galpha_f, paf, gld64, pbf, gld64,
                         gbeta_f, pcf_y, gld64, 2, gsize64);
    CHECK(memcmp(xf, yf, sizeof xf) == 0, "cblas_sgemm_batch64_ differs");
  }
  /* bf16 inputs: the upper halves of the float inputs. */
  {
    static taihu_bfloat16 ab[S], bb[S];
    for (size_t i = 0; i < S; ++i) {
      uint32_t bits;
      memcpy(&bits, &af[i], sizeof bits);
      ab[i] = (taihu_bfloat16)(bits >> 16);
      memcpy(&bits, &bf[i], sizeof bits);
      bb[i] = (taihu_bfloat16)(bits >> 16);
    }
    TWIN_S("sbgemm_64_",
           sbgemm_("N", "T", &m, &n, &k, &alpha_f, ab, &ld, bb, &ld, &beta_f, c, &ld, 1, 1),
           sbgemm_64_("N", "T", &m64, &n64, &k64, &alpha_f, ab, &ld64, bb, &ld64, &beta_f, c, &ld64,
                      1, 1));
    TWIN_S("cblas_sbgemm64_",
           cblas_sbgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha_f, ab, ld, bb, ld,
                        beta_f, c, ld),
           cblas_sbgemm64_(CblasRowMajor, CblasTrans, CblasNoTrans, m64, n64, k64, alpha_f, ab,
                           ld64, bb, ld64, beta_f, c, ld64));
    TWIN_S("cblas_gemm_bf16bf16f3264_",
           cblas_gemm_bf16bf16f32(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha_f, ab,
                                  ld, bb, ld, beta_f, c, ld),
           cblas_gemm_bf16bf16f3264_(CblasColMajor, CblasNoTrans, CblasNoTrans, m64, n64, k64,
                                     alpha_f, ab, ld64, bb, ld64, beta_f, c, ld64));
  }
#undef TWIN_D
#undef TWIN_S
}

/* Expects exactly one report to the ILP64 handler `kind` (0: xerbla_64_, 1:
 * cblas_xerbla64_) with `info` and name `name`, none to the LP64 handlers, and C unchanged. */
static void expect_report(const char* what, int kind, long long info, const char* name,
                          const float* c, const float* c_before, size_t c_len) {
  const int want_fortran = kind == 0 ? 1 : 0;
  CHECK(ilp64_xerbla_calls == want_fortran && ilp64_cblas_calls == 1 - want_fortran &&
            lp64_xerbla_calls == 0 && lp64_cblas_calls == 0,
        "%s: handler calls xerbla_64_ %d, cblas_xerbla64_ %d, xerbla_ %d, cblas_xerbla %d", what,
        ilp64_xerbla_calls, ilp64_cblas_calls, lp64_xerbla_calls, lp64_cblas_calls);
  CHECK(last_info == info, "%s: info %lld, expected %lld", what, last_info, info);
  const char* got = kind == 0 ? last_srname : last_rout;
  CHECK(strcmp(got, name) == 0, "%s: routine '%s', expected '%s'", what, got, name);
  CHECK(memcmp(c, c_before, c_len * sizeof *c) == 0, "%s: C was modified", what);
}

static void check_64bit_arguments(void) {
  float a[16], b[16], c[16], c_before[16];
  double ad[16], cd[16];
  fill_s(a, 16);
  fill_s(b, 16);
  fill_s(c, 16);
  memcpy(c_before, c, sizeof c);
  fill_d(ad, 16);
  fill_d(cd, 16);
  const float one = 1.0f, beta_one = 1.0f;
  const int64_t two_32_plus_2 = ((int64_t)1 << 32) + 2; /* low 32 bits: 2 */
  const int64_t two_33 = (int64_t)1 << 33;              /* low 32 bits: 0 */
  const int64_t minus_two_40 = -((int64_t)1 << 40);     /* low 32 bits: 0 */
  const int64_t one64 = 1, three = 3, four = 4;

  /* M = 2^32 + 2, LDA = 3: LDA < M (parameter 8). Truncated: M = 2, LDA = 3, legal. */
  reset_handlers();
  sgemm_64_("N", "N", &two_32_plus_2, &one64, &one64, &one, a, &three, b, &one64, &one, c,
            &two_32_plus_2, 1, 1);
  expect_report("sgemm_64_ LDA < M = 2^32+2", 0, 8, "SGEMM ", c, c_before, 16);

  /* N = -2^40 (parameter 4); truncated: N = 0, legal. */
  reset_handlers();
  sgemm_64_("N", "N", &four, &minus_two_40, &four, &one, a, &four, b, &four, &one, c, &four, 1, 1);
  expect_report("sgemm_64_ N = -2^40", 0, 4, "SGEMM ", c, c_before, 16);

  /* LDC = 3 < M = 2^32 + 2 with a legal LDA (parameter 13). */
  reset_handlers();
  sgemm_64_("N", "N", &two_32_plus_2, &one64, &one64, &one, a, &two_32_plus_2, b, &one64, &one, c,
            &three, 1, 1);
  expect_report("sgemm_64_ LDC < M", 0, 13, "SGEMM ", c, c_before, 16);

  /* CBLAS, column major, lda = 3 < M = 2^32 + 2: parameter 9 to cblas_xerbla64_. */
  reset_handlers();
  cblas_sgemm64_(CblasColMajor, CblasNoTrans, CblasNoTrans, two_32_plus_2, 1, 1, 1.0f, a, 3, b, 1,
                 1.0f, c, two_32_plus_2);
  expect_report("cblas_sgemm64_ lda < M", 1, 9, "cblas_sgemm", c, c_before, 16);

  /* dtrsm_64_, SIDE = 'L', M = 2^32 + 2, LDA = 3 (parameter 9). */
  reset_handlers();
  {
    const double alpha = 1.0;
    dtrsm_64_("L", "U", "N", "N", &two_32_plus_2, &one64, &alpha, ad, &three, cd, &two_32_plus_2, 1,
              1, 1, 1);
    CHECK(ilp64_xerbla_calls == 1 && last_info == 9 && strcmp(last_srname, "DTRSM ") == 0,
          "dtrsm_64_ LDA < M: %d call(s), info %lld, '%s'", ilp64_xerbla_calls, last_info,
          last_srname);
  }

  /* Strided batch, batch_size = -2^40 (parameter 18); truncated: 0, legal. */
  reset_handlers();
  cblas_sgemm_batch_strided64_(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, 4, b,
                               2, 4, 1.0f, c, 2, 4, minus_two_40);
  expect_report("cblas_sgemm_batch_strided64_ batch = -2^40", 1, 18, "cblas_sgemm_batch_strided", c,
                c_before, 16);

  /* The same bad LDA through the LP64 routine goes to xerbla_ (with a 32-bit M). */
  reset_handlers();
  {
    const int m = 5, one32 = 1, lda = 3;
    sgemm_("N", "N", &m, &one32, &one32, &one, a, &lda, b, &one32, &one, c, &m, 1, 1);
    CHECK(lp64_xerbla_calls == 1 && ilp64_xerbla_calls == 0 && last_info == 8,
          "sgemm_ LDA < M: xerbla_ %d, xerbla_64_ %d, info %lld", lp64_xerbla_calls,
          ilp64_xerbla_calls, last_info);
  }

  /* Legal calls with M = 2^33 and nothing to compute: no report, nothing touched
   * (reference BLAS returns at once when N = 0, or when K = 0 with beta = 1). */
  reset_handlers();
  {
    const int64_t zero = 0;
    sgemm_64_("N", "N", &two_33, &zero, &four, &one, a, &two_33, b, &four, &one, c, &two_33, 1, 1);
    sgemm_64_("N", "N", &two_33, &one64, &zero, &one, a, &two_33, b, &one64, &beta_one, c, &two_33,
              1, 1);
    cblas_dgemm64_(CblasColMajor, CblasTrans, CblasNoTrans, two_33, 0, 4, 1.0, ad, 4, ad, 4, 0.0,
                   cd, two_33);
    CHECK(lp64_xerbla_calls + ilp64_xerbla_calls + lp64_cblas_calls + ilp64_cblas_calls == 0,
          "legal M = 2^33 calls were reported (info %lld)", last_info);
    CHECK(memcmp(c, c_before, sizeof c) == 0, "legal M = 2^33 calls modified C");
  }
}

/* Legal-looking ILP64 sizes for matrices larger than the address space (M = K = 2^40,
 * A would hold 2^80 elements): reference BLAS has no rule against them, taihu reports a
 * failure on stderr instead of overflowing its size arithmetic, calls no handler and
 * leaves C alone (and does not crash reading the tiny arrays passed here). */
static void check_unaddressable_sizes(void) {
  float a[4] = {1, 2, 3, 4}, c[4] = {5, 6, 7, 8}, c_before[4];
  double ad[4] = {1, 2, 3, 4}, bd[4] = {5, 6, 7, 8}, bd_before[4];
  memcpy(c_before, c, sizeof c);
  memcpy(bd_before, bd, sizeof bd);
  const int64_t huge = (int64_t)1 << 40, one64 = 1;
  const float one = 1.0f;
  const double one_d = 1.0;
  reset_handlers();
  sgemm_64_("N", "N", &huge, &one64, &huge, &one, a, &huge, a, &huge, &one, c, &huge, 1, 1);
  cblas_sgemm64_(CblasRowMajor, CblasTrans, CblasNoTrans, huge, 1, huge, 1.0f, a, huge, a, 1, 1.0f,
                 c, 1);
  dtrsm_64_("L", "U", "N", "N", &huge, &huge, &one_d, ad, &huge, bd, &huge, 1, 1, 1, 1);
  cblas_dsyrk64_(CblasColMajor, CblasUpper, CblasNoTrans, huge, huge, 1.0, ad, huge, 1.0, bd, huge);
  /* grouped batch: a small first group and a huge second one: nothing is computed */
  {
    const enum CBLAS_TRANSPOSE t[2] = {CblasNoTrans, CblasNoTrans};
    const int64_t gm[2] = {2, huge}, gn[2] = {2, 1}, gk[2] = {2, huge}, gld[2] = {2, huge},
                  gsize[2] = {1, 1};
    const float galpha[2] = {1, 1}, gbeta[2] = {1, 1};
    const float* pa[2] = {a, a};
    float* pc[2] = {c, c};
    cblas_sgemm_batch64_(CblasColMajor, t, t, gm, gn, gk, galpha, pa, gld, pa, gld, gbeta, pc, gld,
                         2, gsize);
  }
  CHECK(lp64_xerbla_calls + ilp64_xerbla_calls + lp64_cblas_calls + ilp64_cblas_calls == 0,
        "unaddressable sizes went to an error handler (info %lld)", last_info);
  CHECK(memcmp(c, c_before, sizeof c) == 0, "unaddressable sizes: C was modified");
  CHECK(memcmp(bd, bd_before, sizeof bd) == 0, "unaddressable sizes: B was modified");
}

int main(void) {
  check_gemm();
  check_twins();
  check_64bit_arguments();
  check_unaddressable_sizes();
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf(
      "OK: LP64 and ILP64 (64_) entry points agree with the naive loop and each other; "
      "64-bit bad arguments reach xerbla_64_/cblas_xerbla64_\n");
  return 0;
}
