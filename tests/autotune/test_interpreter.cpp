// The reference interpreter against hand-written loops, and the on-demand evaluation
// (used to check candidates at full size) against the full interpreter.
#include <gtest/gtest.h>

#include <cmath>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/parser.hpp"

namespace ta = taihu::autotune;

namespace {
ta::Problem load(const std::string& name, const std::string& shape) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + name + ".tdsl"), ta::parse_shape(shape));
}
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}
}  // namespace

TEST(AutotuneInterpreter, GemmMatchesLoops) {
  const int M = 7, N = 5, K = 6;
  ta::Problem p = load("gemm", "M=7,N=5,K=6");
  auto in = ta::random_inputs(p, 11);
  std::vector<double> want(M * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) want[m * N + n] += double(in["A"][m * K + k]) * in["B"][k * N + n];
  expect_close(ta::interpret(p, 0, in), want, 1e-6);
}

TEST(AutotuneInterpreter, ConvDirectAndIm2colMatchPaddedLoops) {
  const int C = 3, H = 5, W = 4, KO = 2, R = 3, S = 3, P = 1;
  ta::Problem p = load("conv2d", "N=1,C=3,H=5,W=4,KO=2,R=3,S=3,P=1");
  auto in = ta::random_inputs(p, 3);
  std::vector<double> want(KO * H * W, 0.0);
  for (int k = 0; k < KO; ++k)
    for (int oh = 0; oh < H; ++oh)
      for (int ow = 0; ow < W; ++ow)
        for (int c = 0; c < C; ++c)
          for (int r = 0; r < R; ++r)
            for (int s = 0; s < S; ++s) {
              const int ih = oh + r - P, iw = ow + s - P;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              want[(k * H + oh) * W + ow] += double(in["X"][(c * H + ih) * W + iw]) * in["Wt"][((k * C + c) * R + r) * S + s];
            }
  expect_close(ta::interpret(p, 0, in), want, 1e-6);
  expect_close(ta::interpret(p, 1, in), want, 1e-6);
}

TEST(AutotuneInterpreter, Stencil7TwoStepsMatchLoops) {
  const int Z = 4, Y = 5, X = 6;
  ta::Problem p = load("stencil7", "Z=4,Y=5,X=6,T=2");
  auto in = ta::random_inputs(p, 5);
  std::vector<double> u(in["u"].begin(), in["u"].end()), v(u.size());
  auto at = [&](const std::vector<double>& a, int z, int y, int x) {
    return (z < 0 || z >= Z || y < 0 || y >= Y || x < 0 || x >= X) ? 0.0 : a[(z * Y + y) * X + x];
  };
  for (int step = 0; step < 2; ++step) {
    for (int z = 0; z < Z; ++z)
      for (int y = 0; y < Y; ++y)
        for (int x = 0; x < X; ++x)
          v[(z * Y + y) * X + x] = double(0.4f) * at(u, z, y, x) +
                                   double(0.1f) * (at(u, z - 1, y, x) + at(u, z + 1, y, x) + at(u, z, y - 1, x) +
                                                   at(u, z, y + 1, x) + at(u, z, y, x - 1) + at(u, z, y, x + 1));
    u = v;
  }
  expect_close(ta::interpret(p, 0, in), v, 1e-6);
}

TEST(AutotuneInterpreter, SoftmaxRowsSumToOneAndMatchLoops) {
  const int R = 3, C = 9;
  ta::Problem p = load("softmax", "ROWS=3,COLS=9");
  auto in = ta::random_inputs(p, 8);
  std::vector<double> want(R * C);
  for (int r = 0; r < R; ++r) {
    double mx = -1e300, sum = 0;
    for (int c = 0; c < C; ++c) mx = std::max(mx, double(in["X"][r * C + c]));
    for (int c = 0; c < C; ++c) sum += std::exp(in["X"][r * C + c] - mx);
    for (int c = 0; c < C; ++c) want[r * C + c] = std::exp(in["X"][r * C + c] - mx) / sum;
  }
  auto got = ta::interpret(p, 0, in);
  expect_close(got, want, 1e-6);
  double row0 = 0;
  for (int c = 0; c < C; ++c) row0 += got[c];
  EXPECT_NEAR(row0, 1.0, 1e-6);
}

TEST(AutotuneInterpreter, OnDemandPointsEqualFullRun) {
  struct Case {
    const char* spec;
    const char* shape;
  } cases[] = {{"conv2d", "N=1,C=2,H=6,W=5,KO=3,R=3,S=3,P=1"},
               {"softmax", "ROWS=4,COLS=7"},
               {"stencil25", "Z=9,Y=10,X=11,T=2"},
               {"batched_matmul", "BATCH=2,M=3,N=4,K=5"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    ta::Problem p = load(c.spec, c.shape);
    auto in = ta::random_inputs(p, 21);
    for (int a = 0; a < p.algorithm_count(); ++a) {
      auto full = ta::interpret(p, a, in);
      auto pts = ta::sample_points(p, 40, 9);
      EXPECT_EQ(pts.front(), 0);
      EXPECT_EQ(pts.back(), p.tensor(p.output()).size() - 1);
      auto part = ta::interpret_points(p, a, in, pts);
      for (std::size_t i = 0; i < pts.size(); ++i) EXPECT_NEAR(part[i], full[pts[i]], 1e-6 * (1 + std::fabs(part[i])));
    }
  }
}

TEST(AutotuneInterpreter, OutOfBoundsWithoutBoundaryThrows) {
  ta::Problem p(ta::parse_spec("operator shift\ndim N\ninput A : f32[N]\noutput B : f32[N]\ncompute {\n  B[i] = A[i + 1]\n}\n", "s.tdsl"),
                {{"N", 4}});
  auto in = ta::random_inputs(p, 1);
  try {
    ta::interpret(p, 0, in);
    FAIL() << "expected an error";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("s.tdsl:6:10: access to 'A' dimension 0 at index 4"), std::string::npos) << e.what();
  }
}

TEST(AutotuneInterpreter, CompareOutputsFlagsMismatchAndNan) {
  EXPECT_TRUE(ta::compare_outputs({1.0f, 2.0f}, {1.0f, 2.0f}, 1e-6).ok);
  EXPECT_FALSE(ta::compare_outputs({1.0f, 2.1f}, {1.0f, 2.0f}, 1e-3).ok);
  EXPECT_FALSE(ta::compare_outputs({1.0f, std::nanf("")}, {1.0f, 2.0f}, 1e-3).ok);
  EXPECT_FALSE(ta::compare_outputs({1.0f}, {1.0f, 2.0f}, 1e-3).ok);
}
