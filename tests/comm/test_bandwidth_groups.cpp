// Supernodes from a measured bandwidth matrix (cluster_by_bandwidth) on synthetic
// matrices generated from a known grouping plus noise, and the cache lines that keep a
// grouping per set of hosts. No MPI launch needed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "taihu/arch/error.hpp"
#include "taihu/comm/bandwidth_groups.hpp"
#include "taihu/comm/calibration.hpp"

namespace tc = taihu::comm;

namespace {

// n x n matrix: `inside` between nodes of one group, `between` otherwise, each entry
// (both directions independently) scaled by a uniform factor in [1 - noise, 1 + noise].
std::vector<double> synthetic(const std::vector<int>& group, double inside, double between, double noise,
                              unsigned seed) {
  const int n = static_cast<int>(group.size());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<double> m(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) m[static_cast<std::size_t>(i) * n + j] = (group[i] == group[j] ? inside : between) * jitter(rng);
  return m;
}

// Relabels groups in order of first appearance, as cluster_by_bandwidth numbers them.
std::vector<int> canonical(const std::vector<int>& group) {
  std::vector<int> id(group.size() + 64, -1), out;
  int next = 0;
  for (int g : group) {
    if (id[g] < 0) id[g] = next++;
    out.push_back(id[g]);
  }
  return out;
}

}  // namespace

TEST(CommBandwidthGroups, TwoSupernodesOfFourInAnyRankOrder) {
  // The namespace cluster: 61 MB/s inside a group (8 hosts on 2 cores), 12 MB/s across;
  // hosts dealt round-robin over the groups, so groups are not runs of consecutive nodes.
  const std::vector<int> truth = {0, 1, 0, 1, 0, 1, 0, 1};
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto g = tc::cluster_by_bandwidth(synthetic(truth, 61e6, 12e6, 0.3, seed), 8);
    ASSERT_EQ(g.groups, 2) << g.reason;
    EXPECT_EQ(g.group_of, canonical(truth));
    EXPECT_GT(g.fast_bytes_per_s, 61e6 * 0.7 - 1);
    EXPECT_LT(g.slow_bytes_per_s, 12e6 * 1.3 + 1);
    EXPECT_NE(g.reason.find("2 groups of 4"), std::string::npos) << g.reason;
  }
}

TEST(CommBandwidthGroups, ThreeGroupsOfThreeAndFourGroupsOfTwo) {
  const std::vector<int> three = {2, 0, 1, 1, 2, 0, 0, 1, 2};
  const auto g3 = tc::cluster_by_bandwidth(synthetic(three, 10e9, 1e9, 0.2, 7), 9);
  EXPECT_EQ(g3.groups, 3) << g3.reason;
  EXPECT_EQ(g3.group_of, canonical(three));
  const std::vector<int> four = {0, 0, 1, 1, 2, 2, 3, 3};
  const auto g4 = tc::cluster_by_bandwidth(synthetic(four, 10e9, 2e9, 0.1, 3), 8);
  EXPECT_EQ(g4.groups, 4) << g4.reason;
  EXPECT_EQ(g4.group_of, canonical(four));
}

TEST(CommBandwidthGroups, UniformNetworkIsFlat) {
  const std::vector<int> one(8, 0);
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto g = tc::cluster_by_bandwidth(synthetic(one, 1e9, 1e9, 0.3, seed), 8);
    EXPECT_EQ(g.groups, 1);
    EXPECT_EQ(g.group_of, std::vector<int>(8, 0));
    EXPECT_NE(g.reason.find("no gap"), std::string::npos) << g.reason;
  }
}

TEST(CommBandwidthGroups, OneDisturbedPairIsNotASupernode) {
  // A uniform network where one measurement was slowed 10x (a scheduling stall): the
  // fast links still join every node, so the result stays flat.
  std::vector<double> m = synthetic(std::vector<int>(6, 0), 1e9, 1e9, 0.05, 5);
  m[1 * 6 + 4] = m[4 * 6 + 1] = 1e8;
  const auto g = tc::cluster_by_bandwidth(m, 6);
  EXPECT_EQ(g.groups, 1);
  EXPECT_NE(g.reason.find("join every node"), std::string::npos) << g.reason;
  // Two groups of 3 where one pair inside a group measured slow: the groups are still
  // chained by fast links but are not cliques, so they are not trusted.
  std::vector<double> two = synthetic({0, 0, 0, 1, 1, 1}, 1e9, 1e8, 0.05, 6);
  two[0 * 6 + 1] = two[1 * 6 + 0] = 1e8;
  const auto g2 = tc::cluster_by_bandwidth(two, 6);
  EXPECT_EQ(g2.groups, 1);
  EXPECT_NE(g2.reason.find("cliques"), std::string::npos) << g2.reason;
}

