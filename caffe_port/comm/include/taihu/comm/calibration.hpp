// Calibration of the cost model: a short collective probe measures, per tier, the
// point-to-point latency (alpha) and bandwidth (beta) between rank 0 and the nearest
// rank in that tier, plus the node's shared-window barrier and copy costs and the
// reduction throughput (gamma). Takes ~0.1-0.3 s. The result is cached in a small text
// file (written atomically: temp file + rename) keyed by host, rank count and layout,
// so later runs start with calibrated parameters without probing.
//
// Then (Communicator) the small-message table: at 4, 16, 64, ... kSmallCalibrationMax
// bytes the candidates (recursive doubling, Rabenseifner, hierarchical or shm, the
// model's own pick, and the MPI library's MPI_Allreduce) run interleaved round by round;
// the fastest median wins, and MPI_Allreduce unless another is >= 5% faster, so small
// sizes are never knowingly slower than the library's default.
//
// Cache file: TAIHU_COMM_CACHE, else $XDG_CACHE_HOME/taihu/comm-calibration.txt, else
// $HOME/.cache/taihu/comm-calibration.txt. One line per key (format version v2):
//   <key> v2 node_alpha node_beta shm_sync shm_copy gamma [tier_alpha tier_beta]...
//         [small <bytes>:<algorithm>:<seconds>...]
// A line of the older format (no version) is rejected with a message saying so, and the
// communicator probes again and replaces it.
#pragma once
#include <mpi.h>

#include <optional>
#include <string>

#include "taihu/comm/cost_model.hpp"
#include "taihu/comm/topology.hpp"

namespace taihu::comm {

// The version that opens every calibration line (parse_calibration rejects others).
inline constexpr const char* kCalibrationVersion = "v2";

std::string default_cache_path();
// A key naming the host, rank count and layout (nodes and tier sizes), plus a hash of
// the rank order when world ranks are not in topology order (the small-message table
// times MPI_Allreduce in world order).
std::string calibration_key(const RankLayout& layout, const std::string& host);

// One line of the cache file: the text after "<key> " and where it is (path:line:column).
struct CacheLine {
  std::string payload;
  std::string where;
};
std::optional<CacheLine> load_cache_line(const std::string& path, const std::string& key);
// Replaces or adds the line for `key`; atomic (temp + rename). Throws taihu::Error.
void store_cache_line(const std::string& path, const std::string& key, const std::string& payload);

std::optional<CostParams> load_calibration(const std::string& path, const std::string& key);
// Replaces or adds the line for `key`; atomic (temp + rename). Throws taihu::Error.
void store_calibration(const std::string& path, const std::string& key, const CostParams& p);
std::string format_calibration(const CostParams& p);
CostParams parse_calibration(const std::string& fields, const std::string& where);

// Collective over `comm` (ranks in layout order); `node` is the node communicator of
// this rank; returns the same parameters on every rank (rank 0's measurement), with an
// empty small-message table (Communicator measures it with its algorithms).
CostParams probe(MPI_Comm comm, MPI_Comm node, const RankLayout& layout);

}  // namespace taihu::comm
