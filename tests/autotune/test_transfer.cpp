// Tuning that transfers across shapes: the weighted cost model, Spearman's rank
// correlation, and -- on a synthetic gemm cost whose optimum moves with the shape --
// that a model trained only on other shapes' log records ranks a held-out shape's
// schedules far better than chance, and that a new shape tuned with that log reaches a
// better schedule in few trials than one tuned from scratch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <numeric>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/cost_model.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/transfer.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;

namespace {

ta::Problem gemm(const std::string& shape) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape(shape));
}

std::string temp_log(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("taihu-transfer-" + std::to_string(::getpid()) + "-" + name + ".jsonl")).string();
}

// A synthetic gemm run time: peak speed scaled by how well the schedule fits the
// shape -- vector width and whole vectors per tile, register-tile size (spills above
// 32 accumulators, latency-bound below 4), work padded onto partial tiles, the tile's
// working set against 48 KiB / 2 MiB, parallel tasks over 2 threads, B's layout and the
// loop order -- times a +-5% deterministic "noise" per schedule. Written from the
// schedule itself, independently of transfer.cpp's features.
double synthetic_seconds(const ta::Problem& p, const ta::Space& s, const ta::Point& pt) {
  const ta::Schedule sc = s.schedule(pt);
  auto dim = [&](const char* v) { return static_cast<double>(p.dim(v)); };
  auto tile = [&](const char* v, double e) { return sc.tile.count(v) ? std::min(e, static_cast<double>(sc.tile.at(v))) : e; };
  const double M = dim("M"), N = dim("N"), K = dim("K");
  const double tm = tile("m", M), tn = tile("n", N), tk = tile("k", K);
  const double vec = sc.vectorize.count("n") ? sc.vectorize.at("n") : 1;
  double eff = vec >= 16 ? 1.0 : vec >= 8 ? 0.55 : 0.15;
  if (std::fmod(tn, vec) != 0) eff *= 0.6;
  const double acc = tm * tn / 16;
  eff *= acc < 4 ? acc / 4 : acc > 32 ? 32 / acc : 1.0;
  const double waste = std::ceil(M / tm) * tm / M * std::ceil(N / tn) * tn / N * std::ceil(K / tk) * tk / K;
  const double bytes = 4 * (tm * tk + tk * tn + tm * tn);
  const double cache = bytes > (2 << 20) ? 3.0 : bytes > (48 << 10) ? 1.5 : 1.0;
  double tasks = 1;
  if (sc.parallel == "m") tasks = std::ceil(M / (sc.block.count("m") ? static_cast<double>(sc.block.at("m")) : tm));
  if (sc.parallel == "n") tasks = std::ceil(N / (sc.block.count("n") ? static_cast<double>(sc.block.at("n")) : tn));
  const double par = std::ceil(tasks / 2) * 2 / tasks * (tasks >= 2 ? 0.5 : 1.0);
  const std::string layout = sc.layout.count("B") ? sc.layout.at("B") : "direct";
  const double lay = layout == "packed" ? 0.8 : layout == "staged" ? 0.9 : 1.0;
  const double order = !sc.order.empty() && sc.order[0] == "m" && sc.order[1] == "k" ? 1.0 : 1.3;
  std::uint64_t h = 1469598103934665603ull;
  for (int v : pt) h = (h ^ static_cast<std::uint64_t>(v + 1)) * 1099511628211ull;
  const double noise = 0.95 + 0.1 * static_cast<double>(h % 1000) / 1000.0;
  return 2 * M * N * K / (100e9 * eff) * waste * cache * par * lay * order * noise;
}

// The shapes tuned into the log, and the held-out one (none of its dims in the log).
const std::vector<std::string> kTuned = {"M=128,N=256,K=128", "M=256,N=128,K=384", "M=384,N=384,K=256", "M=512,N=192,K=512"};
const std::string kHeldOut = "M=320,N=448,K=192";

// A log of kTuned, each tuned 60 trials on the synthetic cost (fast: no code is built).
std::string tuned_log(const std::string& name) {
  const std::string log = temp_log(name);
  std::filesystem::remove(log);
  for (const auto& shape : kTuned) {
    ta::Problem p = gemm(shape);
    ta::Space s(p);
    ta::TuneOptions o;
    o.budget_s = 0;
    o.max_trials = 60;
    o.log_path = log;
    ta::tune(p, s, o, [&](const ta::Point& pt) { return synthetic_seconds(p, s, pt); });
  }
  return log;
}

}  // namespace

TEST(AutotuneTransfer, WeightedFitFollowsTheHeavierSamples) {
  // The same features with two targets: the prediction sides with the heavier group.
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  for (int i = 0; i < 40; ++i) {
    x.push_back({static_cast<double>(i / 2 % 4)});  // both targets at every x
    y.push_back(i % 2 ? 1.0 : 5.0);
    w.push_back(i % 2 ? 9.0 : 1.0);
  }
  ta::CostModel m;
  m.fit(x, y, w);
  EXPECT_NEAR(m.predict({0.0}), 1.4, 0.3);  // the weighted mean (9 * 1 + 5) / 10
  m.fit(x, y);
  EXPECT_NEAR(m.predict({0.0}), 3.0, 0.3);  // unweighted
  EXPECT_THROW(m.fit(x, y, std::vector<double>(40, 0.0)), taihu::Error);
  EXPECT_THROW(m.fit(x, y, {1.0}), taihu::Error);
}

