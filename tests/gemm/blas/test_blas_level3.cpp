// libtaihu_blas.so's level-3 routines beyond GEMM (?gemmt, ?syrk, ?syr2k, ?symm, ?trmm,
// ?trsm) through the exported C ABI: cblas_ in both layouts and the Fortran _ names,
// every side/uplo/trans/diag, odd sizes, padded leading dimensions and sizes that cross
// taihu's diagonal blocks (64 trmm/trsm, 96 gemmt) and symm panels (256), against a
// naive double-precision loop. The unreferenced triangle of A and, with beta = 0, C hold
// NaN (never read), C's other triangle and every padding element a sentinel (never
// written). Bad gemmt arguments (no netlib test covers it) reach this program's own
// xerbla_ / cblas_xerbla with OpenBLAS's and MKL's numbering.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "taihu_cblas.h"

namespace {

enum class Api { col, row, fortran };  // cblas_ column / row major, Fortran _
const char* api_name(Api api) { return api == Api::col ? "cblas col" : api == Api::row ? "cblas row" : "fortran"; }

constexpr double kSentinel = 777.25;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A logical rows x cols matrix stored with leading dimension ld (padded) in a layout.
template <typename T>
struct Matrix {
  int rows, cols, ld;
  bool row_major;
  std::vector<T> data;
  Matrix(int r, int c, bool row, int pad) : rows(r), cols(c), row_major(row) {
    ld = std::max(1, (row ? c : r) + pad);
    data.assign(std::size_t(ld) * std::max(1, row ? r : c), T(kSentinel));
  }
  std::size_t index(int i, int j) const {
    return row_major ? std::size_t(i) * ld + j : std::size_t(j) * ld + i;
  }
  T& operator()(int i, int j) { return data[index(i, j)]; }
  double at(int i, int j) const { return double(data[index(i, j)]); }
  void fill(std::mt19937& rng, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) (*this)(i, j) = T(u(rng));
  }
};

// Every stored element outside the logical matrix still holds the sentinel.
template <typename T>
bool padding_intact(const Matrix<T>& m) {
  std::vector<bool> inside(m.data.size(), false);
  for (int j = 0; j < m.cols; ++j)
    for (int i = 0; i < m.rows; ++i) inside[m.index(i, j)] = true;
  for (std::size_t p = 0; p < m.data.size(); ++p)
    if (!inside[p] && m.data[p] != T(kSentinel)) return false;
  return true;
}

template <typename T>
double eps() { return std::numeric_limits<T>::epsilon(); }

// |got - want| <= tol * scale for the logical element (scale: sum of |terms|).
template <typename T>
void expect_near(const Matrix<T>& got, const std::vector<double>& want,
                 const std::vector<double>& scale, int terms, const std::string& what,
                 const std::vector<bool>* only = nullptr) {
  int bad = 0;
  for (int j = 0; j < got.cols; ++j)
    for (int i = 0; i < got.rows; ++i) {
      const std::size_t e = std::size_t(j) * got.rows + i;
      if (only != nullptr && !(*only)[e]) {
        if (got.at(i, j) != kSentinel && bad++ < 3)
          ADD_FAILURE() << what << ": (" << i << "," << j << ") outside the triangle written";
        continue;
      }
      const double tol = 4 * (terms + 4) * eps<T>() * scale[e] + 1e-300;
      const double diff = std::fabs(got.at(i, j) - want[e]);
      if (!(diff <= tol) && bad++ < 3)
        ADD_FAILURE() << what << ": (" << i << "," << j << ") = " << got.at(i, j) << ", want "
                      << want[e] << " (tolerance " << tol << ")";
    }
  EXPECT_EQ(bad, 0) << what;
  EXPECT_TRUE(padding_intact(got)) << what << ": padding written";
}

// ---- typed entry points -------------------------------------------------------------

