// Shared helpers for the convolution tests: seeded random data, error measures, an
// independent double-precision convolution (forward, for finite differences and
// accuracy bounds), and the per-test skip when TAIHU_ISA names a level this CPU lacks.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "taihu/dnn/conv.hpp"

namespace conv_test {

using taihu::dnn::ConvDesc;
using taihu::dnn::index_t;

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// max |a - b| / max(max |b|, tiny)
double max_rel_error(const std::vector<float>& a, const std::vector<float>& b);
double max_rel_error(const std::vector<float>& a, const std::vector<double>& b);
// ||a - b||_2 / ||b||_2
double l2_rel_error(const std::vector<float>& a, const std::vector<double>& b);

// y = conv(x, w) + b in double, straight from the definition (bias may be empty).
std::vector<double> conv_forward_double(const ConvDesc& d, const std::vector<double>& x,
                                        const std::vector<double>& w, const std::vector<double>& b);

std::vector<double> to_double(const std::vector<float>& v);

index_t x_size(const ConvDesc& d);
index_t w_size(const ConvDesc& d);
index_t y_size(const ConvDesc& d);

std::string isa_unavailable_reason();

class ConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string r = isa_unavailable_reason(); !r.empty()) GTEST_SKIP() << r;
  }
};

}  // namespace conv_test
