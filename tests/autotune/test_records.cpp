// The JSON-lines log: round trip, errors with file:line, best per key, resume, and
// the dnn conv2d record line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/tuner.hpp"

namespace ta = taihu::autotune;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".jsonl")).string();
}
ta::Record sample() {
  ta::Record r;
  r.op = "gemm";
  r.spec_hash = "0123456789abcdef";
  r.shape = "M=8,N=8,K=8";
  r.isa = "avx2";
  r.threads = 2;
  r.backend = "halide";
  r.schedule = {{"tile m", "8"}, {"order", "m k n"}};
  r.median_s = 1.25e-4;
  r.spread = 0.03;
  r.repeats = 9;
  r.predicted_s = 1.5e-4;
  r.gflops = 8.2;
  r.seed = 77;
  r.trial = 5;
  r.taihu_version = "0.1.0";
  r.halide_version = "14.0.0";
  r.compiler = "GNU 12";
  r.time = "2026-01-01T00:00:00Z";
  return r;
}
}  // namespace

TEST(AutotuneRecords, RoundTrip) {
  ta::Record r = sample();
  ta::Record back = ta::from_json_line(ta::to_json_line(r), "x");
  EXPECT_EQ(back.key(), r.key());
  EXPECT_EQ(back.schedule, r.schedule);
  EXPECT_DOUBLE_EQ(back.median_s, r.median_s);
  EXPECT_DOUBLE_EQ(back.predicted_s, r.predicted_s);
  EXPECT_EQ(back.seed, 77u);
  EXPECT_EQ(back.trial, 5);
  EXPECT_EQ(back.halide_version, "14.0.0");
  auto j = nlohmann::json::parse(ta::to_json_line(r));
  EXPECT_EQ(j["format"], "taihu-tune/1");
}

TEST(AutotuneRecords, BadLinesNameTheirPlace) {
  const std::string path = temp_path("bad");
  {
    std::ofstream o(path);
    o << ta::to_json_line(sample()) << "\n\n# comment\n{\"format\":\"taihu-tune/9\"}\n";
  }
  // A bad line costs its record, not the log; its place is reported.
  std::vector<std::string> skipped;
  EXPECT_EQ(ta::load_log(path, &skipped).size(), 1u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].rfind(path + ":4: unknown record format 'taihu-tune/9'", 0), 0u) << skipped[0];
  EXPECT_THROW(ta::from_json_line("{not json", "f:1"), taihu::Error);
  EXPECT_THROW(ta::from_json_line("{\"format\":\"taihu-tune/1\",\"op\":\"x\"}", "f:1"), taihu::Error);
  std::remove(path.c_str());
  EXPECT_TRUE(ta::load_log(path).empty());  // missing file: empty log
}

TEST(AutotuneRecords, BestPerKey) {
  ta::Record a = sample(), b = sample(), c = sample(), d = sample();
  b.median_s = 1e-4;
  c.threads = 1;
  c.median_s = 5e-4;
  d.ok = false;
  d.median_s = 0;
  auto best = ta::best_records({a, b, c, d});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_DOUBLE_EQ(best[0].median_s, 1e-4);
  EXPECT_EQ(best[1].threads, 1);
}

// The statistic and its spread survive the round trip; a line without "stat" is a
// search record; an unknown stat is a bad line.
TEST(AutotuneRecords, StatisticAndSpreadRoundTrip) {
  ta::Record r = sample();
  r.stat = "confirmed";
  r.min_s = 1.1e-4;
  r.max_s = 2.5e-4;
  const ta::Record back = ta::from_json_line(ta::to_json_line(r), "x");
  EXPECT_EQ(back.stat, "confirmed");
  EXPECT_DOUBLE_EQ(back.min_s, 1.1e-4);
  EXPECT_DOUBLE_EQ(back.max_s, 2.5e-4);
  EXPECT_DOUBLE_EQ(back.spread, 0.03);
  auto j = nlohmann::json::parse(ta::to_json_line(sample()));
  j.erase("stat");
  EXPECT_EQ(ta::from_json_line(j.dump(), "x").stat, "search");
  j["stat"] = "luckiest";
  EXPECT_THROW(ta::from_json_line(j.dump(), "f:3"), taihu::Error);
}