CBLAS_ORDER order_of(Api api) { return api == Api::row ? CblasRowMajor : CblasColMajor; }
CBLAS_UPLO cu(bool upper) { return upper ? CblasUpper : CblasLower; }
CBLAS_TRANSPOSE ct(bool t) { return t ? CblasTrans : CblasNoTrans; }
const char* fl(bool yes, const char* y, const char* n) { return yes ? y : n; }

template <typename T>
void gemmt(Api api, bool upper, bool ta, bool tb, int n, int k, T alpha, const Matrix<T>& a,
           const Matrix<T>& b, T beta, Matrix<T>& c) {
  constexpr bool s = std::is_same_v<T, float>;
  if (api == Api::fortran) {
    const char *u = fl(upper, "U", "L"), *x = fl(ta, "T", "N"), *y = fl(tb, "t", "n");
    if constexpr (s) sgemmt_(u, x, y, &n, &k, &alpha, a.data.data(), &a.ld, b.data.data(), &b.ld, &beta, c.data.data(), &c.ld, 1, 1, 1);
    else dgemmt_(u, x, y, &n, &k, &alpha, a.data.data(), &a.ld, b.data.data(), &b.ld, &beta, c.data.data(), &c.ld, 1, 1, 1);
  } else if constexpr (s) {
    cblas_sgemmt(order_of(api), cu(upper), ct(ta), ct(tb), n, k, alpha, a.data.data(), a.ld, b.data.data(), b.ld, beta, c.data.data(), c.ld);
  } else {
    cblas_dgemmt(order_of(api), cu(upper), ct(ta), ct(tb), n, k, alpha, a.data.data(), a.ld, b.data.data(), b.ld, beta, c.data.data(), c.ld);
  }
}

// syrk when b == nullptr, else syr2k.
template <typename T>
void rank_k(Api api, bool upper, bool trans, int n, int k, T alpha, const Matrix<T>& a,
            const Matrix<T>* b, T beta, Matrix<T>& c) {
  constexpr bool s = std::is_same_v<T, float>;
  const T* bp = b ? b->data.data() : nullptr;
  const int ldb = b ? b->ld : 1;
  if (api == Api::fortran) {
    const char *u = fl(upper, "u", "l"), *t = fl(trans, "C", "N");
    if (b == nullptr) {
      if constexpr (s) ssyrk_(u, t, &n, &k, &alpha, a.data.data(), &a.ld, &beta, c.data.data(), &c.ld, 1, 1);
      else dsyrk_(u, t, &n, &k, &alpha, a.data.data(), &a.ld, &beta, c.data.data(), &c.ld, 1, 1);
    } else if constexpr (s) {
      ssyr2k_(u, t, &n, &k, &alpha, a.data.data(), &a.ld, bp, &ldb, &beta, c.data.data(), &c.ld, 1, 1);
    } else {
      dsyr2k_(u, t, &n, &k, &alpha, a.data.data(), &a.ld, bp, &ldb, &beta, c.data.data(), &c.ld, 1, 1);
    }
    return;
  }
  if (b == nullptr) {
    if constexpr (s) cblas_ssyrk(order_of(api), cu(upper), ct(trans), n, k, alpha, a.data.data(), a.ld, beta, c.data.data(), c.ld);
    else cblas_dsyrk(order_of(api), cu(upper), ct(trans), n, k, alpha, a.data.data(), a.ld, beta, c.data.data(), c.ld);
  } else if constexpr (s) {
    cblas_ssyr2k(order_of(api), cu(upper), ct(trans), n, k, alpha, a.data.data(), a.ld, bp, ldb, beta, c.data.data(), c.ld);
  } else {
    cblas_dsyr2k(order_of(api), cu(upper), ct(trans), n, k, alpha, a.data.data(), a.ld, bp, ldb, beta, c.data.data(), c.ld);
  }
}

