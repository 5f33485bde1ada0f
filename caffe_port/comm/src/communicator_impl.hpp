// Communicator::Impl: the communicators, window and cost model behind the public class.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "detail.hpp"
#include "shm_window.hpp"
#include "taihu/comm/communicator.hpp"

namespace taihu::comm {

struct Communicator::Impl {
  Options options;
  MPI_Comm world = MPI_COMM_NULL;    // duplicate of the user's communicator
  MPI_Comm ordered = MPI_COMM_NULL;  // same ranks in topology order (flat algorithms)
  MPI_Comm node = MPI_COMM_NULL;     // ranks of this (possibly fake) node
  MPI_Comm leaders = MPI_COMM_NULL;  // local rank 0 of every node (non-uniform nodes)
  std::vector<MPI_Comm> rail_levels; // per-tier communicators across nodes (uniform)
  int rank = 0, size = 1;
  RankLayout layout;
  TopologySpec spec;
  CostModel model;
  std::unique_ptr<detail::ShmNode> shm;
  detail::Scratch scratch;
  Algorithm forced = Algorithm::automatic;
  bool check_counts = false;
  long long pipeline_override = -1;  // TAIHU_COMM_PIPELINE bytes; -1 = the default rule
  std::map<int, Algorithm> logged;   // log2(bytes) -> last logged choice
  bool measuring = false;            // the small-message probe runs: no per-call log

  Impl(MPI_Comm comm, Options opts);
  ~Impl();
  void build_communicators();
  void groups_from_bandwidth(const std::vector<int>& phys_of, const std::vector<int>& roots,
                             const std::vector<std::string>& hosts);
  void load_or_probe();
  // The calibration's small-message table, timed with this communicator's algorithms
  // (small_messages.cpp); collective, the same table on every rank.
  std::vector<MeasuredChoice> measure_small_messages();
  // Broadcasts rank 0's parameters and makes them the model (the eager limit as given).
  void agree_on(const CostParams& params, const char* what);
  template <class T> void run(T* data, std::size_t count, Op op, Algorithm requested);
  template <class T> void run_flat(MPI_Comm comm, const LinkCost& link, T* data, std::size_t count,
                                   Algorithm algorithm, std::size_t segment_bytes);
  void check_global_counts(std::uint64_t count);
  Choice resolve(std::size_t bytes, Algorithm requested) const;
  std::size_t pipeline_bytes(const Choice& c) const;
};

}  // namespace taihu::comm
