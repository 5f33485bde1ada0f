// The network tiers the allreduce adapts to, and where each rank sits in them.
//
// Tiers are listed inner to outer. Tier 0 is always "node" (ranks sharing memory);
// each further tier groups `size` units of the tier below (e.g. supernode = 256 nodes).
// Sources, first match wins: an explicit string, TAIHU_TOPOLOGY ("node=2,supernode=4":
// node = ranks per node, every later tier = units of the tier below), the file named by
// TAIHU_TOPOLOGY_FILE, else detection (MPI_COMM_TYPE_SHARED for nodes, hwloc for cores).
// A node size given by the user splits the ranks of one physical machine into fake
// nodes, which is how the multi-tier logic is exercised on a single host.
//
// Topology file syntax (one tier per line, '#' starts a comment):
//   <tier-name> <size> [bandwidth=<GB/s>] [latency=<us>] [oversubscription=<x>]
// e.g. "node 1 bandwidth=8 latency=1" / "supernode 256 bandwidth=8 latency=1.5
// oversubscription=4". Errors name file:line:column.
// Across real hosts, which nodes form a group is given by hostname (each line one group
// of a tier declared above it; scripts/cluster writes these):
//   members supernode taihu-h0 taihu-h1 taihu-h2 taihu-h3
// Nodes are then ordered group by group, whatever the job's rank order (ranks dealt
// round-robin over the groups still get topology-ordered algorithms).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace taihu::comm {

struct Tier {
  std::string name;            // "node", "supernode", "rack", ...
  int size = 0;                // node: ranks per node (0 = detect); others: units below
  double bandwidth_gbs = 0;    // per link and direction; 0 = unknown (probe)
  double latency_us = 0;       // 0 = unknown (probe)
  double oversubscription = 1; // links leaving one group of this tier share 1/x bandwidth
  // Groups of this tier by the hostnames of their nodes ("members" lines); empty: groups
  // are runs of consecutive nodes in rank order.
  std::vector<std::vector<std::string>> members;
};

struct TopologySpec {
  std::vector<Tier> tiers;     // inner to outer; tiers[0].name == "node"
  std::string source;          // "TAIHU_TOPOLOGY", a file name, "detected", ...
  bool user_node_size() const { return !tiers.empty() && tiers[0].size > 0; }
};

// "node=2,supernode=4". Throws taihu::Error naming `what` and the offending item.
TopologySpec parse_topology_string(std::string_view text, std::string_view what);
// The file syntax above; errors name path:line:column.
TopologySpec parse_topology_file_text(std::string_view text, const std::string& path);
TopologySpec load_topology_file(const std::string& path);
// explicit_text if non-empty, else TAIHU_TOPOLOGY, else TAIHU_TOPOLOGY_FILE, else a
// spec with one detected "node" tier (size 0).
TopologySpec topology_from_environment(const std::string& explicit_text = {});

// Where every rank of a communicator sits: rank -> node index -> group index per tier.
// Node indices are ordered by (outer tiers..., node) so consecutive node indices share
// the fastest tiers; algorithms across nodes run over ranks in this order.
struct RankLayout {
  int world_size = 0;
  std::vector<int> node_of_rank;      // node index per rank
  std::vector<int> local_rank;        // index of the rank inside its node
  std::vector<int> ranks_per_node;    // per node
  std::vector<int> tier_sizes;        // sizes of tiers above node (units of tier below)
  int nodes() const { return static_cast<int>(ranks_per_node.size()); }
  bool uniform_nodes() const;         // every node has the same number of ranks
  // True when every tier above node has complete groups (node count = product of sizes
  // times a whole number of top-level groups), so per-tier sub-communicators line up.
  bool complete_tiers() const;
};

// Builds the layout from each rank's physical-node id (ranks sharing memory have the
// same id, ids in first-appearance order) and the spec. A user node size splits each
// physical node's ranks into consecutive fake nodes of that size. When a tier lists
// members, `host_of_rank` (each rank's hostname) places every node in its group and
// nodes are numbered group by group (outer tiers first), keeping first-appearance order
// inside a group; a host in no group, or a group whose node count is not the tier's
// size, is an error naming it.
RankLayout make_layout(const std::vector<int>& physical_node_of_rank, const TopologySpec& spec,
                       const std::vector<std::string>& host_of_rank = {});

std::string describe(const RankLayout& layout);

}  // namespace taihu::comm
