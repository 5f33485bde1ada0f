// Helpers for the convolution tests (see conv_test_support.hpp).
#include "conv_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "conv_threads.hpp"
#include "taihu/arch/cpu_features.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/threads.hpp"

namespace conv_test {

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = dist(rng);
  return v;
}

double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, mag = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(a[i]) - b[i]));
    mag = std::max(mag, std::abs(static_cast<double>(b[i])));
  }
  return err / mag;
}

double max_rel_error(const std::vector<float>& a, const std::vector<double>& b) {
  double err = 0, mag = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(a[i] - b[i]));
    mag = std::max(mag, std::abs(b[i]));
  }
  return err / mag;
}

double l2_rel_error(const std::vector<float>& a, const std::vector<double>& b) {
  double err = 0, mag = 1e-300;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err += (a[i] - b[i]) * (a[i] - b[i]);
    mag += b[i] * b[i];
  }
  return std::sqrt(err / mag);
}

std::vector<double> conv_forward_double(const ConvDesc& d, const std::vector<double>& x,
                                        const std::vector<double>& w, const std::vector<double>& b) {
  const index_t plane = d.out_h() * d.out_w();
  std::vector<double> y(static_cast<std::size_t>(y_size(d)), 0.0);
  if (!b.empty())
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = b[static_cast<std::size_t>(index_t(i) / plane % d.k)];
  for_each_product(d, [&](index_t xi, index_t wi, index_t yi) { y[yi] += w[wi] * x[xi]; });
  return y;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

index_t x_size(const ConvDesc& d) { return d.n * d.c * d.h * d.w; }
index_t w_size(const ConvDesc& d) { return d.k * (d.c / d.groups) * d.kh * d.kw; }
index_t y_size(const ConvDesc& d) { return d.n * d.k * d.out_h() * d.out_w(); }

}  // namespace conv_test

namespace {
// The suite runs single-threaded unless TAIHU_NUM_THREADS says otherwise: on a loaded
// 2-core CI machine, OpenMP barriers of tiny problems dominate. Tests that exercise the
// threaded paths set their thread count explicitly (ConvThreads.*), and their shapes
// are small: the rule that runs calls below 1 MFLOP on one thread (conv_threads.hpp)
// is off here, so they reach the threaded code (ConvCallThreads tests the rule).
class SingleThreadByDefault : public ::testing::Environment {
 public:
  void SetUp() override {
    if (std::getenv("TAIHU_NUM_THREADS") == nullptr) taihu::arch::set_num_threads(1);
    taihu::dnn::conv::set_serial_below_flops(0);
  }
};
[[maybe_unused]] ::testing::Environment* const kSingleThread =
    ::testing::AddGlobalTestEnvironment(new SingleThreadByDefault);
}  // namespace