TEST(AutotuneTransfer, SpearmanOfKnownRankings) {
  EXPECT_DOUBLE_EQ(ta::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(ta::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(ta::spearman({1, 2, 3, 4, 5}, {1, 3, 2, 5, 4}), 0.8, 1e-12);  // 1 - 6*4/(5*24)
  EXPECT_THROW(ta::spearman({1}, {1}), taihu::Error);
}

TEST(AutotuneTransfer, FeaturesHaveOneLayoutAcrossShapes) {
  ta::Problem a = gemm("M=128,N=256,K=128"), b = gemm("M=1000,N=24,K=4096");
  ta::Space sa(a), sb(b);
  ta::TransferFeatures f(a, sa, 2);
  ta::SplitMix64 rng(3);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(f(a, sa, sa.random(rng)).size(), f.size());
    EXPECT_EQ(f(b, sb, sb.random(rng)).size(), f.size());
  }
  // The same knobs on a shape twice as large in every dim: the relative features differ.
  ta::Problem c = gemm("M=256,N=512,K=256");
  ta::Space sc(c);
  const ta::Point pt = sa.default_point();
  EXPECT_NE(f(a, sa, pt), f(c, sc, sc.nearest_point(sa.to_map(pt))));
}

TEST(AutotuneTransfer, ModelFromOtherShapesRanksAHeldOutShape) {
  const std::string log = tuned_log("rank");
  ta::Problem p = gemm(kHeldOut);
  ta::Space s(p);
  ta::TuneOptions o;
  const ta::Record key = ta::record_for(p, o);
  const ta::TransferFeatures f(p, s, o.threads);
  const auto samples = ta::transfer_samples(p, s, f, key, ta::load_log(log), nullptr);
  ASSERT_GE(samples.size(), 200u) << "every tuned shape's records are training samples";
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  for (const auto& smp : samples) x.push_back(smp.x), y.push_back(smp.y), w.push_back(smp.weight);
  ta::CostModel model;
  model.fit(x, y, w);
  // Shuffled targets: a model that learned nothing about schedules (the control).
  std::vector<double> shuffled = y;
  ta::SplitMix64 rng(11);
  for (std::size_t i = shuffled.size() - 1; i > 0; --i) std::swap(shuffled[i], shuffled[static_cast<std::size_t>(rng.below(static_cast<int>(i + 1)))]);
  ta::CostModel control;
  control.fit(x, shuffled, w);

  std::vector<double> times, predicted, control_predicted;
  for (int i = 0; i < 5000 && times.size() < 200; ++i) {
    const ta::Point pt = s.random(rng);
    if (!s.valid(pt)) continue;
    times.push_back(synthetic_seconds(p, s, pt));
    predicted.push_back(model.predict(f(p, s, pt)));
    control_predicted.push_back(control.predict(f(p, s, pt)));
  }
  ASSERT_GE(times.size(), 100u);
  const double rho = ta::spearman(predicted, times), rho_control = ta::spearman(control_predicted, times);
  std::printf("Spearman on the held-out shape: transferred model %.3f, shuffled-target control %.3f (%zu schedules)\n", rho,
              rho_control, times.size());
  // Chance is 0 with a standard error of 1/sqrt(n-1) < 0.1: 0.5 is far out of its reach.
  EXPECT_GT(rho, 0.5);
  EXPECT_LT(std::abs(rho_control), 0.3);
  std::filesystem::remove(log);
}

TEST(AutotuneTransfer, NewShapeStartsFromTheOtherShapesLog) {
  const std::string log = tuned_log("tune");
  ta::Problem p = gemm(kHeldOut);
  ta::Space s(p);
  auto fake = [&](const ta::Point& pt) { return synthetic_seconds(p, s, pt); };
  double with = 0, seeds_only = 0, without = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    ta::TuneOptions o;
    o.budget_s = 0;
    o.max_trials = 16;
    o.seed = seed;
    const std::string copy = temp_log("tune-copy");
    std::filesystem::copy_file(log, copy, std::filesystem::copy_options::overwrite_existing);
    o.log_path = copy;
    const ta::TuneResult r = ta::tune(p, s, o, fake);
    with += r.best_s;
    // The model ranked from the first batch: no default point, predictions once the
    // shape has a measured best.
    EXPECT_NE(r.measured.front(), s.default_point());
    EXPECT_GT(r.records.back().predicted_s, 0);
    std::filesystem::copy_file(log, copy, std::filesystem::copy_options::overwrite_existing);
    o.transfer_model = false;
    seeds_only += ta::tune(p, s, o, fake).best_s;
    std::filesystem::remove(copy);
    o.log_path.clear();
    without += ta::tune(p, s, o, fake).best_s;
  }
  std::printf("best after 16 trials (sum of 3 seeds): with the log %.4g s, seeds only %.4g s, from scratch %.4g s\n", with, seeds_only,
              without);
  EXPECT_LT(with, without);
  EXPECT_LE(with, seeds_only);
  std::filesystem::remove(log);
}


