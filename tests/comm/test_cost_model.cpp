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

namespace {
// n nodes x per ranks, groups of `group` nodes (one tier above node).
tc::RankLayout grouped_layout(int nodes, int per, int group) {
  tc::RankLayout l;
  l.world_size = nodes * per;
  l.ranks_per_node.assign(nodes, per);
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < per; ++k) {
      l.node_of_rank.push_back(n);
      l.local_rank.push_back(k);
    }
  l.tier_sizes = {group};
  return l;
}
}  // namespace

TEST(CommCostModel, TopologyOrderedStepsArePricedOnTheTierTheyCross) {
  // The namespace cluster: 8 hosts x 1 rank, 2 groups of 4; a lone flow gets 160 MB/s
  // inside a group and 16 MB/s across (10x slower: the group's shared uplink), so the
  // 4 ranks of a group crossing in the same step share it (4 x beta1).
  tc::CostParams p;
  p.gamma = 7e-11;
  const double a = 6e-4, b0 = 6.25e-9, b1 = 6.25e-8;
  p.tiers = {{a, b0}, {a, b1}};
  const tc::CostModel m(p);
  const auto l = grouped_layout(8, 1, 4);
  EXPECT_EQ(m.step_link(l, 1).sharing, 1.0);
  EXPECT_EQ(m.step_link(l, 2).link.beta, b0);
  EXPECT_EQ(m.step_link(l, 4).link.beta, b1);
  EXPECT_EQ(m.step_link(l, 4).sharing, 4.0);
  const double n = 1 << 20;
  // distances 1, 2 inside the group, 4 across
  EXPECT_NEAR(m.recursive_doubling_in_order(l, n), 3 * a + n * (2 * b0 + 4 * b1) + 3 * n * p.gamma, 1e-12);
  EXPECT_NEAR(m.rabenseifner_in_order(l, n),
              6 * a + 2 * (n / 2 * b0 + n / 4 * b0 + n / 8 * 4 * b1) + 7.0 / 8 * n * p.gamma, 1e-12);
  // The same links without a shared uplink (across only 1.5x slower): no sharing.
  tc::CostParams q = p;
  q.tiers[1].beta = 1.5 * b0;
  EXPECT_EQ(tc::CostModel(q).step_link(l, 4).sharing, 1.0);
  // Two ranks per node: distance 1 stays in the node, 2 and 4 cross between nodes with
  // the node's 2 ranks on its link, 8 crosses the uplink with the group's 8 ranks.
  const auto l2 = grouped_layout(8, 2, 4);
  EXPECT_EQ(m.step_link(l2, 1).link.alpha, p.node_p2p.alpha);
  EXPECT_EQ(m.step_link(l2, 2).sharing, 2.0);
  EXPECT_EQ(m.step_link(l2, 8).sharing, 8.0);
}

TEST(CommCostModel, ChoosesPerSizeAcrossTwoGroupsWithASharedUplink) {
  tc::CostParams p;
  p.gamma = 7e-11;
  p.tiers = {{6e-4, 6.25e-9}, {6e-4, 6.25e-8}};
  const tc::CostModel m(p);
  const auto l = grouped_layout(8, 1, 4);
  // Latency-bound: fewest steps.
  EXPECT_EQ(m.choose(l, 4).algorithm, tc::Algorithm::recursive_doubling);
  // From 256 KiB: hierarchical, its top exchange pipelined in chunks of >= 64 KiB that
  // keep the uplink busy while the group's own halving/doubling phases run (Rabenseifner
  // in topology order moves the same bytes over the uplink, but not overlapped).
  const auto mid = m.choose(l, 256 << 10);
  EXPECT_EQ(mid.algorithm, tc::Algorithm::hierarchical);
  EXPECT_GE(mid.pipeline_bytes, 64u << 10);
  EXPECT_LT(mid.pipeline_bytes, 256u << 10);  // >= 2 chunks
  EXPECT_LT(mid.predicted_seconds, m.rabenseifner_in_order(l, 256 << 10));
  // The flat ring sends 1.75x the vector over each uplink. The chunks keep each rank's
  // message across the uplink within Open MPI's TCP eager limit (64 KiB with the header:
  // 32 KiB per rank, chunks of 128 KiB over the group of 4).
  const auto big = m.choose(l, 64u << 20);
  EXPECT_EQ(big.algorithm, tc::Algorithm::hierarchical);
  EXPECT_EQ(big.pipeline_bytes, 128u << 10);
  EXPECT_LT(m.hierarchical(l, 64.0 * (1 << 20)), m.rabenseifner_in_order(l, 64.0 * (1 << 20)));
  EXPECT_LT(m.hierarchical(l, 64.0 * (1 << 20)),
            m.ring(8, 64.0 * (1 << 20), p.tiers[1], m.ring_segment(8, 64.0 * (1 << 20), p.tiers[1])));
}