// Integer fields hold integers in range: a fuzzed log had "seed": 5.55e-06, whose
// conversion to an integer was undefined behaviour (UBSan), as 1e300 or -1 would be.
TEST(AutotuneRecords, IntegerFieldsAreChecked) {
  const auto error_for = [](const char* key, const nlohmann::json& value) {
    auto j = nlohmann::json::parse(ta::to_json_line(sample()));
    j[key] = value;
    try {
      ta::from_json_line(j.dump(), "f:7");
    } catch (const taihu::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const char* key : {"seed", "trial", "repeats", "threads"}) {
    for (const nlohmann::json& v : {nlohmann::json(5.55e-06), nlohmann::json(1e300), nlohmann::json("7"), nlohmann::json(true)}) {
      const std::string e = error_for(key, v);
      EXPECT_NE(e.find(std::string("f:7: '") + key + "' must be an integer"), std::string::npos) << key << " = " << v.dump() << ": " << e;
    }
  }
  EXPECT_NE(error_for("seed", -1).find("'seed' must be an integer"), std::string::npos);
  EXPECT_NE(error_for("threads", std::int64_t{1} << 32).find("'threads' must be an integer"), std::string::npos);
  EXPECT_NE(error_for("trial", 3000000000u).find("'trial' must be an integer"), std::string::npos);
  auto j = nlohmann::json::parse(ta::to_json_line(sample()));
  j["seed"] = std::uint64_t{18446744073709551615u};
  j["trial"] = -3;
  const ta::Record r = ta::from_json_line(j.dump(), "x");
  EXPECT_EQ(r.seed, 18446744073709551615u);
  EXPECT_EQ(r.trial, -3);
}

// A key's best is its last confirmed record (the confirmation re-measures the previous
// pick beside its own candidates), not the lowest search median, which reads low.
TEST(AutotuneRecords, BestPrefersTheLastConfirmation) {
  ta::Record lucky = sample(), first = sample(), second = sample(), later_search = sample();
  lucky.median_s = 0.8e-4;  // a search block's median: the luckiest of many draws
  first.stat = second.stat = "confirmed";
  first.median_s = 1.0e-4;
  second.median_s = 1.1e-4;
  later_search.median_s = 0.7e-4;
  const auto best = ta::best_records({lucky, first, second, later_search});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].stat, "confirmed");
  EXPECT_DOUBLE_EQ(best[0].median_s, 1.1e-4);
  EXPECT_DOUBLE_EQ(ta::best_records({lucky, later_search})[0].median_s, 0.7e-4);  // no confirmation: fastest search
}

TEST(AutotuneRecords, ResumeSkipsLoggedPoints) {
  ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/gemm.tdsl"), ta::parse_shape("M=64,N=64,K=64"));
  ta::Space s(p);
  const std::string log = temp_path("resume");
  std::remove(log.c_str());
  ta::TuneOptions o;
  o.log_path = log;
  o.max_trials = 12;
  o.budget_s = 0;
  auto fake = [](const ta::Point& pt) {
    double t = 1e-3;
    for (int v : pt) t += 1e-4 * v;
    return t;
  };
  auto first = ta::tune(p, s, o, fake);
  ASSERT_EQ(ta::load_log(log).size(), 12u);
  auto second = ta::tune(p, s, o, fake);
  EXPECT_EQ(second.resumed, 12);
  EXPECT_EQ(second.trials, 12);
  for (const auto& pt : second.measured)
    EXPECT_EQ(std::find(first.measured.begin(), first.measured.end(), pt), first.measured.end()) << "re-measured a logged point";
  EXPECT_LE(second.best_s, first.best_s);
  EXPECT_EQ(ta::load_log(log).size(), 24u);
  std::remove(log.c_str());
}