template <typename T>
void symm(Api api, bool left, bool upper, int m, int n, T alpha, const Matrix<T>& a,
          const Matrix<T>& b, T beta, Matrix<T>& c) {
  constexpr bool s = std::is_same_v<T, float>;
  if (api == Api::fortran) {
    const char *sd = fl(left, "L", "R"), *u = fl(upper, "U", "L");
    if constexpr (s) ssymm_(sd, u, &m, &n, &alpha, a.data.data(), &a.ld, b.data.data(), &b.ld, &beta, c.data.data(), &c.ld, 1, 1);
    else dsymm_(sd, u, &m, &n, &alpha, a.data.data(), &a.ld, b.data.data(), &b.ld, &beta, c.data.data(), &c.ld, 1, 1);
  } else if constexpr (s) {
    cblas_ssymm(order_of(api), left ? CblasLeft : CblasRight, cu(upper), m, n, alpha, a.data.data(), a.ld, b.data.data(), b.ld, beta, c.data.data(), c.ld);
  } else {
    cblas_dsymm(order_of(api), left ? CblasLeft : CblasRight, cu(upper), m, n, alpha, a.data.data(), a.ld, b.data.data(), b.ld, beta, c.data.data(), c.ld);
  }
}

template <typename T>
void triangular(bool solve, Api api, bool left, bool upper, bool trans, bool unit, int m, int n,
                T alpha, const Matrix<T>& a, Matrix<T>& b) {
  constexpr bool s = std::is_same_v<T, float>;
  const T* ap = a.data.data();
  T* bp = b.data.data();
  if (api == Api::fortran) {
    const char *sd = fl(left, "l", "r"), *u = fl(upper, "U", "L"), *t = fl(trans, "T", "N"),
               *d = fl(unit, "U", "N");
    if (solve) {
      if constexpr (s) strsm_(sd, u, t, d, &m, &n, &alpha, ap, &a.ld, bp, &b.ld, 1, 1, 1, 1);
      else dtrsm_(sd, u, t, d, &m, &n, &alpha, ap, &a.ld, bp, &b.ld, 1, 1, 1, 1);
    } else if constexpr (s) {
      strmm_(sd, u, t, d, &m, &n, &alpha, ap, &a.ld, bp, &b.ld, 1, 1, 1, 1);
    } else {
      dtrmm_(sd, u, t, d, &m, &n, &alpha, ap, &a.ld, bp, &b.ld, 1, 1, 1, 1);
    }
    return;
  }
  const auto o = order_of(api);
  const auto sd = left ? CblasLeft : CblasRight;
  const auto dg = unit ? CblasUnit : CblasNonUnit;
  if (solve) {
    if constexpr (s) cblas_strsm(o, sd, cu(upper), ct(trans), dg, m, n, alpha, ap, a.ld, bp, b.ld);
    else cblas_dtrsm(o, sd, cu(upper), ct(trans), dg, m, n, alpha, ap, a.ld, bp, b.ld);
  } else if constexpr (s) {
    cblas_strmm(o, sd, cu(upper), ct(trans), dg, m, n, alpha, ap, a.ld, bp, b.ld);
  } else {
    cblas_dtrmm(o, sd, cu(upper), ct(trans), dg, m, n, alpha, ap, a.ld, bp, b.ld);
  }
}

// ---- tests --------------------------------------------------------------------------

template <typename T>
class Level3 : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Level3, Types);

const Api kApis[] = {Api::col, Api::row, Api::fortran};

// C (n x n) with NaN in the triangle when beta == 0, the sentinel in the other one.
template <typename T>
Matrix<T> triangle_c(int n, bool row, bool upper, double beta, std::mt19937& rng) {
  Matrix<T> c(n, n, row, 3);
  c.fill(rng, -1, 1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (upper ? i > j : i < j) c(i, j) = T(kSentinel);
      else if (beta == 0) c(i, j) = T(kNaN);
    }
  return c;
}

std::vector<bool> triangle_mask(int n, bool upper) {
  std::vector<bool> mask(std::size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) mask[std::size_t(j) * n + i] = upper ? i <= j : i >= j;
  return mask;
}

// op(X)(i, j) of a stored matrix.
template <typename T>
double op(const Matrix<T>& x, bool t, int i, int j) { return t ? x.at(j, i) : x.at(i, j); }

