// The alpha-beta-gamma cost model that chooses the algorithm and the ring segment size.
//   alpha: seconds per message (latency + software), beta: seconds per byte moved,
//   gamma: seconds per byte reduced. Each tier has its own (alpha, beta); the node tier
//   also has the shared-memory costs (sync = one node barrier, copy = seconds per byte
//   copied through the window while all local ranks do the same).
// Parameters come from calibration (a short probe, cached; see calibration.hpp) or the
// built-in defaults measured on the development machine. Small messages (up to
// kSmallCalibrationMax) are chosen by measurement instead where the probe timed them:
// the candidates, the MPI library's own MPI_Allreduce among them, at each power of 4.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "taihu/comm/eager_limit.hpp"
#include "taihu/comm/topology.hpp"
#include "taihu/comm/types.hpp"

namespace taihu::comm {

struct LinkCost {
  double alpha = 1e-6;      // s per message
  double beta = 3.6e-10;    // s per byte
};

// The winner of a small-message size measured by the probe (calibration.hpp): which
// algorithm ran fastest at `bytes` on this layout and its time (the slowest rank's median).
struct MeasuredChoice {
  std::size_t bytes = 0;
  Algorithm algorithm = Algorithm::mpi;
  double seconds = 0;
};

// The probe times the small-message candidates at 4, 16, 64, ... bytes up to this size.
inline constexpr std::size_t kSmallCalibrationMax = 64 * 1024;

struct CostParams {
  // Defaults: the development machine (2-core Zen 3 VM, OpenMPI 4.1 vader), 2 ranks,
  // measured by probe(); used when no calibration is cached and probing is off.
  LinkCost node_p2p{1.0e-6, 3.6e-10};       // MPI point-to-point inside a node
  double shm_sync = 4e-7;                   // one barrier of the node's ranks
  double shm_copy = 1.8e-10;                // s per byte through the shared window
  double gamma = 1.6e-10;                   // s per byte reduced (memory bound)
  std::vector<LinkCost> tiers;              // tiers above node: [0] = between nodes, ...
  // Measured winners at small sizes, ascending bytes (empty: the model decides alone).
  // Their latency is scheduling and bursts the alpha-beta terms of a bandwidth probe
  // mispredict (the namespace cluster's 4 KiB: 0.59-0.86x Open MPI with the model's pick).
  std::vector<MeasuredChoice> small;
  // The MPI library's eager limit between hosts (mpi_tcp_eager_limit(); not part of the
  // cached calibration: the communicator reads it from the library at start-up).
  std::size_t eager_limit = kDefaultEagerLimit;
  // The link cost between nodes at tier index t (0 = between nodes of one group of
  // tier 1); missing entries repeat the last one, or node_p2p when there are none.
  LinkCost tier(std::size_t t) const;
};

// The link one step of a flat algorithm crosses and how many concurrent flows share it.
struct StepLink {
  LinkCost link;
  double sharing = 1;
};

struct Choice {
  Algorithm algorithm = Algorithm::ring;
  std::size_t segment_bytes = 0;  // ring pipelining segment
  double predicted_seconds = 0;
  std::size_t pipeline_bytes = 0;  // hierarchical: chunk of the pipelined top (0: not pipelined)
};

// The smallest chunk the hierarchical algorithm pipelines its two-group top exchange in:
// each chunk adds its in-group steps' latency, which on the loaded namespace cluster
// (8 ranks on 2 cores) cost 2.4x at 16 KiB chunks of a 64 KiB vector, while 128 KiB
// chunks of 1 MiB ran 1.4x faster than one chunk.
inline constexpr double kMinPipelineChunk = 64 * 1024;
// The most chunks the pipelined top exchange is priced with (64 MiB in 128 KiB chunks).
inline constexpr int kMaxPipelineChunks = 512;

// The hierarchical algorithm's predicted time and how it runs its top tier.
struct HierarchicalPlan {
  double seconds = 0;
  std::size_t pipeline_bytes = 0;  // chunk of the two-group top exchange (bytes of the block entering it); 0: one flat allreduce there
};

class CostModel {
 public:
  CostModel() = default;
  explicit CostModel(CostParams params) : params_(std::move(params)) {}
  const CostParams& params() const { return params_; }

  // Predicted seconds for an allreduce of `bytes` over `p` ranks with the given link.
  double ring(int p, double bytes, const LinkCost& link, std::size_t segment_bytes) const;
  double recursive_doubling(int p, double bytes, const LinkCost& link) const;
  double rabenseifner(int p, double bytes, const LinkCost& link) const;
  // All `local` ranks on one node through the shared window.
  double shared_memory(int local, double bytes) const;
  // Recursive doubling / Rabenseifner over all ranks in topology order (distance
  // ascending): each step priced on the tier it crosses, shared by the flows crossing it.
  double recursive_doubling_in_order(const RankLayout& layout, double bytes) const;
  double rabenseifner_in_order(const RankLayout& layout, double bytes) const;
  // The link an exchange at rank distance `distance` (a power of two) crosses.
  StepLink step_link(const RankLayout& layout, long long distance) const;
  // Shm reduce-scatter + per-tier allreduce across nodes + shm allgather; the plan also
  // says whether (and in what chunks) the top exchange between two groups is pipelined.
  double hierarchical(const RankLayout& layout, double bytes) const;
  HierarchicalPlan hierarchical_plan(const RankLayout& layout, double bytes) const;
  // Reduce-scatter + allgather of `block` bytes inside a group of `s` ranks (halving /
  // doubling when s is a power of two, else the ring), `sharing` flows per link.
  double group_phases(int s, double block, const LinkCost& link, double sharing) const;
  // Best flat algorithm across `p` peers connected by `link` (used per tier).
  Choice best_flat(int p, double bytes, const LinkCost& link) const;
  // The best segment for the ring: balances per-segment latency against the
  // reduction that cannot overlap the last segment.
  std::size_t ring_segment(int p, double bytes, const LinkCost& link) const;

  // The algorithm for this layout and message size (never automatic). Sizes up to the
  // largest measured small size take the measured winner nearest in log2(bytes), which
  // may be mpi (the library's own MPI_Allreduce, when nothing beat it); above, the model.
  Choice choose(const RankLayout& layout, std::size_t bytes) const;
  // The measured small-message winner that applies to `bytes`, or null.
  const MeasuredChoice* measured(std::size_t bytes) const;

 private:
  // Flat algorithms across all ranks: the link is the slowest tier they span.
  LinkCost flat_link(const RankLayout& layout) const;
  CostParams params_;
};

}  // namespace taihu::comm
