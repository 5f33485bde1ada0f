// Shapes too large to allocate are refused before allocation, naming --shape; a
// measurement no machine could make (0 s, NaN, beyond any FLOP rate) is a failed
// record, never a successful one that `best` would report.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;

namespace {

ta::Spec gemm_spec() { return ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"); }

std::string problem_error(const std::string& shape) {
  try {
    ta::Problem p(gemm_spec(), ta::parse_shape(shape));
  } catch (const taihu::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(AutotuneTunerLimits, OverflowingShapeIsRefusedNamingTensorAndShape) {
  // 2^32 x 2^32 floats: 2^66 bytes (the size wrapped to 0 before, and "ran" in no time).
  const std::string err = problem_error("M=4294967296,N=4294967296,K=4294967296");
  EXPECT_NE(err.find("gemm.tdsl:5:8: tensor 'A' of 4294967296 x 4294967296 f32 elements is larger than 2^63 bytes"), std::string::npos)
      << err;
  EXPECT_NE(err.find("--shape M=4294967296,N=4294967296,K=4294967296"), std::string::npos) << err;
  // 2^61 elements fit in int64 but their bytes do not.
  EXPECT_NE(problem_error("M=1,N=2305843009213693952,K=1").find("tensor 'B'"), std::string::npos);
  // Just below the limit is a valid Problem (nothing is allocated by binding).
  EXPECT_EQ(problem_error("M=1,N=1073741824,K=1073741824"), "");
}

TEST(AutotuneTunerLimits, DerivedDimOverflowIsAPositionedError) {
  const char* text =
      "operator big\n"
      "dim N\n"
      "dim P = N * N * N\n"
      "input A : f32[N]\n"
      "output O : f32[N]\n"
      "compute {\n"
      "  O[i] = A[i]\n"
      "}\n";
  std::string err;
  try {
    ta::Problem p(ta::parse_spec(text, "t.tdsl"), {{"N", 4294967296}});
  } catch (const taihu::Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("t.tdsl:3:"), std::string::npos) << err;
  EXPECT_NE(err.find("integer overflow"), std::string::npos) << err;
}

TEST(AutotuneTunerLimits, ShapeBeyondMemoryIsRefusedBeforeAllocating) {
  // 3 x 2^48 floats = 3 PiB: more than any test machine has; refused at once (an
  // allocation attempt would throw bad_alloc or be killed).
  ta::Problem p(gemm_spec(), ta::parse_shape("M=16777216,N=16777216,K=16777216"));
  ta::Space s(p);
  ta::TuneOptions o;
  o.backend = "cpp";
  o.max_trials = 1;
  o.budget_s = 0;
  std::string err;
  try {
    ta::tune(p, s, o);
  } catch (const taihu::Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("--shape M=16777216,N=16777216,K=16777216: the tensors need 3.15e+06 GiB (A 1.05e+06 GiB, B 1.05e+06 GiB, C 1.05e+06 GiB) but "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("GiB of memory is available"), std::string::npos) << err;
}

TEST(AutotuneTunerLimits, ImplausibleMeasurementsAreFailedRecords) {
  ta::Problem p(gemm_spec(), ta::parse_shape("M=64,N=64,K=64"));
  ta::Space s(p);
  ta::TuneOptions o;
  o.max_trials = 4;
  o.budget_s = 0;
  o.threads = 2;
  // 2*64^3 flop: 1e-3 s is 0.5 GFLOP/s (fine); 0, NaN and 1e-20 s (2.6e10 GFLOP/s) are not.
  const double times[] = {0.0, std::nan(""), 1e-20, 1e-3};
  int call = 0;
  auto r = ta::tune(p, s, o, [&](const ta::Point&) { return times[call++ % 4]; });
  ASSERT_EQ(r.records.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(r.records[static_cast<std::size_t>(i)].ok) << i;
    EXPECT_NE(r.records[static_cast<std::size_t>(i)].error.find("implausible measurement"), std::string::npos) << r.records[static_cast<std::size_t>(i)].error;
  }
  EXPECT_TRUE(r.records[3].ok);
  EXPECT_EQ(r.failures, 3);
  EXPECT_DOUBLE_EQ(r.best_s, 1e-3);
  EXPECT_EQ(ta::best_records(r.records).size(), 1u);
  EXPECT_DOUBLE_EQ(ta::best_records(r.records)[0].median_s, 1e-3);
}

TEST(AutotuneTunerLimits, ReaderRefusesAnImplausibleSuccessfulRecord) {
  // The record the bug wrote: ok at 3.35e26 GFLOP/s.
  const std::string line =
      R"({"format":"taihu-tune/1","op":"gemm","spec_hash":"0","shape":"M=1","isa":"avx512","threads":2,"backend":"cpp",)"
      R"("schedule":{},"ok":true,"median_s":1e-9,"gflops":3.35e26})";
  std::string err;
  try {
    ta::from_json_line(line, "log:3");
  } catch (const taihu::Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("log:3: implausible successful record"), std::string::npos) << err;
}
