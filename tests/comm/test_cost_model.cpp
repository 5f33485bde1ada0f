// The alpha-beta-gamma cost model: closed forms on hand-computed cases and the choices
// it must make at the extremes (latency-bound tiny messages, bandwidth-bound large).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "taihu/arch/error.hpp"
#include "taihu/comm/calibration.hpp"
#include "taihu/comm/cost_model.hpp"

namespace tc = taihu::comm;

TEST(CommCostModel, ClosedFormsMatchHandComputation) {
  tc::CostParams p;
  p.gamma = 1e-10;
  const tc::CostModel m(p);
  const tc::LinkCost link{1e-6, 1e-9};
  // p = 4, n = 1 MB: rd = 2 (a + n b + n g)
  EXPECT_NEAR(m.recursive_doubling(4, 1e6, link), 2 * (1e-6 + 1e-3 + 1e-4), 1e-12);
  // Rabenseifner p = 4: 4a + 2*(3/4) n b + (3/4) n g
  EXPECT_NEAR(m.rabenseifner(4, 1e6, link), 4e-6 + 1.5e-3 + 0.75e-4, 1e-12);
  // p = 5 adds the fold: 2 (a + n b) + n g
  EXPECT_NEAR(m.rabenseifner(5, 1e6, link) - m.rabenseifner(4, 1e6, link), 2 * (1e-6 + 1e-3) + 1e-4, 1e-12);
  // Ring with one segment per block: 2(p-1)(a + n/p b) + (p-1) n/p g
  EXPECT_NEAR(m.ring(4, 1e6, link, 1 << 30), 6 * (1e-6 + 2.5e-4) + 3 * 2.5e5 * 1e-10, 1e-12);
  EXPECT_EQ(m.ring(1, 1e6, link, 1024), 0.0);
}

TEST(CommCostModel, ChoosesLatencyOptimalSmallAndBandwidthOptimalLarge) {
  const tc::CostModel m;  // defaults
  tc::RankLayout flat;
  flat.world_size = 8;
  flat.ranks_per_node = {1, 1, 1, 1, 1, 1, 1, 1};
  flat.node_of_rank = {0, 1, 2, 3, 4, 5, 6, 7};
  flat.local_rank.assign(8, 0);
  flat.tier_sizes = {};
  EXPECT_EQ(m.choose(flat, 4).algorithm, tc::Algorithm::recursive_doubling);
  const auto big = m.choose(flat, 64u << 20).algorithm;
  EXPECT_TRUE(big == tc::Algorithm::ring || big == tc::Algorithm::rabenseifner) << tc::to_string(big);
  // One node with several ranks: the shared window wins at large sizes.
  tc::RankLayout node;
  node.world_size = 2;
  node.ranks_per_node = {2};
  node.node_of_rank = {0, 0};
  node.local_rank = {0, 1};
  EXPECT_EQ(m.choose(node, 64u << 20).algorithm, tc::Algorithm::shared_memory);
}

TEST(CommCostModel, HierarchicalWinsAcrossSlowOversubscribedTier) {
  tc::CostParams p;
  p.tiers = {{2e-6, 1.0 / 10e9}, {5e-6, 4.0 / 10e9}};  // inner, outer (4x slower)
  const tc::CostModel m(p);
  tc::RankLayout l;
  const int nodes = 64, per = 4;
  l.world_size = nodes * per;
  l.ranks_per_node.assign(nodes, per);
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < per; ++k) {
      l.node_of_rank.push_back(n);
      l.local_rank.push_back(k);
    }
  l.tier_sizes = {16};
  const auto c = m.choose(l, 32u << 20);
  EXPECT_EQ(c.algorithm, tc::Algorithm::hierarchical);
  EXPECT_LT(m.hierarchical(l, 32e6), m.best_flat(l.world_size, 32e6, p.tiers[1]).predicted_seconds);
}

TEST(CommCalibration, CacheRoundTripsAtomicallyAndRejectsJunk) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("taihu_comm_cal_" + std::to_string(::getpid()));
  const std::string path = (dir / "sub" / "cal.txt").string();
  tc::CostParams p;
  p.gamma = 3e-10;
  p.tiers = {{4e-6, 2e-10}};
  tc::store_calibration(path, "hostA/p4/n2", p);
  tc::store_calibration(path, "hostB/p2/n1", tc::CostParams{});
  tc::store_calibration(path, "hostA/p4/n2", p);  // replaces, no duplicate line
  const auto back = tc::load_calibration(path, "hostA/p4/n2");
  ASSERT_TRUE(back.has_value());
  EXPECT_NEAR(back->gamma, 3e-10, 1e-15);
  ASSERT_EQ(back->tiers.size(), 1u);
  EXPECT_NEAR(back->tiers[0].alpha, 4e-6, 1e-12);
  EXPECT_FALSE(tc::load_calibration(path, "hostC/p2/n1").has_value());
  int lines = 0;
  std::ifstream in(path);
  for (std::string s; std::getline(in, s);) ++lines;
  EXPECT_EQ(lines, 3);  // header + two keys
  for (const auto& e : fs::directory_iterator(dir / "sub")) EXPECT_EQ(e.path().filename(), "cal.txt");  // no temp left
  EXPECT_THROW(tc::parse_calibration("1e-6 abc 1 1 1", "x"), taihu::Error);
  EXPECT_THROW(tc::parse_calibration("1e-6 1e-9", "x"), taihu::Error);
  fs::remove_all(dir);
}
