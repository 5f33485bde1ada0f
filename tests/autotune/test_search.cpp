// Search reproducibility, search quality on a synthetic cost, and the cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/cost_model.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/search.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;

namespace {
ta::Problem gemm() {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=256,N=256,K=256"));
}
// A fake measurer: a smooth bowl in the knob values plus a categorical bonus; the
// minimum is at one known point.
double fake_seconds(const ta::Space& s, const ta::Point& pt) {
  double t = 1e-3;
  for (std::size_t i = 0; i < pt.size(); ++i) {
    const double target = static_cast<double>(s.knobs()[i].labels.size() - 1) / 2.0;
    t += 1e-4 * (pt[i] - target) * (pt[i] - target);
  }
  return t;
}
}  // namespace

TEST(AutotuneSearch, SameSeedSameCandidates) {
  ta::Problem p = gemm();
  ta::Space s(p);
  for (auto strat : {ta::Strategy::random, ta::Strategy::evolutionary}) {
    ta::TuneOptions o;
    o.strategy = strat;
    o.seed = 42;
    o.max_trials = 40;
    o.budget_s = 0;
    auto fake = [&](const ta::Point& pt) { return fake_seconds(s, pt); };
    auto a = ta::tune(p, s, o, fake);
    auto b = ta::tune(p, s, o, fake);
    ASSERT_EQ(a.trials, 40);
    EXPECT_EQ(a.measured, b.measured);
    o.seed = 43;
    auto c = ta::tune(p, s, o, fake);
    EXPECT_NE(a.measured, c.measured);
    for (const auto& pt : a.measured) EXPECT_TRUE(s.valid(pt));
    std::set<ta::Point> distinct(a.measured.begin(), a.measured.end());
    EXPECT_EQ(distinct.size(), a.measured.size()) << "a point was measured twice";
  }
}

TEST(AutotuneSearch, GuidedSearchBeatsRandomOnSyntheticCost) {
  ta::Problem p = gemm();
  ta::Space s(p);
  auto fake = [&](const ta::Point& pt) { return fake_seconds(s, pt); };
  double evo = 0, rnd = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    ta::TuneOptions o;
    o.seed = seed;
    o.max_trials = 60;
    o.budget_s = 0;
    o.strategy = ta::Strategy::evolutionary;
    evo += ta::tune(p, s, o, fake).best_s;
    o.strategy = ta::Strategy::random;
    o.cost_model = false;
    rnd += ta::tune(p, s, o, fake).best_s;
  }
  EXPECT_LT(evo, rnd);
}

TEST(AutotuneSearch, FailingCandidatesAreRecordedNotRetried) {
  ta::Problem p = gemm();
  ta::Space s(p);
  ta::TuneOptions o;
  o.max_trials = 20;
  o.budget_s = 0;
  int calls = 0;
  auto r = ta::tune(p, s, o, [&](const ta::Point& pt) -> double {
    ++calls;
    if (pt[0] == 0) throw taihu::Error("synthetic failure");
    return fake_seconds(s, pt);
  });
  EXPECT_EQ(calls, 20);
  EXPECT_GT(r.failures, 0);
  for (const auto& rec : r.records)
    if (!rec.ok) {
      EXPECT_EQ(rec.error, "synthetic failure");
    }
  EXPECT_NE(r.best[0], 0);
}

TEST(AutotuneCostModel, LearnsSyntheticFunction) {
  // y = (x0 - 2)^2 + 3 [x1 > 0.5] - x2, on a grid; tested on unseen points.
  ta::SplitMix64 rng(7);
  auto f = [](const std::vector<double>& x) { return (x[0] - 2) * (x[0] - 2) + 3 * (x[1] > 0.5) - x[2]; };
  std::vector<std::vector<double>> x, xt;
  std::vector<double> y, yt;
  for (int i = 0; i < 300; ++i) {
    std::vector<double> r = {static_cast<double>(rng.below(5)), static_cast<double>(rng.below(2)), rng.uniform()};
    (i < 200 ? x : xt).push_back(r);
    (i < 200 ? y : yt).push_back(f(r));
  }
  ta::CostModel m;
  m.fit(x, y);
  ASSERT_TRUE(m.trained());
  double ss_res = 0, ss_tot = 0, mean = 0;
  for (double v : yt) mean += v / static_cast<double>(yt.size());
  for (std::size_t i = 0; i < xt.size(); ++i) {
    ss_res += std::pow(m.predict(xt[i]) - yt[i], 2);
    ss_tot += std::pow(yt[i] - mean, 2);
  }
  EXPECT_GT(1 - ss_res / ss_tot, 0.9) << "R^2 on held-out points";
  EXPECT_THROW(m.fit({{1.0}}, {1.0, 2.0}), taihu::Error);
}
