// Topology-aware hierarchical allreduce:
//   1. reduce-scatter inside the node through the shared window (each of the L local
//      ranks ends with 1/L of the node's sum);
//   2. across nodes, each local rank allreduces its 1/L block with the ranks of the same
//      local index on the other nodes (its "rail"), so all L ranks use the network at
//      once; with outer tiers (supernodes...), a reduce-scatter inside each tier group
//      (halving in power-of-two groups, else the ring: group_phases.cpp) shrinks the
//      block again before the next tier, and only the outermost tier
//      runs a full allreduce - on the smallest block, over the slowest links;
//   3. allgather back out tier by tier, then inside the node through the window.
// When the outermost tier joins two groups, steps 2-3 of the last two tiers run in the
// chunks the cost model chose (pipelined_pair_top below; one chunk = a single
// whole-block exchange across the top).
// The heavy steps (whole vector in the node, 1/L per tier group...) stay in the fast
// tiers; the oversubscribed top tier carries count / (L * prod(tier sizes)) elements.
#include "hierarchical.hpp"

#include <algorithm>
#include <vector>

namespace taihu::comm::detail {

namespace {

// The last two levels when the top joins exactly two groups, in chunks: chunk c's
// exchange with the partner group (whole block each way, each side adds the other's:
// IEEE addition is commutative, so both get the same bits) is in flight while chunk
// c+1 is reduce-scattered and chunk c-1 allgathered inside the group, so the slow top
// link stays busy and the inner phases cost about one chunk's worth. Moves the same
// bytes across the top as reduce-scatter + allgather there, in one step instead of two.
template <class T>
void pipelined_pair_top(MPI_Comm inner, MPI_Comm top, T* data, std::size_t count, std::size_t chunk_elems,
                        Scratch& scratch) {
  int p = 1, r = 0, tr = 0;
  MPI_Comm_size(inner, &p);
  MPI_Comm_rank(inner, &r);
  MPI_Comm_rank(top, &tr);
  const int partner = 1 - tr;
  const int chunks = static_cast<int>(std::min<std::size_t>((count + chunk_elems - 1) / chunk_elems, 1 << 20));
  std::vector<T> incoming[2];
  MPI_Request reqs[2][2] = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
  auto mine = [&](int c) {  // my block of chunk c: [begin, end) in data
    const std::size_t cb = block_begin(count, chunks, c), cn = block_begin(count, chunks, c + 1) - cb;
    return std::pair{cb + block_begin(cn, p, r), cb + block_begin(cn, p, r + 1)};
  };
  auto start = [&](int c) {
    const auto [b, e] = mine(c);
    auto& in = incoming[c % 2];
    in.resize(e - b);
    check_mpi(MPI_Irecv(in.data(), static_cast<int>(e - b), mpi_type<T>(), partner, c, top, &reqs[c % 2][0]), "MPI_Irecv");
    check_mpi(MPI_Isend(data + b, static_cast<int>(e - b), mpi_type<T>(), partner, c, top, &reqs[c % 2][1]), "MPI_Isend");
  };
  auto finish = [&](int c) {
    check_mpi(MPI_Waitall(2, reqs[c % 2], MPI_STATUSES_IGNORE), "MPI_Waitall");
    const auto [b, e] = mine(c);
    add_into(data + b, incoming[c % 2].data(), e - b);
    const std::size_t cb = block_begin(count, chunks, c);
    group_allgather(inner, data + cb, block_begin(count, chunks, c + 1) - cb);
  };
  for (int c = 0; c < chunks; ++c) {
    const std::size_t cb = block_begin(count, chunks, c);
    group_reduce_scatter(inner, data + cb, block_begin(count, chunks, c + 1) - cb, scratch);
    start(c);
    if (c > 0) finish(c - 1);
  }
  finish(chunks - 1);
}

template <class T>
void tiered(const std::vector<MPI_Comm>& levels, std::size_t level, T* data, std::size_t count,
            Scratch& scratch, const FlatRunner<T>& flat, std::size_t pipeline_elems) {
  if (pipeline_elems > 0 && level + 2 == levels.size() && count >= pipeline_elems) {
    int top = 0;
    MPI_Comm_size(levels[level + 1], &top);
    if (top == 2) {
      pipelined_pair_top(levels[level], levels[level + 1], data, count, std::min(pipeline_elems, kMaxMessageElems),
                         scratch);
      return;
    }
  }
  if (level + 1 == levels.size()) {
    flat(levels[level], static_cast<int>(level), data, count);
    return;
  }
  MPI_Comm comm = levels[level];
  int p = 1, r = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  group_reduce_scatter(comm, data, count, scratch);
  const std::size_t b = block_begin(count, p, r), e = block_begin(count, p, r + 1);
  tiered(levels, level + 1, data + b, e - b, scratch, flat, pipeline_elems);
  group_allgather(comm, data, count);
}

}  // namespace

template <class T>
void hierarchical_allreduce(ShmNode& node, const std::vector<MPI_Comm>& levels, T* data,
                            std::size_t count, Scratch& scratch, const FlatRunner<T>& flat,
                            std::size_t pipeline_elems) {
  AcrossHook<T> across;
  if (!levels.empty())
    across = [&](T* block, std::size_t n) { tiered(levels, 0, block, n, scratch, flat, pipeline_elems); };
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

template void hierarchical_allreduce<float>(ShmNode&, const std::vector<MPI_Comm>&, float*, std::size_t, Scratch&,
                                            const FlatRunner<float>&, std::size_t);
template void hierarchical_allreduce<double>(ShmNode&, const std::vector<MPI_Comm>&, double*, std::size_t, Scratch&,
                                             const FlatRunner<double>&, std::size_t);
template void leader_allreduce<float>(ShmNode&, MPI_Comm, float*, std::size_t, const FlatRunner<float>&);
template void leader_allreduce<double>(ShmNode&, MPI_Comm, double*, std::size_t, const FlatRunner<double>&);

}  // namespace taihu::comm::detail