namespace {

// A Winograd point of s (F(4x4)) with the GEMM tile k, channel block c, tile rows per
// task r and output channels per task kb set by value.
ta::Point winograd_point(const ta::Space& s, std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t kb) {
  ta::Point pt = s.default_point();
  auto set = [&](const std::string& kind, const std::string& target, std::int64_t v) {
    for (std::size_t i = 0; i < s.knobs().size(); ++i) {
      const ta::Knob& kn = s.knobs()[i];
      if (kn.kind != kind || kn.target != target) continue;
      for (std::size_t j = 0; j < kn.labels.size(); ++j)
        if ((kind == "algorithm" && kn.labels[j] == "winograd") || (kind != "algorithm" && kn.ints[j] == v)) pt[i] = static_cast<int>(j);
    }
  };
  set("algorithm", "", 0);
  set("winograd", "m", 4);
  set("winograd", "t", 1);  // a tile that fits 16 registers on every ISA
  set("winograd", "k", k);
  set("winograd", "c", c);
  set("winograd", "r", r);
  set("winograd", "kb", kb);
  return pt;
}

}  // namespace

// A layer carried over from another batch size (the DNN suite's warm start) measures
// first: the donor's best; the fastest near-tie there (within 5%) in another GEMM tile,
// not a faster-looking one outside 5% nor a near-tie in the same tile; and, toward more
// images, both again with one tile row per task (r 1), since the per-stage (r 0) buffers
// grow with the batch, these right after the donor's best. Toward fewer images, no r 1 variants. Only the Space: no code built.
TEST(AutotuneTransfer, LargerBatchStartsFromNearTiesInAnotherTileAndRowTasks) {
  const std::string spec = std::string(TAIHU_DSL_DIR) + "/conv2d.tdsl";
  ta::Problem p1(ta::parse_spec_file(spec), ta::parse_shape("N=1,C=32,H=16,W=16,KO=64,R=3,S=3,P=1"));
  ta::Problem p8(ta::parse_spec_file(spec), ta::parse_shape("N=8,C=32,H=16,W=16,KO=64,R=3,S=3,P=1"));
  ta::Space s1(p1), s8(p8);
  const ta::Point best = winograd_point(s1, 16, 32, 0, 16), same_tile = winograd_point(s1, 16, 16, 0, 0),
                  other_tile = winograd_point(s1, 32, 16, 0, 0), other_tile_slower = winograd_point(s1, 24, 16, 0, 0),
                  far = winograd_point(s1, 8, 16, 0, 0);
  for (const ta::Point* pt : {&best, &same_tile, &other_tile, &other_tile_slower, &far}) ASSERT_TRUE(s1.valid(*pt)) << s1.why_invalid(*pt);
  ta::TuneOptions o;
  const ta::Record key = ta::record_for(p1, o);
  std::vector<ta::Record> log;
  auto rec = [&](const ta::Point& pt, double s) {
    ta::Record r = key;
    r.schedule = s1.to_map(pt);
    r.median_s = r.min_s = r.max_s = s;
    log.push_back(r);
  };
  rec(best, 1.00e-3);
  rec(same_tile, 1.005e-3);   // a near-tie in the best's tile: not the one carried
  rec(far, 0.9e-3);           // a faster search record of another key: ignored
  log.back().shape = "N=2,C=32,H=16,W=16,KO=64,R=3,S=3,P=1";
  rec(other_tile_slower, 1.04e-3);
  rec(other_tile, 1.02e-3);   // the fastest near-tie in another tile
  rec(winograd_point(s1, 8, 32, 0, 0), 1.2e-3);  // outside 5%
  const ta::Record from = log.front();
  auto at = [&](const ta::Point& pt, std::int64_t r) {
    ta::Point q = s8.nearest_point(s1.to_map(pt));
    for (std::size_t i = 0; i < s8.knobs().size(); ++i)
      if (s8.knobs()[i].kind == "winograd" && s8.knobs()[i].target == "r")
        for (std::size_t j = 0; j < s8.knobs()[i].ints.size(); ++j)
          if (s8.knobs()[i].ints[j] == r) q[i] = static_cast<int>(j);
    return q;
  };
  const std::vector<ta::Point> up = ta::batch_seeds(s8, log, from, true);
  ASSERT_EQ(up.size(), 4u);
  EXPECT_EQ(up[0], at(best, 0));
  EXPECT_EQ(up[1], at(best, 1));
  EXPECT_EQ(up[2], at(other_tile, 1));
  EXPECT_EQ(up[3], at(other_tile, 0));
  const std::vector<ta::Point> down = ta::batch_seeds(s8, log, from, false);
  ASSERT_EQ(down.size(), 2u);
  EXPECT_EQ(down[0], at(best, 0));
  EXPECT_EQ(down[1], at(other_tile, 0));
}