TEST(CommCostModel, PipelinedChunksSendTopMessagesBelowTheEagerLimit) {
  tc::CostParams p;  // the namespace cluster's shape: 1 Gbit/s hosts, 100 Mbit/s uplink
  p.gamma = 7e-11;
  p.tiers = {{6e-4, 6.25e-9}, {6e-4, 6.25e-8}};
  const auto l = grouped_layout(8, 1, 4);
  for (const std::size_t limit : {std::size_t{65536}, std::size_t{32768} + 64, std::size_t{1} << 20}) {
    p.eager_limit = limit;
    const tc::CostModel m(p);
    for (const std::size_t mib : {1, 4, 16, 64}) {
      const double n = static_cast<double>(mib << 20);
      const tc::HierarchicalPlan plan = m.hierarchical_plan(l, n);
      ASSERT_GT(plan.pipeline_bytes, 0u) << mib << " MiB, limit " << limit;
      // Each rank of the group of 4 sends a quarter of a chunk across the uplink.
      const std::size_t per_rank = (plan.pipeline_bytes + 3) / 4;
      EXPECT_LE(per_rank, tc::eager_payload(limit)) << mib << " MiB, limit " << limit;
      EXPECT_GE(plan.pipeline_bytes, static_cast<std::size_t>(tc::kMinPipelineChunk));
      // Only the eager restriction makes chunks this small: the model alone (a rendezvous
      // priced as 2 extra alpha) would take fewer, larger chunks at 4 MiB and up.
      if (limit == 65536 && mib >= 4) {
        EXPECT_LE(plan.pipeline_bytes, 128u << 10) << mib << " MiB";
      }
      if (limit == std::size_t{1} << 20 && mib >= 4) {
        EXPECT_GT(plan.pipeline_bytes, 128u << 10) << mib << " MiB";
      }
    }
  }
  // A limit no chunk of >= kMinPipelineChunk fits: the cheapest chunks, whatever their size.
  p.eager_limit = 4096;
  const tc::HierarchicalPlan plan = tc::CostModel(p).hierarchical_plan(l, 4.0 * (1 << 20));
  EXPECT_GE(plan.pipeline_bytes, static_cast<std::size_t>(tc::kMinPipelineChunk));
}