TYPED_TEST(Level3, GemmtTriangleMatchesNaive) {
  using T = TypeParam;
  std::mt19937 rng(1);
  // 300 x 200: two depth blocks at the model's kc (the second accumulates onto the
  // first through the diagonal tiles' merge); the small_blocks run cuts every size into
  // several row, column and depth blocks.
  const int sizes[][2] = {{1, 3}, {7, 0}, {13, 5}, {250, 67}, {97, 130}, {300, 200}};
  for (Api api : kApis)
    for (const auto& [n, k] : sizes)
      for (int flags = 0; flags < 8; ++flags) {
        const bool upper = flags & 1, ta = flags & 2, tb = flags & 4;
        const bool row = api == Api::row;
        const double alpha = 0.75, beta = (n + flags) % 3 == 0 ? 0.0 : -1.25;
        Matrix<T> a(ta ? k : n, ta ? n : k, row, 2), b(tb ? n : k, tb ? k : n, row, 1);
        a.fill(rng, -1, 1), b.fill(rng, -1, 1);
        Matrix<T> c = triangle_c<T>(n, row, upper, beta, rng);
        std::vector<double> want(std::size_t(n) * n), scale(want.size());
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            double sum = 0, mag = 0;
            for (int p = 0; p < k; ++p) {
              const double t = op(a, ta, i, p) * op(b, tb, p, j);
              sum += t, mag += std::fabs(t);
            }
            const double old = beta == 0 ? 0 : beta * c.at(i, j);
            want[std::size_t(j) * n + i] = alpha * sum + old;
            scale[std::size_t(j) * n + i] = std::fabs(alpha) * mag + std::fabs(old);
          }
        gemmt<T>(api, upper, ta, tb, n, k, T(alpha), a, b, T(beta), c);
        const auto mask = triangle_mask(n, upper);
        expect_near(c, want, scale, k, std::string("gemmt ") + api_name(api) + " n=" +
                    std::to_string(n) + " k=" + std::to_string(k) + " flags=" + std::to_string(flags), &mask);
      }
}

TYPED_TEST(Level3, SyrkAndSyr2kMatchNaive) {
  using T = TypeParam;
  std::mt19937 rng(2);
  const int sizes[][2] = {{5, 3}, {1, 0}, {250, 67}, {131, 250}};
  for (Api api : kApis)
    for (const auto& [n, k] : sizes)
      for (int flags = 0; flags < 8; ++flags) {
        const bool upper = flags & 1, trans = flags & 2, two = flags & 4;
        const bool row = api == Api::row;
        const double alpha = -0.5, beta = flags % 3 == 0 ? 0.0 : 1.5;
        Matrix<T> a(trans ? k : n, trans ? n : k, row, 1), b(trans ? k : n, trans ? n : k, row, 4);
        a.fill(rng, -1, 1), b.fill(rng, -1, 1);
        Matrix<T> c = triangle_c<T>(n, row, upper, beta, rng);
        std::vector<double> want(std::size_t(n) * n), scale(want.size());
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            double sum = 0, mag = 0;
            for (int p = 0; p < k; ++p) {
              // op(A) = A (n x k) or A^T; the row is op(A)(i, :).
              const double ai = op(a, trans, i, p), aj = op(a, trans, j, p);
              const double t = two ? ai * op(b, trans, j, p) + op(b, trans, i, p) * aj : ai * aj;
              sum += t, mag += two ? std::fabs(ai * op(b, trans, j, p)) + std::fabs(op(b, trans, i, p) * aj)
                                   : std::fabs(t);
            }
            const double old = beta == 0 ? 0 : beta * c.at(i, j);
            want[std::size_t(j) * n + i] = alpha * sum + old;
            scale[std::size_t(j) * n + i] = std::fabs(alpha) * mag + std::fabs(old);
          }
        rank_k<T>(api, upper, trans, n, k, T(alpha), a, two ? &b : nullptr, T(beta), c);
        const auto mask = triangle_mask(n, upper);
        expect_near(c, want, scale, 2 * k, std::string(two ? "syr2k " : "syrk ") + api_name(api) +
                    " n=" + std::to_string(n) + " k=" + std::to_string(k) + " flags=" + std::to_string(flags), &mask);
      }
}

