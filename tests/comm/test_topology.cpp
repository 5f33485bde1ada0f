// Topology parsing (env string and file syntax, with their error messages) and the rank
// layout built from physical nodes + user tiers. No MPI launch needed.
#include <gtest/gtest.h>

#include "taihu/arch/error.hpp"
#include "taihu/comm/topology.hpp"
#include "taihu/comm/types.hpp"

namespace tc = taihu::comm;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const taihu::Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

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