TEST(CommCostModel, GroupPhasesHalveInPowerOfTwoGroupsAndRingOtherwise) {
  tc::CostParams p;
  p.gamma = 1e-10;
  const tc::CostModel m(p);
  const tc::LinkCost link{1e-3, 1e-9};
  const double n = 1 << 20;
  // 4 ranks: 2 halving + 2 doubling steps; 3/4 of the block each way, shared by 2 flows.
  EXPECT_NEAR(m.group_phases(4, n, link, 2), 4 * 1e-3 + 2 * 0.75 * n * 1e-9 * 2 + 0.75 * n * 1e-10, 1e-12);
  // 3 ranks: the ring's 2 x 2 steps.
  EXPECT_NEAR(m.group_phases(3, n, link, 1), 4 * 1e-3 + 2 * (2.0 / 3) * n * 1e-9 + (2.0 / 3) * n * 1e-10, 1e-12);
  // 8 ranks: 6 steps (the ring would take 14).
  EXPECT_NEAR(m.group_phases(8, 0, link, 1), 6 * 1e-3, 1e-12);
  EXPECT_EQ(m.group_phases(1, n, link, 1), 0.0);
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

TEST(CommCalibration, VersionedLineCarriesTheSmallMessageTable) {
  tc::CostParams p;
  p.tiers = {{3e-4, 8e-8}};
  p.small = {{4, tc::Algorithm::mpi, 2e-3}, {4096, tc::Algorithm::recursive_doubling, 1.5e-3},
             {65536, tc::Algorithm::hierarchical, 6e-3}};
  const std::string text = tc::format_calibration(p);
  EXPECT_EQ(text.rfind(std::string(tc::kCalibrationVersion) + " ", 0), 0u) << text;
  const tc::CostParams q = tc::parse_calibration(text, "t");
  ASSERT_EQ(q.small.size(), 3u);
  EXPECT_EQ(q.small[1].bytes, 4096u);
  EXPECT_EQ(q.small[1].algorithm, tc::Algorithm::recursive_doubling);
  EXPECT_NEAR(q.small[2].seconds, 6e-3, 1e-9);
  ASSERT_EQ(q.tiers.size(), 1u);
  EXPECT_NEAR(q.tiers[0].beta, 8e-8, 1e-13);
}

TEST(CommCalibration, OldFormatAndBadTablesAreRejectedWithTheReason) {
  auto message = [](const std::string& line) {
    try {
      tc::parse_calibration(line, "cal.txt:2:9");
    } catch (const taihu::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // The format before the small-message table: five numbers, no version.
  EXPECT_NE(message("1e-6 3.6e-10 4e-7 1.8e-10 1.6e-10").find("old format"), std::string::npos);
  EXPECT_NE(message("1e-6 3.6e-10 4e-7 1.8e-10 1.6e-10").find("cal.txt:2:9"), std::string::npos);
  EXPECT_NE(message("v9 1e-6 3.6e-10 4e-7 1.8e-10 1.6e-10").find("expected the version"), std::string::npos);
  const std::string base = "v2 1e-6 3.6e-10 4e-7 1.8e-10 1.6e-10";
  EXPECT_EQ(message(base), "accepted");
  EXPECT_EQ(message(base + " small 4:mpi:1e-3 64:rabenseifner:2e-3"), "accepted");
  EXPECT_NE(message(base + " small 64:mpi:1e-3 4:mpi:1e-3").find("ascend"), std::string::npos);
  EXPECT_NE(message(base + " small 4:bogus:1e-3").find("bogus"), std::string::npos);
  EXPECT_NE(message(base + " small 4:auto:1e-3").find("not auto"), std::string::npos);
  EXPECT_NE(message(base + " small 4:mpi").find("<bytes>:<algorithm>:<seconds>"), std::string::npos);
  EXPECT_NE(message(base + " small 0:mpi:1e-3").find("bytes must be"), std::string::npos);
  EXPECT_NE(message(base + " small 1048576:mpi:1e-3").find("bytes must be"), std::string::npos);
  EXPECT_NE(message(base + " small 4:mpi:-1").find("bad calibration value"), std::string::npos);
}

TEST(CommCostModel, SmallSizesTakeTheMeasuredWinnerNearestInLog) {
  tc::RankLayout l = grouped_layout(8, 1, 4);
  tc::CostParams p;
  p.tiers = {{1e-4, 1e-9}, {1e-4, 1e-8}};
  const tc::CostModel model_only(p);
  p.small = {{4, tc::Algorithm::mpi, 1e-3}, {1024, tc::Algorithm::rabenseifner, 2e-3},
             {4096, tc::Algorithm::hierarchical, 3e-3}};
  const tc::CostModel m(p);
  EXPECT_EQ(m.choose(l, 0).algorithm, tc::Algorithm::mpi);
  EXPECT_EQ(m.choose(l, 4).algorithm, tc::Algorithm::mpi);
  EXPECT_EQ(m.choose(l, 60).algorithm, tc::Algorithm::mpi);            // log2 5.9: nearer 4 (2) than 1024 (10)
  EXPECT_EQ(m.choose(l, 64).algorithm, tc::Algorithm::rabenseifner);   // 6: a tie goes to the larger size
  EXPECT_EQ(m.choose(l, 1024).algorithm, tc::Algorithm::rabenseifner);
  EXPECT_EQ(m.choose(l, 3000).algorithm, tc::Algorithm::hierarchical);
  EXPECT_NEAR(m.choose(l, 4).predicted_seconds, 1e-3, 1e-12);
  // A measured hierarchical pick carries the model's pipeline plan.
  EXPECT_EQ(m.choose(l, 4096).pipeline_bytes, m.hierarchical_plan(l, 4096).pipeline_bytes);
  // Above the largest measured size the model decides alone, as without a table.
  for (std::size_t bytes : {4097ul, 1ul << 20, 64ul << 20}) {
    EXPECT_EQ(m.choose(l, bytes).algorithm, model_only.choose(l, bytes).algorithm) << bytes;
    EXPECT_EQ(m.measured(bytes), nullptr);
  }
}

TEST(CommCalibration, KeySeparatesRankOrders) {
  tc::RankLayout in_order = grouped_layout(4, 1, 2);
  tc::RankLayout dealt = in_order;
  dealt.node_of_rank = {0, 2, 1, 3};
  const std::string a = tc::calibration_key(in_order, "h"), b = tc::calibration_key(dealt, "h");
  EXPECT_EQ(a.find("/order"), std::string::npos) << a;
  EXPECT_NE(b.find("/order"), std::string::npos) << b;
  dealt.node_of_rank = {0, 3, 1, 2};
  EXPECT_NE(tc::calibration_key(dealt, "h"), b);
}