// Transfer: a shape with no records of its own starts from the best schedule of the
// nearest tuned shape, carried over value by value (nearest numeric values where the
// label is not offered for this shape); a shape with records of its own does not.
TEST(AutotuneRecords, NewShapeStartsFromTheNearestShapesBest) {
  const std::string spec = std::string(TAIHU_DSL_DIR) + "/gemm.tdsl";
  ta::Problem near(ta::parse_spec_file(spec), ta::parse_shape("M=96,N=64,K=64"));
  ta::Problem far(ta::parse_spec_file(spec), ta::parse_shape("M=512,N=512,K=512"));
  ta::Problem fresh(ta::parse_spec_file(spec), ta::parse_shape("M=128,N=64,K=64"));
  ta::Space near_space(near), far_space(far), space(fresh);
  const std::string log = temp_path("transfer");
  std::remove(log.c_str());
  ta::TuneOptions o;
  o.log_path = log;
  o.max_trials = 6;
  o.budget_s = 0;
  // a fake whose best point in each of the tuned shapes is a different template
  auto tuned_best = [&](const ta::Problem& p, const ta::Space& sp, std::size_t which) {
    const ta::Point want = sp.templates().at(which);
    return ta::tune(p, sp, o, [want](const ta::Point& pt) { return pt == want ? 1e-3 : 2e-3; }).best;
  };
  const ta::Point near_best = tuned_best(near, near_space, 1), far_best = tuned_best(far, far_space, 2);
  ASSERT_FALSE(near_best.empty());
  const ta::Point carried = space.nearest_point(near_space.to_map(near_best));
  ASSERT_TRUE(space.valid(carried)) << space.why_invalid(carried);
  EXPECT_EQ(space.describe(carried), near_space.describe(near_best));  // (every label exists at M=128)
  o.max_trials = 3;
  auto r = ta::tune(fresh, space, o, [](const ta::Point&) { return 1e-3; });
  ASSERT_GE(r.measured.size(), 2u);
  // the carried-over ones first, nearest first (a cost model trained on the other
  // shapes' records ranks what follows, so the default point is not measured)
  EXPECT_EQ(r.measured[0], carried) << space.describe(r.measured[0]);
  const ta::Point far_carried = space.nearest_point(far_space.to_map(far_best));
  if (far_carried != carried) {
    EXPECT_EQ(r.measured[1], far_carried);
  }
  // resumed (the shape has records now): no seeding, the search goes on from its log
  auto again = ta::tune(fresh, space, o, [](const ta::Point&) { return 1e-3; });
  EXPECT_EQ(std::find(again.measured.begin(), again.measured.end(), carried), again.measured.end());
  std::remove(log.c_str());
}

TEST(AutotuneRecords, DnnConvLineMatchesConvDescFormat) {
  ta::Record r = sample();
  r.op = "conv2d";
  r.shape = "N=1,C=64,H=56,W=56,KO=64,R=3,S=3,P=1";
  r.schedule = {{"algorithm", "im2col"}};
  auto j = nlohmann::json::parse(ta::dnn_conv_line(r));
  EXPECT_EQ(j["op"], "conv2d");
  EXPECT_EQ(j["key"], "mb1ic64ih56oc64oh56kh3ph1");
  EXPECT_EQ(j["algo"], "explicit_gemm");
  EXPECT_EQ(j["dir"], "forward");
  EXPECT_EQ(j["isa"], "avx2");
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["format"], 2);  // dnn's writer: entry names
  r.shape = "N=2,C=3,H=10,W=12,KO=4,R=3,S=1,P=0";
  r.schedule = {{"algorithm", "direct"}};
  j = nlohmann::json::parse(ta::dnn_conv_line(r));
  EXPECT_EQ(j["key"], "mb2ic3ih10iw12oc4oh8ow12kh3kw1");
  EXPECT_EQ(j["algo"], "direct");
  // A direct loop nest on a 1x1 layer: dnn's pointwise entry.
  r.shape = "N=1,C=16,H=8,W=8,KO=8,R=1,S=1,P=0";
  EXPECT_EQ(nlohmann::json::parse(ta::dnn_conv_line(r))["algo"], "pointwise");
  r.op = "gemm";
  EXPECT_EQ(ta::dnn_conv_line(r), "");
}
