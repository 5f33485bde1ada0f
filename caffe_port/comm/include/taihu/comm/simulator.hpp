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
#pragma once
#include <string>
#include <vector>

namespace taihu::comm::sim {

struct SimTier {
  std::string name;
  int group = 0;               // nodes (tier 0) or groups below per group; 0 = all
  double bandwidth = 0;        // bytes/s per node link in this tier, per direction
  double latency = 0;          // seconds per message crossing this tier
  double oversubscription = 1; // uplink capacity of a group = members*bw/oversub
};

struct System {
  std::string name;
  int nodes = 0;
  std::vector<SimTier> tiers;  // inner to outer; the outermost spans the whole system
  double gamma = 0;            // seconds per byte reduced on a node
  int ranks_per_node = 1;      // informational
};

enum class SimAlgorithm { ring, recursive_doubling, rabenseifner, hierarchical, flat_default };

struct Prediction {
  SimAlgorithm algorithm;
  double seconds = 0;
};

// Predicted time of an allreduce of `bytes` over all nodes of `system`.
double predict(const System& system, SimAlgorithm algorithm, double bytes);
const char* name(SimAlgorithm algorithm);

// TaihuLight-like preset with `nodes` nodes (supernodes of 256); see simulator.cpp.
System taihulight(int nodes);
// This machine's node tier from calibration parameters (alpha s, beta s/byte, gamma).
System single_tier(int nodes, double alpha, double beta, double gamma, const std::string& name);
// Text description: "nodes=1024 gamma=2e-10 tier=supernode,256,8e9,1e-6,1 tier=..."
System parse_system(const std::string& text);

}  // namespace taihu::comm::sim
