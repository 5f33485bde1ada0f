// The allreduce simulator: closed forms without contention, the contention effect of an
// oversubscribed tier, large two-way exchanges across an uplink, parsing errors, and the
// PNG plot (read back with libpng).
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "taihu/arch/error.hpp"
#include "taihu/comm/simulator.hpp"
#include "taihu/comm/sim_plot.hpp"

namespace sim = taihu::comm::sim;

TEST(CommSimulator, SingleTierMatchesClosedForms) {
  const double alpha = 2e-6, bw = 5e9, gamma = 1e-10, n = 8e6;
  const sim::System s = sim::single_tier(16, alpha, 1.0 / bw, gamma, "flat");
  const double p = 16;
  EXPECT_NEAR(sim::predict(s, sim::SimAlgorithm::ring, n), 2 * (p - 1) * (alpha + n / p / bw) + (p - 1) * n / p * gamma, 1e-12);
  EXPECT_NEAR(sim::predict(s, sim::SimAlgorithm::recursive_doubling, n), 4 * (alpha + n / bw + n * gamma), 1e-12);
  // Rabenseifner: 2 log p alpha + 2 (p-1)/p n / bw + (p-1)/p n gamma
  EXPECT_NEAR(sim::predict(s, sim::SimAlgorithm::rabenseifner, n), 8 * alpha + 2 * 15.0 / 16 * n / bw + 15.0 / 16 * n * gamma, 1e-12);
}

TEST(CommSimulator, OversubscriptionIsWhatTheTopologyAwareAlgorithmAvoids) {
  const double n = 64.0 * 1024 * 1024;
  sim::System s = sim::taihulight(1024, 1);
  // Block placement: MPICH's Rabenseifner does its heavy exchanges between neighbouring
  // ranks, which are then inside one supernode, so it is already as good as the
  // topology-aware algorithm.
  EXPECT_NEAR(sim::predict(s, sim::SimAlgorithm::flat_default, n) / sim::predict(s, sim::SimAlgorithm::topology_aware, n), 1.0, 0.05);
  // Ranks dealt round-robin over the supernodes: those exchanges now cross the 4:1
  // oversubscribed links, which the topology-aware order avoids.
  s.placement = sim::Placement::round_robin;
  const double flat = sim::predict(s, sim::SimAlgorithm::flat_default, n);
  const double topo = sim::predict(s, sim::SimAlgorithm::topology_aware, n);
  EXPECT_GT(flat / topo, 1.5);
  // Without oversubscription the gap closes: contention, not the algorithm's volume.
  s.tiers[1].oversubscription = 1;
  s.tiers[1].latency = s.tiers[0].latency;
  EXPECT_NEAR(sim::predict(s, sim::SimAlgorithm::flat_default, n) / sim::predict(s, sim::SimAlgorithm::topology_aware, n), 1.0, 0.05);
  // Inside one supernode the tiers never matter.
  const sim::System one = sim::taihulight(256, 1);
  EXPECT_NEAR(sim::predict(one, sim::SimAlgorithm::flat_default, n), sim::predict(one, sim::SimAlgorithm::hierarchical, n), 1e-9);
}

TEST(CommSimulator, RanksPerNodeEqualsAnExplicitNodeTier) {
  // 4 ranks per node seen as ranks: a node tier of 4 and every tier above carrying 4x
  // the flows on the same links, i.e. 4x the oversubscription. Written out by hand:
  const sim::System explicit_tiers = sim::parse_system(
      "gamma=2.5e-10 tier=node,4,10e9,0.5e-6,1 tier=supernode,256,8e9,1e-6,4 tier=system,0,8e9,2e-6,16", 4096);
  const sim::System preset = sim::taihulight(1024, 4);
  for (auto alg : {sim::SimAlgorithm::ring, sim::SimAlgorithm::flat_default, sim::SimAlgorithm::hierarchical,
                   sim::SimAlgorithm::topology_aware})
    for (double n : {4096.0, 64.0 * 1024 * 1024})
      EXPECT_NEAR(sim::predict(preset, alg, n), sim::predict(explicit_tiers, alg, n), 1e-12) << sim::name(alg) << " " << n;
  // The same node count with 4 ranks sharing each link, ranks dealt round-robin over the
  // supernodes: the flat algorithm's heavy exchanges now queue on the node's link; the
  // hierarchical one first reduces inside the node, so each link still carries about
  // one vector each way.
  const double n = 64.0 * 1024 * 1024;
  sim::System one = sim::taihulight(1024, 1);
  one.placement = sim::Placement::round_robin;
  sim::System preset_rr = preset;
  preset_rr.placement = sim::Placement::round_robin;
  EXPECT_GT(sim::predict(preset_rr, sim::SimAlgorithm::flat_default, n), 2.0 * sim::predict(one, sim::SimAlgorithm::flat_default, n));
  EXPECT_LT(sim::predict(preset_rr, sim::SimAlgorithm::hierarchical, n), 1.5 * sim::predict(one, sim::SimAlgorithm::hierarchical, n));
  EXPECT_THROW(sim::parse_system("ranks_per_node=4 tier=a,0,1e9,1e-6,1", 8), taihu::Error);  // no node= link
  EXPECT_THROW(sim::parse_system("ranks_per_node=0 node=1e9,1e-6 tier=a,0,1e9,1e-6,1", 8), taihu::Error);
}