TYPED_TEST(Level3, SymmMatchesNaive) {
  using T = TypeParam;
  std::mt19937 rng(3);
  const int sizes[][2] = {{17, 3}, {300, 130}, {130, 300}, {1, 1}};
  for (Api api : kApis)
    for (const auto& [m, n] : sizes)
      for (int flags = 0; flags < 4; ++flags) {
        const bool left = flags & 1, upper = flags & 2;
        const bool row = api == Api::row;
        const int order = left ? m : n;
        const double alpha = 1.25, beta = (m + flags) % 2 == 0 ? 0.0 : 0.5;
        Matrix<T> a(order, order, row, 2), b(m, n, row, 1), c(m, n, row, 5);
        a.fill(rng, -1, 1), b.fill(rng, -1, 1), c.fill(rng, -1, 1);
        // The stored triangle is in the layout's own terms: upper means a(i, j), i <= j.
        auto sym = [&](int i, int j) { return (upper ? i <= j : i >= j) ? a.at(i, j) : a.at(j, i); };
        std::vector<double> want(std::size_t(m) * n), scale(want.size());
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i) {
            double sum = 0, mag = 0;
            for (int p = 0; p < order; ++p) {
              const double t = left ? sym(i, p) * b.at(p, j) : b.at(i, p) * sym(p, j);
              sum += t, mag += std::fabs(t);
            }
            const double old = beta == 0 ? 0 : beta * c.at(i, j);
            want[std::size_t(j) * m + i] = alpha * sum + old;
            scale[std::size_t(j) * m + i] = std::fabs(alpha) * mag + std::fabs(old);
          }
        for (int j = 0; j < order; ++j)  // the unreferenced triangle is never read
          for (int i = 0; i < order; ++i)
            if (upper ? i > j : i < j) a(i, j) = T(kNaN);
        if (beta == 0)
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) c(i, j) = T(kNaN);
        symm<T>(api, left, upper, m, n, T(alpha), a, b, T(beta), c);
        expect_near(c, want, scale, order, std::string("symm ") + api_name(api) + " m=" +
                    std::to_string(m) + " n=" + std::to_string(n) + " flags=" + std::to_string(flags));
      }
}

