// Shared helpers for the dnn operator tests: random data, float-vs-double comparison,
// a central-difference gradient checker in double, a square pooling shape, and the
// per-test ISA skip.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "isa_skip.hpp"
#include "taihu/dnn/pooling.hpp"

namespace ops_test {

class OpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TAIHU_TEST_REQUIRE_ISA();
  }
  std::mt19937_64 rng{12345};
};

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng, double lo = -1.0,
                             double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(dist(rng));
  return v;
}

template <class To, class From>
std::vector<To> convert(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}

// max_i |a_i - b_i| <= atol + rtol |b_i|, reporting the first offender.
template <class A, class B>
void expect_close(const std::vector<A>& a, const std::vector<B>& b, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) {
      ADD_FAILURE() << what << "[" << i << "]: got " << x << ", expected " << y;
      return;
    }
  }
}

// Central differences of objective() with respect to every element of v, compared with
// `analytic` (d objective / d v) to |num - ana| <= tol (1 + |num|).
void expect_gradient(std::vector<double>& v, const std::vector<double>& analytic,
                     const std::function<double()>& objective, const std::string& what,
                     double tol = 1e-6, double step = 1e-5);

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// n x c planes of h x w, a k x k window, the same stride and padding both ways.
inline taihu::dnn::PoolingShape pool_shape(taihu::dnn::index_t n, taihu::dnn::index_t c, taihu::dnn::index_t h,
                                           taihu::dnn::index_t w, taihu::dnn::index_t k, taihu::dnn::index_t stride,
                                           taihu::dnn::index_t pad, taihu::dnn::PoolMethod m) {
  taihu::dnn::PoolingShape s;
  s.batch = n;
  s.channels = c;
  s.height = h;
  s.width = w;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.pad_h = s.pad_w = pad;
  s.method = m;
  return s;
}

}  // namespace ops_test
