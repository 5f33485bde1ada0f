// The topology-aware hierarchical allreduce (see hierarchical.cpp).
#pragma once
#include <functional>
#include <vector>

#include "shm_allreduce.hpp"

namespace taihu::comm::detail {

// Runs a flat allreduce on `comm` whose ranks are the groups of tier `tier` (the
// Communicator picks the algorithm with the cost model for that tier's link).
template <class T>
using FlatRunner = std::function<void(MPI_Comm comm, int tier, T* data, std::size_t count)>;

// Uniform nodes: `levels` are communicators over this rank's rail (same local rank on
// every node), inner tier first; the last one runs the flat allreduce, the others a
// reduce-scatter before and an allgather after the next level (group_phases.cpp).
// pipeline_elems > 0: a top level of two groups runs chunks of that many elements
// pipelined with the level below it (0: the flat allreduce there).
template <class T>
void hierarchical_allreduce(ShmNode& node, const std::vector<MPI_Comm>& levels, T* data,
                            std::size_t count, Scratch& scratch, const FlatRunner<T>& flat,
                            std::size_t pipeline_elems = 0);

// Nodes of different sizes: node allreduce through shm, node leaders allreduce across
// nodes (`leaders` is MPI_COMM_NULL on non-leaders), leaders broadcast in the node.
template <class T>
void leader_allreduce(ShmNode& node, MPI_Comm leaders, T* data, std::size_t count,
                      const FlatRunner<T>& flat);

}  // namespace taihu::comm::detail