TEST(CommSimulator, TopologyAwareNeverLosesAndScalesTo65536) {
  for (double n : {4.0, 4096.0, 1048576.0}) {
    const sim::System s = sim::taihulight(16384);  // 65536 ranks
    const double t = sim::predict(s, sim::SimAlgorithm::topology_aware, n);
    EXPECT_GT(t, 0);
    EXPECT_LE(t, sim::predict(s, sim::SimAlgorithm::hierarchical, n) * (1 + 1e-12));
    EXPECT_LE(t, sim::predict(s, sim::SimAlgorithm::flat_default, n) * (1 + 1e-12));
  }
}

TEST(CommSimulator, ParseSystemAndErrors) {
  const sim::System s = sim::parse_system("gamma=2e-10 tier=rack,32,12.5e9,1.5e-6,1 tier=system,0,12.5e9,3e-6,3", 128);
  ASSERT_EQ(s.tiers.size(), 2u);
  EXPECT_EQ(s.tiers[0].group, 32);
  EXPECT_DOUBLE_EQ(s.tiers[1].oversubscription, 3.0);
  EXPECT_THROW(sim::parse_system("tier=rack,32,abc,1,1", 4), taihu::Error);
  EXPECT_THROW(sim::parse_system("tier=rack,32,1e9,1e-6,0.5", 4), taihu::Error);
  EXPECT_THROW(sim::parse_system("gamma=1e-10", 4), taihu::Error);
  EXPECT_THROW(sim::parse_system("speed=3 tier=a,0,1e9,1e-6,1", 4), taihu::Error);
}

TEST(CommSimulator, LargeTwoWayExchangesGetPartOfTheUplink) {
  // The namespace cluster's measured links: 4 hosts per group, one uplink per group
  // shared by its 4 hosts.
  const std::string links = "gamma=6.9e-11 tier=supernode,4,61.3e6,1.2e-4,1 tier=system,0,12.2e6,2.2e-4,4";
  const sim::System full = sim::parse_system(links, 8);
  const sim::System half = sim::parse_system(links + " exchange=0.5", 8);
  EXPECT_DOUBLE_EQ(full.exchange_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(half.exchange_efficiency, 0.5);
  const double n = 64.0 * 1024 * 1024;
  // Rabenseifner in topology order crosses the uplink in two steps (reduce-scatter and
  // allgather at distance 4), n/8 per host each, 4 hosts sharing 12.2 MB/s: at half the
  // uplink each of those steps takes its transfer time once more; nothing else changes.
  const double cross_step = n / 8 / (12.2e6 / 4);
  EXPECT_NEAR(sim::predict(half, sim::SimAlgorithm::rabenseifner, n) - sim::predict(full, sim::SimAlgorithm::rabenseifner, n),
              2 * cross_step, 1e-9);
  // Ring steps are one-way shifts, and the hierarchical algorithm's top exchange runs in
  // chunks within the eager limit: both keep the whole uplink.
  for (auto alg : {sim::SimAlgorithm::ring, sim::SimAlgorithm::hierarchical})
    EXPECT_DOUBLE_EQ(sim::predict(half, alg, n), sim::predict(full, alg, n)) << sim::name(alg);
  // Eager-size exchanges (64 KiB in all: 8 KiB per host across) and exchanges inside a
  // group (4 hosts) are not affected.
  EXPECT_DOUBLE_EQ(sim::predict(half, sim::SimAlgorithm::rabenseifner, 65536), sim::predict(full, sim::SimAlgorithm::rabenseifner, 65536));
  const sim::System one_group = sim::parse_system(links + " exchange=0.5", 4);
  EXPECT_DOUBLE_EQ(sim::predict(one_group, sim::SimAlgorithm::rabenseifner, n),
                   sim::predict(sim::parse_system(links, 4), sim::SimAlgorithm::rabenseifner, n));
  EXPECT_NE(sim::describe(half).find("0.5 of an uplink"), std::string::npos);
  EXPECT_THROW(sim::parse_system(links + " exchange=0", 8), taihu::Error);
  EXPECT_THROW(sim::parse_system(links + " exchange=1.5", 8), taihu::Error);
  EXPECT_THROW(sim::parse_system(links + " exchange=x", 8), taihu::Error);
}

TEST(CommSimulator, WritesAReadablePng) {
  namespace fs = std::filesystem;
  const std::string path = (fs::temp_directory_path() / ("taihu_sim_" + std::to_string(::getpid()) + ".png")).string();
  sim::Series a{"ring", {2, 4, 8}, {1e-3, 2e-3, 3e-3}, 0xff0000};
  sim::Series b{"hierarchical", {2, 4, 8}, {1e-3, 1.1e-3, 1.2e-3}, 0x0000ff};
  sim::write_loglog_png(path, "TEST", "NODES", "SECONDS", {a, b});
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  ASSERT_FALSE(setjmp(png_jmpbuf(png)));
  png_init_io(png, f);
  png_read_info(png, info);
  EXPECT_EQ(png_get_image_width(png, info), 960u);
  EXPECT_EQ(png_get_image_height(png, info), 640u);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
  fs::remove(path);
  EXPECT_THROW(sim::write_loglog_png("/nonexistent/dir/x.png", "T", "X", "Y", {a}), taihu::Error);
}
