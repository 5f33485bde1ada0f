// Shared helpers for the convolution tests: seeded random data, error measures, an
// independent double-precision convolution (forward, for finite differences and
// accuracy bounds), and the per-test skip when TAIHU_ISA names a level this CPU lacks.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "isa_skip.hpp"
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

// Every multiply of the forward definition, in order: f(x index, w index, y index) for
// each output point (n, k, oy, ox) and each in-image tap (ci, r, s) of its window, NCHW
// x and y, OIHW w. The naive forward and backward references are built on it.
template <class F>
void for_each_product(const ConvDesc& d, F f) {
  const index_t cg = d.c / d.groups, kg = d.k / d.groups, oh = d.out_h(), ow = d.out_w();
  for (index_t n = 0; n < d.n; ++n)
    for (index_t k = 0; k < d.k; ++k)
      for (index_t oy = 0; oy < oh; ++oy)
        for (index_t ox = 0; ox < ow; ++ox)
          for (index_t ci = 0; ci < cg; ++ci)
            for (index_t r = 0; r < d.kh; ++r)
              for (index_t s = 0; s < d.kw; ++s) {
                const index_t iy = oy * d.stride_h - d.pad_h + r * d.dil_h;
                const index_t ix = ox * d.stride_w - d.pad_w + s * d.dil_w;
                if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
                const index_t c = k / kg * cg + ci;
                f(((n * d.c + c) * d.h + iy) * d.w + ix, ((k * cg + ci) * d.kh + r) * d.kw + s,
                  ((n * d.k + k) * oh + oy) * ow + ox);
              }
}

// y = conv(x, w) + b in double, straight from the definition (bias may be empty).
std::vector<double> conv_forward_double(const ConvDesc& d, const std::vector<double>& x,
                                        const std::vector<double>& w, const std::vector<double>& b);

std::vector<double> to_double(const std::vector<float>& v);

index_t x_size(const ConvDesc& d);
index_t w_size(const ConvDesc& d);
index_t y_size(const ConvDesc& d);

class ConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TAIHU_TEST_REQUIRE_ISA();
  }
};

}  // namespace conv_test