TEST(CommBandwidthGroups, AGapInsideOneTiersNoiseIsSkipped) {
  // One pair inside a group measured 5x below the others (but still 3x above the links
  // between groups): the widest gap splits it off, which makes no valid partition, so
  // the next gap - the real one - is used.
  const std::vector<int> truth = {0, 1, 0, 1, 0, 1, 0, 1};
  std::vector<double> m = synthetic(truth, 1.5e9, 1e8, 0.02, 4);
  m[0 * 8 + 2] = m[2 * 8 + 0] = 3e8;
  const auto g = tc::cluster_by_bandwidth(m, 8);
  EXPECT_EQ(g.groups, 2) << g.reason;
  EXPECT_EQ(g.group_of, canonical(truth));
}

TEST(CommBandwidthGroups, UnequalGroupsAreFlat) {
  const std::vector<int> truth = {0, 0, 0, 0, 0, 1, 1, 1};
  const auto g = tc::cluster_by_bandwidth(synthetic(truth, 1e9, 1e8, 0.1, 9), 8);
  EXPECT_EQ(g.groups, 1);
  EXPECT_NE(g.reason.find("different sizes"), std::string::npos) << g.reason;
}

TEST(CommBandwidthGroups, PairUsesTheSlowerDirection) {
  // Fast one way, slow the other between the groups: the pair counts as slow.
  const std::vector<int> truth = {0, 0, 1, 1};
  std::vector<double> m = synthetic(truth, 1e9, 1e8, 0.0, 1);
  for (int i : {0, 1})
    for (int j : {2, 3}) m[static_cast<std::size_t>(i) * 4 + j] = 1e9;
  const auto g = tc::cluster_by_bandwidth(m, 4);
  EXPECT_EQ(g.groups, 2) << g.reason;
  EXPECT_EQ(g.group_of, (std::vector<int>{0, 0, 1, 1}));
}

TEST(CommBandwidthGroups, BadInputs) {
  EXPECT_THROW(tc::cluster_by_bandwidth(std::vector<double>(15, 1.0), 4), taihu::Error);
  EXPECT_EQ(tc::cluster_by_bandwidth(std::vector<double>(9, 1.0), 3).groups, 1);  // < 4 nodes
  std::vector<double> m = synthetic({0, 0, 1, 1}, 1e9, 1e8, 0.0, 1);
  m[1] = 0;  // a pair that was never measured
  const auto g = tc::cluster_by_bandwidth(m, 4);
  EXPECT_EQ(g.groups, 1);
  EXPECT_NE(g.reason.find("no valid bandwidth"), std::string::npos) << g.reason;
}

TEST(CommBandwidthGroups, CacheLinesRoundTripBesideCalibration) {
  const auto dir = std::filesystem::temp_directory_path() / ("taihu-groups-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cache.txt").string();
  tc::CostParams p;
  tc::store_calibration(path, "hostA/p8/n8x4", p);
  const std::string key = tc::bandwidth_groups_key({"h0", "h1", "h2", "h3"});
  EXPECT_FALSE(tc::load_bandwidth_groups(path, key, 4).has_value());
  tc::store_bandwidth_groups(path, key, {0, 1, 0, 1});
  EXPECT_EQ(tc::load_bandwidth_groups(path, key, 4), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_TRUE(tc::load_calibration(path, "hostA/p8/n8x4").has_value());  // untouched
  // Another set of hosts is another key.
  EXPECT_FALSE(tc::load_bandwidth_groups(path, tc::bandwidth_groups_key({"h0", "h1", "h2", "h4"}), 4).has_value());
  // A damaged line names file:line:column.
  {
    std::ofstream out(path, std::ios::app);
    out << "groups:x,y,z,w 0 9 0 1\n";
  }
  try {
    tc::load_bandwidth_groups(path, "groups:x,y,z,w", 4);
    ADD_FAILURE() << "no error for a bad group index";
  } catch (const taihu::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":4:"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}
