// Topology parsing (env string and file syntax, with their error messages) and the rank
// layout built from physical nodes + user tiers. No MPI launch needed.
#include <gtest/gtest.h>

#include "taihu/arch/error.hpp"
#include "taihu/comm/topology.hpp"
#include "taihu/comm/types.hpp"
#include "error_text.hpp"

namespace tc = taihu::comm;

using taihu_test::error_of;

TEST(CommTopology, ParsesEnvironmentString) {
  const auto spec = tc::parse_topology_string("node=2, supernode=4", "TAIHU_TOPOLOGY");
  ASSERT_EQ(spec.tiers.size(), 2u);
  EXPECT_EQ(spec.tiers[0].name, "node");
  EXPECT_EQ(spec.tiers[0].size, 2);
  EXPECT_EQ(spec.tiers[1].name, "supernode");
  EXPECT_EQ(spec.tiers[1].size, 4);
  // Outer tiers only: the node tier is detected.
  const auto outer = tc::parse_topology_string("rack=8", "X");
  ASSERT_EQ(outer.tiers.size(), 2u);
  EXPECT_FALSE(outer.user_node_size());
}

TEST(CommTopology, BadStringsNameTheProblem) {
  EXPECT_NE(error_of([] { tc::parse_topology_string("node=0", "TAIHU_TOPOLOGY"); }).find("TAIHU_TOPOLOGY: size in 'node=0'"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_string("node2", "TAIHU_TOPOLOGY"); }).find("has no '='"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_string("node=2,,x=1", "T"); }).find("empty item"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_string("node=2,node=3", "T"); }).find("given twice"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_string("node=99999999999", "T"); }).find("positive integer"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_algorithm("fast", "TAIHU_ALLREDUCE"); }).find("use one of: auto, ring"), std::string::npos);
  EXPECT_EQ(tc::parse_algorithm("rabenseifner", "x"), tc::Algorithm::rabenseifner);
}

TEST(CommTopology, ParsesFileWithParametersAndComments) {
  const auto spec = tc::parse_topology_file_text(
      "# TaihuLight-like\nnode 1 bandwidth=8 latency=1\n\nsupernode 256 bandwidth=8 latency=1.5 oversubscription=4  # four to one\n",
      "t.topo");
  ASSERT_EQ(spec.tiers.size(), 2u);
  EXPECT_EQ(spec.tiers[1].size, 256);
  EXPECT_DOUBLE_EQ(spec.tiers[1].oversubscription, 4.0);
  EXPECT_DOUBLE_EQ(spec.tiers[0].latency_us, 1.0);
}

TEST(CommTopology, FileErrorsNameLineAndColumn) {
  EXPECT_NE(error_of([] { tc::parse_topology_file_text("node 2\nsupernode 4 speed=3\n", "t.topo"); }).find("t.topo:2:13: unknown key 'speed'"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_file_text("node x\n", "a.topo"); }).find("a.topo:1:6: size 'x'"), std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_file_text("rack 2\nnode 2\n", "b"); }).find("b:2:1: 'node' must be the first tier"), std::string::npos);
  EXPECT_NE(error_of([] { tc::load_topology_file("/nonexistent/x.topo"); }).find("cannot be opened"), std::string::npos);
}

TEST(CommTopology, FakeNodesSplitAPhysicalNode) {
  // 5 ranks on one machine, node=2: nodes {0,1} {2,3} {4}.
  const auto spec = tc::parse_topology_string("node=2", "T");
  const auto layout = tc::make_layout({0, 0, 0, 0, 0}, spec);
  ASSERT_EQ(layout.nodes(), 3);
  EXPECT_EQ(layout.ranks_per_node, (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(layout.node_of_rank, (std::vector<int>{0, 0, 1, 1, 2}));
  EXPECT_EQ(layout.local_rank, (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_FALSE(layout.uniform_nodes());
}

TEST(CommTopology, PhysicalNodesAndCompleteTiers) {
  // Round-robin placement over 2 hosts: node index follows first appearance.
  const auto spec = tc::parse_topology_string("supernode=2", "T");
  const auto layout = tc::make_layout({0, 4, 0, 4, 8, 12, 8, 12}, spec);
  ASSERT_EQ(layout.nodes(), 4);
  EXPECT_EQ(layout.node_of_rank, (std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_TRUE(layout.uniform_nodes());
  EXPECT_TRUE(layout.complete_tiers());
  const auto odd = tc::make_layout({0, 1, 2}, spec);
  EXPECT_FALSE(odd.complete_tiers());
}

TEST(CommTopology, MembersPlaceRoundRobinRanksGroupByGroup) {
  // 8 hosts in 2 supernodes, ranks dealt round-robin over them (h0 h4 h1 h5 ...): the
  // layout numbers the nodes supernode by supernode, whatever the rank order.
  const auto spec = tc::parse_topology_file_text(
      "node 1\nsupernode 4 bandwidth=0.125 oversubscription=40\n"
      "members supernode h0 h1 h2 h3\nmembers supernode h4 h5 h6 h7\n",
      "c.topo");
  ASSERT_EQ(spec.tiers.size(), 2u);
  ASSERT_EQ(spec.tiers[1].members.size(), 2u);
  const std::vector<std::string> hosts = {"h0", "h4", "h1", "h5", "h2", "h6", "h3", "h7"};
  const auto layout = tc::make_layout({0, 1, 2, 3, 4, 5, 6, 7}, spec, hosts);
  ASSERT_EQ(layout.nodes(), 8);
  // Supernode 0 (h0..h3 = ranks 0,2,4,6) takes node indices 0..3.
  EXPECT_EQ(layout.node_of_rank, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_TRUE(layout.complete_tiers());
  // Without members the same ranks would be grouped by rank order.
  const auto plain = tc::make_layout({0, 1, 2, 3, 4, 5, 6, 7}, tc::parse_topology_string("supernode=4", "T"));
  EXPECT_EQ(plain.node_of_rank, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(CommTopology, MembersErrorsNameTheHostOrLine) {
  const auto spec = tc::parse_topology_file_text("supernode 2\nmembers supernode a b\nmembers supernode c d\n", "m.topo");
  EXPECT_NE(error_of([&] { tc::make_layout({0, 1, 2, 3}, spec, {"a", "b", "c", "x"}); }).find("host 'x' (rank 3) is in no 'members supernode' group"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tc::make_layout({0, 1, 2}, spec, {"a", "b", "c"}); }).find("groups hold different numbers of this job's nodes (2 and 1 in the group of c)"),
            std::string::npos);
  // Half of each group: the tier size follows the job.
  EXPECT_EQ(tc::make_layout({0, 1}, spec, {"c", "a"}).tier_sizes, (std::vector<int>{1}));
  EXPECT_NE(error_of([] { tc::parse_topology_file_text("members rack a b\n", "n.topo"); }).find("n.topo:1:9: 'rack' is not a tier"),
            std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_file_text("supernode 2\nmembers supernode a a\n", "d.topo"); }).find("d.topo:2:21: host 'a' is listed twice"),
            std::string::npos);
  EXPECT_NE(error_of([] { tc::parse_topology_file_text("supernode 2\nmembers supernode a b\nmembers supernode b c\n", "e.topo"); }).find("e.topo:3:19: host 'b' is already in a supernode group"),
            std::string::npos);
}