// All 16 side/uplo/trans/diag cases of trmm and trsm. A is well conditioned (diagonal
// in [1, 2], the rest small); its other triangle, and with a unit diagonal its
// diagonal, hold NaN.
TYPED_TEST(Level3, TrmmAndTrsmMatchNaiveInAll16Cases) {
  using T = TypeParam;
  std::mt19937 rng(4);
  // 700 x 37 and 37 x 700: triangles of order 700, above trsm's fused block size (512 or
  // less), so the recursion's GEMM update runs between two fused diagonal blocks; these
  // two column major and trsm only, to keep the naive loops short.
  const int sizes[][2] = {{150, 70}, {5, 9}, {70, 200}, {1, 1}, {700, 37}, {37, 700}};
  for (Api api : kApis)
    for (const auto& [m, n] : sizes)
      for (int flags = 0; flags < 32; ++flags) {
        const bool left = flags & 1, upper = flags & 2, trans = flags & 4, unit = flags & 8,
                   solve = flags & 16;
        if (std::max(m, n) > 512 && (api != Api::col || !solve)) continue;
        const bool row = api == Api::row;
        const int order = left ? m : n;
        const double alpha = (m + flags) % 7 == 0 ? 0.0 : -1.5;
        Matrix<T> a(order, order, row, 3), b(m, n, row, 2);
        a.fill(rng, -1.0 / order, 1.0 / order), b.fill(rng, -1, 1);
        std::uniform_real_distribution<double> diag(1, 2);
        for (int i = 0; i < order; ++i) a(i, i) = T(diag(rng));
        // op(A) as a dense double matrix, the triangle only.
        std::vector<double> t(std::size_t(order) * order, 0.0);
        for (int j = 0; j < order; ++j)
          for (int i = 0; i < order; ++i) {
            const int si = trans ? j : i, sj = trans ? i : j;  // stored position
            const bool stored = upper ? si <= sj : si >= sj;
            if (i == j) t[std::size_t(j) * order + i] = unit ? 1.0 : a.at(i, i);
            else if (stored) t[std::size_t(j) * order + i] = a.at(si, sj);
          }
        auto top = [&](int i, int j) { return t[std::size_t(j) * order + i]; };
        std::vector<double> want(std::size_t(m) * n), scale(want.size());
        const std::size_t want_ld = std::size_t(m);  // a copy: clang 14 cannot capture the binding m
        auto w = [&](int i, int j) -> double& { return want[std::size_t(j) * want_ld + i]; };
        if (!solve) {
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              double sum = 0, mag = 0;
              for (int p = 0; p < order; ++p) {
                const double x = left ? top(i, p) * b.at(p, j) : b.at(i, p) * top(p, j);
                sum += x, mag += std::fabs(x);
              }
              w(i, j) = alpha * sum;
              scale[std::size_t(j) * m + i] = std::fabs(alpha) * mag;
            }
        } else {
          // Substitution in double: rows of X (left) or columns of X (right) in the
          // order the triangle allows.
          const bool lower_op = upper == trans;
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) w(i, j) = alpha * b.at(i, j);
          if (left) {
            for (int j = 0; j < n; ++j)
              for (int s = 0; s < m; ++s) {
                const int i = lower_op ? s : m - 1 - s;
                double x = w(i, j);
                for (int p = 0; p < m; ++p)
                  if (p != i && top(i, p) != 0) x -= top(i, p) * w(p, j);
                w(i, j) = x / top(i, i);
              }
          } else {
            for (int i = 0; i < m; ++i)
              for (int s = 0; s < n; ++s) {
                const int j = lower_op ? n - 1 - s : s;
                double x = w(i, j);
                for (int p = 0; p < n; ++p)
                  if (p != j && top(p, j) != 0) x -= w(i, p) * top(p, j);
                w(i, j) = x / top(j, j);
              }
          }
          for (std::size_t e = 0; e < want.size(); ++e) scale[e] = 4 * std::fabs(want[e]) + 4 * std::fabs(alpha);
        }
        for (int j = 0; j < order; ++j)
          for (int i = 0; i < order; ++i)
            if ((upper ? i > j : i < j) || (unit && i == j)) a(i, j) = T(kNaN);
        triangular<T>(solve, api, left, upper, trans, unit, m, n, T(alpha), a, b);
        expect_near(b, want, scale, order, std::string(solve ? "trsm " : "trmm ") + api_name(api) +
                    " m=" + std::to_string(m) + " n=" + std::to_string(n) + " flags=" + std::to_string(flags));
      }
}

// The recursive splits give the same answer with 2 threads (GEMM splits m and n, not k).
TEST(Level3Threads, TwoThreadsAgreeWithOne) {
  const int m = 300, n = 200, k = 150;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(std::size_t(m) * m), b(std::size_t(m) * n), c(std::size_t(m) * m);
  for (auto& x : a) x = u(rng) / m;
  for (int i = 0; i < m; ++i) a[std::size_t(i) * m + i] = 1.5;
  for (auto& x : b) x = u(rng);
  std::vector<double> results[2][2];
  for (int threads = 1; threads <= 2; ++threads) {
    taihu_set_num_threads(threads);
    std::vector<double> x = b, y = c;
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, m, n, 2.0,
                a.data(), m, x.data(), m);
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, m, k, 1.0, b.data(), m, 0.0, y.data(),
                m);
    results[threads - 1][0] = x, results[threads - 1][1] = y;
  }
  taihu_set_num_threads(0);
  for (int r = 0; r < 2; ++r)
    for (std::size_t e = 0; e < results[0][r].size(); ++e)
      ASSERT_NEAR(results[1][r][e], results[0][r][e], 1e-12 * (1 + std::fabs(results[0][r][e])))
          << (r == 0 ? "trsm" : "syrk") << " element " << e;
}

