// The roofline probes compute what they claim (so the timed work is real) and the
// measurements return sane, positive ceilings. Speed itself is checked by benchmarks.
#include <gtest/gtest.h>

#include <cmath>

#include "roofline_probes.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/roofline.hpp"

namespace {

namespace probes = taihu::arch::probes;
using taihu::arch::Isa;

// acc_n = m^n acc_0 + a (1 - m^n) / (1 - m), summed over chains starting at 1..chains.
double analytic(int chains, int lanes, long n, double m, double a) {
  const double mn = std::pow(m, static_cast<double>(n));
  double sum = 0;
  for (int i = 0; i < chains; ++i) sum += lanes * (mn * (i + 1) + a * (1 - mn) / (1 - m));
  return sum;
}

void check_probe(const probes::FmaProbe& p) {
  const long n = 20000;
  EXPECT_NEAR(p.f64(n, 0.9999, 1e-3), analytic(p.chains, p.lanes_f64, n, 0.9999, 1e-3), 1e-8);
  const double ref32 = analytic(p.chains, p.lanes_f32, n, 0.9999, 1e-3);
  EXPECT_NEAR(p.f32(n, 0.9999f, 1e-3f), ref32, 2e-3 * ref32);
}

TEST(Roofline, GenericProbeMatchesTheAnalyticResult) { check_probe(probes::kFmaGeneric); }

TEST(Roofline, Avx2ProbeMatchesTheAnalyticResult) {
  if (!taihu::arch::isa_supported(Isa::avx2, taihu::arch::cpu_features()))
    GTEST_SKIP() << "CPU lacks AVX2";
  check_probe(probes::kFmaAvx2);
}

TEST(Roofline, Avx512ProbeMatchesTheAnalyticResult) {
  if (!taihu::arch::isa_supported(Isa::avx512, taihu::arch::cpu_features()))
    GTEST_SKIP() << "CPU lacks AVX-512";
  check_probe(probes::kFmaAvx512);
}

TEST(Roofline, NonTemporalTriadIsATriad) {
  if (!taihu::arch::isa_supported(Isa::avx2, taihu::arch::cpu_features()))
    GTEST_SKIP() << "CPU lacks AVX2";
  const long n = 1003;
  taihu::arch::AlignedBuffer<float> a(n), b(n), c(n);
  for (long i = 0; i < n; ++i) a[i] = -1.f, b[i] = static_cast<float>(i), c[i] = 0.5f * static_cast<float>(i % 7);
  probes::kTriadNtAvx2(a.data(), b.data(), c.data(), 3.f, 5, n - 2);
  for (long i = 0; i < n; ++i) {
    const float expected = (i >= 5 && i < n - 2) ? b[i] + 3.f * c[i] : -1.f;
    ASSERT_FLOAT_EQ(a[i], expected) << i;
  }
}

TEST(Roofline, MeasurementsArePositive) {
  const double sp = taihu::arch::measure_peak_gflops(taihu::arch::Precision::f32, 1);
  const double dp = taihu::arch::measure_peak_gflops(taihu::arch::Precision::f64, 1);
  // Only sanity here: ctest runs tests side by side, so rates are the benchmarks' job.
  EXPECT_GT(sp, 0.1);
  EXPECT_GT(dp, 0.05);
  const auto s = taihu::arch::measure_stream(1, 1 << 22);
  EXPECT_GT(s.triad_gbps, 0.1);
  EXPECT_GT(s.copy_gbps, 0.1);
}

}  // namespace
