// Vocabulary shared by the whole allreduce library: which algorithm, which reduction,
// and the names users write in TAIHU_ALLREDUCE / command lines.
#pragma once
#include <string>
#include <string_view>

namespace taihu::comm {

enum class Algorithm {
  automatic,           // the cost model chooses (default)
  ring,                // pipelined ring: reduce-scatter + allgather in segments
  recursive_doubling,  // log2(p) full-vector exchanges: latency-optimal for tiny messages
  rabenseifner,        // recursive halving (reduce-scatter) + doubling (allgather)
  shared_memory,       // MPI-3 shared window inside one node (all ranks on one node)
  hierarchical,        // shm reduce-scatter in node, per-tier allreduce across, shm allgather
  mpi,                 // the MPI library's own MPI_Allreduce (the anchor)
};

enum class Op { sum, average };

// "ring", "rabenseifner", ... ; parse_algorithm throws taihu::Error naming `what`
// (e.g. "TAIHU_ALLREDUCE") and listing the valid names.
std::string_view to_string(Algorithm algorithm);
std::string_view to_string(Op op);
Algorithm parse_algorithm(std::string_view name, std::string_view what);

}  // namespace taihu::comm
