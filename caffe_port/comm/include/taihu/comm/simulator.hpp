// An alpha-beta network model with link contention, for predicting allreduce times on
// machines we do not have (used by the taihu-allreduce-sim tool).
//
// A system is `nodes` nodes in nested tiers: tier 0 links connect nodes inside a group
// of tiers[0].group nodes (e.g. a supernode), tier 1 connects groups, ... Each tier has
// a per-node link bandwidth and latency; a group's links to the tier above carry at
// most group_size * bandwidth / oversubscription in total. Every algorithm step is a
// set of simultaneous flows (src, dst, bytes); a flow that leaves its group at tier t
// shares that group's uplink capacity with every other flow leaving it, so a step takes
// max over flows of latency(t) + bytes / min(link bandwidth, fair share). Reductions
// cost gamma per byte. Steps are evaluated in closed form per symmetric step (all
// flows of a step are alike), which keeps 65536 nodes instant.
//
// A node may run several ranks (TaihuLight: one MPI process per core group, 4 per
// node). They share the node's network link: predict() works on ranks, with an
// innermost "node" tier (rank-to-rank copies inside the node) and every tier above it
// oversubscribed ranks_per_node times more, so a node's flows split its injection
// bandwidth as they do on the machine.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace taihu::comm::sim {

struct SimTier {
  std::string name;
  int group = 0;               // units of the tier below per group (tier 0: nodes); the
                               // last tier's group is implied (the whole system)
  double bandwidth = 0;        // bytes/s per flow on links of this tier, per direction
  double latency = 0;          // seconds per message whose endpoints meet at this tier
  double oversubscription = 1; // links leaving a group of the tier below: capacity =
                               // nodes in that group * bandwidth / oversubscription
};

enum class Placement { block, round_robin };

struct System {
  std::string name;
  int nodes = 0;
  // Inner to outer. tiers[0]: links between nodes inside a group of tiers[0].group
  // nodes; tiers[1]: links between those groups inside a group of tiers[1].group
  // groups; ...; the last tier joins everything.
  std::vector<SimTier> tiers;
  double gamma = 0;            // seconds per byte reduced on a node
  // How the flat (topology-unaware) algorithms' ranks are laid onto nodes; the
  // hierarchical algorithm orders ranks by topology itself.
  Placement placement = Placement::block;
  int ranks_per_node = 1;      // MPI processes per node, sharing its network link
  double node_bandwidth = 0;   // bytes/s between two ranks of one node (ranks_per_node > 1)
  double node_latency = 0;     // seconds per message between two ranks of one node
  // The MPI library's eager limit (bytes with header): the hierarchical pipelined top
  // exchange keeps each rank's message within it, as the library's cost model does.
  std::size_t eager_limit = 64 * 1024;
  // Share of a group's uplink capacity that two-way exchanges of rendezvous-size messages
  // (above the eager limit) get while they cross it in both directions at once (xor steps:
  // recursive doubling, Rabenseifner, an unpipelined top exchange). 1: full. Measured on
  // the namespace cluster: 4 pairs exchanging 8 MiB across one uplink get 0.76 of what
  // one-way flows get (mean of 5; MPI's rendezvous fragments and TCP acknowledgements of
  // each direction wait behind the other direction's queued data). Ring steps (one-way
  // shifts) and chunks within the eager limit keep the full capacity.
  double exchange_efficiency = 1;
};

// flat_default: MPICH's fixed rule over the job's rank placement. hierarchical: per-tier
// reduce-scatter / top allreduce / allgather in topology order. topology_aware: what
// taihu::comm runs - the best of hierarchical and the flat algorithms in topology
// order (halving with ascending distance), as its cost model picks.
enum class SimAlgorithm { ring, recursive_doubling, rabenseifner, flat_default, hierarchical, topology_aware };

struct Prediction {
  SimAlgorithm algorithm;
  double seconds = 0;
};

// Predicted time of an allreduce of `bytes` over all ranks of `system`.
double predict(const System& system, SimAlgorithm algorithm, double bytes);
const char* name(SimAlgorithm algorithm);

// TaihuLight-like preset with `nodes` nodes (supernodes of 256) and `ranks_per_node`
// MPI processes per node (4: one per SW26010 core group); see simulator.cpp.
System taihulight(int nodes, int ranks_per_node = 4);
// The same system seen by ranks: nodes * ranks_per_node units, a "node" tier inside
// each node, the tiers above oversubscribed ranks_per_node times more. Identity when
// ranks_per_node is 1.
System rank_level(const System& system);
// This machine's node tier from calibration parameters (alpha s, beta s/byte, gamma).
System single_tier(int nodes, double alpha, double beta, double gamma, const std::string& name);
// Text description, e.g. "gamma=3.3e-10 tier=supernode,256,8e9,1e-6,1 tier=system,0,8e9,2e-6,4"
// (tier=name,group,bandwidth B/s,latency s,oversubscription; placement=block|round_robin;
// ranks_per_node=N with node=bandwidth B/s,latency s for the links inside a node;
// exchange=F, 0 < F <= 1: System::exchange_efficiency).
// Throws taihu::Error naming the bad item.
System parse_system(const std::string& text, int nodes);
std::string describe(const System& system);

}  // namespace taihu::comm::sim
