// Shared helpers for the gemm tests: a naive double-precision reference with an
// error bound per element, random matrices, and the ISA-skip environment.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "isa_skip.hpp"
#include "taihu/gemm/gemm.hpp"

namespace gemm_test {

using taihu::gemm::index_t;
using taihu::gemm::Layout;
using taihu::gemm::Trans;

struct Shape {
  Layout layout;
  Trans ta, tb;
  index_t m, n, k, lda, ldb, ldc;
};

// Leading dimensions with `pad` extra rows/columns beyond the minimum.
Shape make_shape(Layout layout, Trans ta, Trans tb, index_t m, index_t n, index_t k, index_t pad);

// Elements the stored operands need.
std::size_t a_size(const Shape& s);
std::size_t b_size(const Shape& s);
std::size_t c_size(const Shape& s);

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng);

// C := alpha op(A) op(B) + beta C in double, with bound[i] = sum |alpha a b| + |beta c|
// for each stored element of C (beta == 0 ignores C, so NaN in C does not propagate).
template <class T>
void reference(const Shape& s, double alpha, const std::vector<T>& a, const std::vector<T>& b,
               double beta, std::vector<double>& c, std::vector<double>& bound);

// gtest failure text if any element of `got` differs from `want` by more than
// tol * (bound + tiny); empty when all match.
template <class T>
std::string compare(const Shape& s, const std::vector<T>& got, const std::vector<double>& want,
                    const std::vector<double>& bound, double tol);

template <class T>
void gemm(const Shape& s, T alpha, const T* a, const T* b, T beta, T* c);

}  // namespace gemm_test
