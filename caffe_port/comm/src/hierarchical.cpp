// Topology-aware hierarchical allreduce:
//   1. reduce-scatter inside the node through the shared window (each of the L local
//      ranks ends with 1/L of the node's sum);
//   2. across nodes, each local rank allreduces its 1/L block with the ranks of the same
//      local index on the other nodes (its "rail"), so all L ranks use the network at
//      once; with outer tiers (supernodes...), a ring reduce-scatter inside each tier
//      group shrinks the block again before the next tier, and only the outermost tier
//      runs a full allreduce - on the smallest block, over the slowest links;
//   3. allgather back out tier by tier, then inside the node through the window.
// The heavy steps (whole vector in the node, 1/L per tier group...) stay in the fast
// tiers; the oversubscribed top tier carries count / (L * prod(tier sizes)) elements.
#include "hierarchical.hpp"

namespace taihu::comm::detail {

namespace {

template <class T>
void tiered(const std::vector<MPI_Comm>& levels, std::size_t level, T* data, std::size_t count,
            Scratch& scratch, const FlatRunner<T>& flat) {
  if (level + 1 == levels.size()) {
    flat(levels[level], static_cast<int>(level), data, count);
    return;
  }
  MPI_Comm comm = levels[level];
  int p = 1, r = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  ring_reduce_scatter(comm, data, count, scratch);
  const std::size_t b = block_begin(count, p, r), e = block_begin(count, p, r + 1);
  tiered(levels, level + 1, data + b, e - b, scratch, flat);
  ring_allgather(comm, data, count);
}

}  // namespace

template <class T>
void hierarchical_allreduce(ShmNode& node, const std::vector<MPI_Comm>& levels, T* data,
                            std::size_t count, Scratch& scratch, const FlatRunner<T>& flat) {
  AcrossHook<T> across;
  if (!levels.empty())
    across = [&](T* block, std::size_t n) { tiered(levels, 0, block, n, scratch, flat); };
  shm_allreduce(node, data, count, across);
}

template <class T>
void leader_allreduce(ShmNode& node, MPI_Comm leaders, T* data, std::size_t count,
                      const FlatRunner<T>& flat) {
  shm_allreduce(node, data, count);
  if (leaders != MPI_COMM_NULL) flat(leaders, 0, data, count);
  std::size_t done = 0;
  do {
    const std::size_t n = std::min(kMaxMessageElems, count - done);
    check_mpi(MPI_Bcast(data + done, static_cast<int>(n), mpi_type<T>(), 0, node.comm()), "MPI_Bcast");
    done += n;
  } while (done < count);
}

template void hierarchical_allreduce<float>(ShmNode&, const std::vector<MPI_Comm>&, float*, std::size_t, Scratch&, const FlatRunner<float>&);
template void hierarchical_allreduce<double>(ShmNode&, const std::vector<MPI_Comm>&, double*, std::size_t, Scratch&, const FlatRunner<double>&);
template void leader_allreduce<float>(ShmNode&, MPI_Comm, float*, std::size_t, const FlatRunner<float>&);
template void leader_allreduce<double>(ShmNode&, MPI_Comm, double*, std::size_t, const FlatRunner<double>&);

}  // namespace taihu::comm::detail