// Calls big enough to be cut into one slice per thread (B's or C's columns or rows,
// column blocks of C's triangle): every side/uplo/trans with 2 threads against the same
// call with 1 thread (serial, no slices; checked against naive loops above).
TEST(Level3Threads, SlicedTwoThreadsAgreeWithOne) {
  const int m = 336, n = 344;
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(std::size_t(n) * n), b(std::size_t(n) * n), c(std::size_t(n) * n);
  for (auto& x : a) x = u(rng) / n;
  for (int i = 0; i < n; ++i) a[std::size_t(i) * n + i] = 1.5;
  for (auto& x : b) x = u(rng);
  for (auto& x : c) x = u(rng);
  std::vector<std::vector<double>> results[2];
  for (int threads = 1; threads <= 2; ++threads) {
    taihu_set_num_threads(threads);
    auto& out = results[threads - 1];
    for (int flags = 0; flags < 16; ++flags) {
      const bool left = flags & 1, upper = flags & 2, trans = flags & 4, solve = flags & 8;
      std::vector<double> x = b;
      (solve ? cblas_dtrsm : cblas_dtrmm)(CblasColMajor, left ? CblasLeft : CblasRight, cu(upper), ct(trans),
                                          CblasNonUnit, m, n, 0.5, a.data(), n, x.data(), n);
      out.push_back(x);
    }
    for (int flags = 0; flags < 4; ++flags) {
      std::vector<double> y = c;
      cblas_dsymm(CblasColMajor, flags & 1 ? CblasLeft : CblasRight, cu(flags & 2), m, n, 1.0, a.data(), n,
                  b.data(), n, 0.5, y.data(), n);
      out.push_back(y);
    }
    for (int flags = 0; flags < 4; ++flags) {
      const bool upper = flags & 1, trans = flags & 2;
      std::vector<double> y = c, z = c, w = c;
      cblas_dgemmt(CblasColMajor, cu(upper), ct(trans), ct(!trans), n, m, 1.0, b.data(), n, a.data(), n, -1.0,
                   y.data(), n);
      cblas_dsyrk(CblasColMajor, cu(upper), ct(trans), n, m, 1.0, b.data(), n, 0.0, z.data(), n);
      cblas_dsyr2k(CblasColMajor, cu(upper), ct(trans), n, m, 2.0, b.data(), n, a.data(), n, 1.0, w.data(), n);
      out.push_back(y), out.push_back(z), out.push_back(w);
    }
  }
  taihu_set_num_threads(0);
  ASSERT_EQ(results[0].size(), results[1].size());
  for (std::size_t r = 0; r < results[0].size(); ++r)
    for (std::size_t e = 0; e < results[0][r].size(); ++e)
      ASSERT_NEAR(results[1][r][e], results[0][r][e], 1e-11 * (1 + std::fabs(results[0][r][e])))
          << "call " << r << " element " << e;
}

// ---- gemmt's argument checks: this program's own handlers ---------------------------

struct Report {
  int calls = 0;
  int info = 0;
  std::string routine;
};
Report g_report;

}  // namespace

extern "C" void xerbla_(const char* srname, const int* info, size_t len) {
  ++g_report.calls;
  g_report.info = *info;
  g_report.routine.assign(srname, len);
}

extern "C" void cblas_xerbla(int info, const char* rout, const char* /*form*/, ...) {
  ++g_report.calls;
  g_report.info = info;
  g_report.routine = rout;
}

