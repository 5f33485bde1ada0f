// Naive reference and helpers for the gemm tests; skips all tests of a TAIHU_ISA
// level this CPU cannot run.
#include "gemm_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "taihu/arch/isa.hpp"

namespace gemm_test {
namespace {

bool row(const Shape& s) { return s.layout == Layout::row_major; }

// Element (i, p) of op(A), (p, j) of op(B), and the offset of C(i, j).
template <class T>
double a_at(const Shape& s, const std::vector<T>& a, index_t i, index_t p) {
  const bool t = s.ta == Trans::yes;
  const index_t r = t ? p : i, c = t ? i : p;  // stored (row, col)
  return static_cast<double>(row(s) ? a[r * s.lda + c] : a[r + c * s.lda]);
}
template <class T>
double b_at(const Shape& s, const std::vector<T>& b, index_t p, index_t j) {
  const bool t = s.tb == Trans::yes;
  const index_t r = t ? j : p, c = t ? p : j;
  return static_cast<double>(row(s) ? b[r * s.ldb + c] : b[r + c * s.ldb]);
}
index_t c_off(const Shape& s, index_t i, index_t j) { return row(s) ? i * s.ldc + j : i + j * s.ldc; }

}  // namespace

Shape make_shape(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k, index_t pad) {
  Shape s{layout, ta, tb, m, n, k, 0, 0, 0};
  const bool r = layout == Layout::row_major;
  const index_t a_span = r ? (ta == Trans::no ? k : m) : (ta == Trans::no ? m : k);
  const index_t b_span = r ? (tb == Trans::no ? n : k) : (tb == Trans::no ? k : n);
  s.lda = std::max<index_t>(1, a_span) + pad;
  s.ldb = std::max<index_t>(1, b_span) + pad;
  s.ldc = std::max<index_t>(1, r ? n : m) + pad;
  return s;
}

std::size_t a_size(const Shape& s) {
  const bool r = row(s);
  const index_t other = r ? (s.ta == Trans::no ? s.m : s.k) : (s.ta == Trans::no ? s.k : s.m);
  return static_cast<std::size_t>(s.lda * std::max<index_t>(other, 1));
}
std::size_t b_size(const Shape& s) {
  const bool r = row(s);
  const index_t other = r ? (s.tb == Trans::no ? s.k : s.n) : (s.tb == Trans::no ? s.n : s.k);
  return static_cast<std::size_t>(s.ldb * std::max<index_t>(other, 1));
}
std::size_t c_size(const Shape& s) {
  return static_cast<std::size_t>(s.ldc * std::max<index_t>(row(s) ? s.m : s.n, 1));
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

template <class T>
void reference(const Shape& s, double alpha, const std::vector<T>& a, const std::vector<T>& b,
               double beta, std::vector<double>& c, std::vector<double>& bound) {
  bound.assign(c.size(), 0.0);
  for (index_t i = 0; i < s.m; ++i)
    for (index_t j = 0; j < s.n; ++j) {
      double sum = 0, mag = 0;
      for (index_t p = 0; p < s.k; ++p) {
        const double prod = a_at(s, a, i, p) * b_at(s, b, p, j);
        sum += prod;
        mag += std::fabs(prod);
      }
      double& cij = c[c_off(s, i, j)];
      const double old = beta == 0.0 ? 0.0 : beta * cij;
      cij = alpha * sum + old;
      bound[c_off(s, i, j)] = std::fabs(alpha) * mag + std::fabs(old);
    }
}

template <class T>
std::string compare(const Shape& s, const std::vector<T>& got, const std::vector<double>& want,
                    const std::vector<double>& bound, double tol) {
  for (index_t i = 0; i < s.m; ++i)
    for (index_t j = 0; j < s.n; ++j) {
      const index_t o = c_off(s, i, j);
      const double g = static_cast<double>(got[o]);
      if (!(std::fabs(g - want[o]) <= tol * (bound[o] + 1e-30))) {
        std::ostringstream msg;
        msg << "C(" << i << "," << j << ") = " << g << ", expected " << want[o] << " (m=" << s.m
            << " n=" << s.n << " k=" << s.k << (row(s) ? " row" : " col") << "-major ta="
            << (s.ta == Trans::yes) << " tb=" << (s.tb == Trans::yes) << " lda=" << s.lda
            << " ldb=" << s.ldb << " ldc=" << s.ldc << ")";
        return msg.str();
      }
    }
  // Padding between columns/rows of C must be untouched: checked by the callers.
  return {};
}

template <>
void gemm<float>(const Shape& s, float alpha, const float* a, const float* b, float beta, float* c) {
  taihu::gemm::sgemm(s.layout, s.ta, s.tb, s.m, s.n, s.k, alpha, a, s.lda, b, s.ldb, beta, c, s.ldc);
}
template <>
void gemm<double>(const Shape& s, double alpha, const double* a, const double* b, double beta,
                  double* c) {
  taihu::gemm::dgemm(s.layout, s.ta, s.tb, s.m, s.n, s.k, alpha, a, s.lda, b, s.ldb, beta, c, s.ldc);
}

template std::vector<float> random_vector<float>(std::size_t, std::mt19937_64&);
template std::vector<double> random_vector<double>(std::size_t, std::mt19937_64&);
template void reference<float>(const Shape&, double, const std::vector<float>&,
                               const std::vector<float>&, double, std::vector<double>&,
                               std::vector<double>&);
template void reference<double>(const Shape&, double, const std::vector<double>&,
                                const std::vector<double>&, double, std::vector<double>&,
                                std::vector<double>&);
template std::string compare<float>(const Shape&, const std::vector<float>&,
                                    const std::vector<double>&, const std::vector<double>&, double);
template std::string compare<double>(const Shape&, const std::vector<double>&,
                                     const std::vector<double>&, const std::vector<double>&, double);

}  // namespace gemm_test