namespace {

// gemmt with one bad argument: reported once with `info`, C untouched.
void expect_cblas_gemmt_rejected(int order, int uplo, int ta, int tb, int n, int k, int lda,
                                 int ldb, int ldc, int info) {
  g_report = {};
  std::vector<float> a(64, 1), b(64, 1), c(64, float(kSentinel));
  cblas_sgemmt(CBLAS_ORDER(order), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(ta), CBLAS_TRANSPOSE(tb), n,
               k, 1, a.data(), lda, b.data(), ldb, 0, c.data(), ldc);
  EXPECT_EQ(g_report.calls, 1);
  EXPECT_EQ(g_report.info, info);
  EXPECT_EQ(g_report.routine, "cblas_sgemmt");
  for (float x : c) EXPECT_EQ(x, float(kSentinel));
}

TEST(Level3Errors, CblasGemmtReportsOpenBlasNumbering) {
  const int col = CblasColMajor, up = CblasUpper, no = CblasNoTrans, t = CblasTrans;
  expect_cblas_gemmt_rejected(7, up, no, no, 2, 2, 2, 2, 2, 1);
  expect_cblas_gemmt_rejected(col, 7, no, no, 2, 2, 2, 2, 2, 2);
  expect_cblas_gemmt_rejected(col, up, 7, no, 2, 2, 2, 2, 2, 3);
  expect_cblas_gemmt_rejected(col, up, no, 7, 2, 2, 2, 2, 2, 4);
  expect_cblas_gemmt_rejected(col, up, no, no, -1, 2, 2, 2, 2, 5);
  expect_cblas_gemmt_rejected(col, up, no, no, 2, -1, 2, 2, 2, 6);
  expect_cblas_gemmt_rejected(col, up, no, no, 4, 2, 3, 2, 4, 9);   // A is 4 x 2
  expect_cblas_gemmt_rejected(col, up, t, no, 4, 2, 1, 2, 4, 9);    // A is 2 x 4
  expect_cblas_gemmt_rejected(col, up, no, t, 4, 2, 4, 3, 4, 11);    // B is 4 x 2
  expect_cblas_gemmt_rejected(col, up, no, no, 4, 2, 4, 2, 3, 14);
  // Row major: netlib's gemm convention (9 <-> 11, 4 <-> 5) for a swapping handler.
  expect_cblas_gemmt_rejected(CblasRowMajor, up, no, no, 4, 3, 2, 4, 4, 11);  // lda < k
  expect_cblas_gemmt_rejected(CblasRowMajor, up, no, no, -1, 3, 3, 4, 4, 4);  // n
}

TEST(Level3Errors, FortranGemmtReportsOpenBlasNumbering) {
  std::vector<double> a(64, 1), b(64, 1), c(64, kSentinel);
  auto run = [&](const char* uplo, const char* ta, const char* tb, int n, int k, int lda, int ldb,
                 int ldc, int info) {
    g_report = {};
    const double one = 1, zero = 0;
    dgemmt_(uplo, ta, tb, &n, &k, &one, a.data(), &lda, b.data(), &ldb, &zero, c.data(), &ldc, 1,
            1, 1);
    EXPECT_EQ(g_report.calls, 1);
    EXPECT_EQ(g_report.info, info);
    EXPECT_EQ(g_report.routine, "DGEMMT");
    for (double x : c) EXPECT_EQ(x, kSentinel);
  };
  run("X", "N", "N", 2, 2, 2, 2, 2, 1);
  run("U", "/", "N", 2, 2, 2, 2, 2, 2);
  run("L", "n", "?", 2, 2, 2, 2, 2, 3);
  run("u", "N", "N", -1, 2, 2, 2, 2, 4);
  run("l", "N", "N", 2, -3, 2, 2, 2, 5);
  run("U", "T", "N", 4, 2, 1, 2, 4, 8);   // A is k x n = 2 x 4
  run("U", "N", "N", 4, 2, 4, 1, 4, 10);  // B is k x n = 2 x 4
  run("U", "N", "N", 4, 2, 4, 2, 3, 13);
}

}  // namespace
