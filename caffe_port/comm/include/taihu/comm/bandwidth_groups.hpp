// Supernodes from measured link bandwidth, for jobs across hosts that no topology file
// describes. The node leaders (one rank per host) time an exchange of a few hundred KiB
// to a few MiB with every other leader, one pair at a time; the bandwidth matrix is then split at
// its largest gap into "fast" and "slow" links, and the groups are the sets of nodes
// joined by fast links. The result is cached per set of hostnames (in the calibration
// cache file), so later jobs on the same hosts do not probe again.
#pragma once
#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

namespace taihu::comm {

struct BandwidthGroups {
  std::vector<int> group_of;  // per node, groups numbered in order of first appearance
  int groups = 1;             // 1: no structure found (flat)
  double fast_bytes_per_s = 0, slow_bytes_per_s = 0;  // the two sides of the gap (0: none)
  std::string reason;         // why the result is flat, or a one-line summary
};

// Pure: clusters a bandwidth matrix (n x n, row-major, bytes/s; the diagonal is ignored,
// a pair's bandwidth is the smaller of its two entries). Groups are found when the
// largest ratio between consecutive sorted pair bandwidths is >= min_gap, the fast
// links then join the nodes into cliques of equal size, and there are >= 2 of them;
// otherwise the result is one group with the reason.
BandwidthGroups cluster_by_bandwidth(const std::vector<double>& bandwidth, int n, double min_gap = 2.0);

// Collective over `leaders` (one rank per node, in node order): every pair exchanges
// data each way, one pair at a time; the size doubles from `bytes` until an exchange
// takes >= 10 ms (at most 16 MiB: a shaper's burst allowance and scheduling gaps are
// then small against it), then the best of `reps` at that size. Returns the same
// n x n matrix (bytes/s) on every leader.
std::vector<double> measure_bandwidth_matrix(MPI_Comm leaders, std::size_t bytes = 256 * 1024, int reps = 2);

// Cache lines "groups <host,host,...> <g> <g> ..." in the calibration cache file.
std::string bandwidth_groups_key(const std::vector<std::string>& hosts_in_node_order);
std::optional<std::vector<int>> load_bandwidth_groups(const std::string& path, const std::string& key, int nodes);
void store_bandwidth_groups(const std::string& path, const std::string& key, const std::vector<int>& group_of);

}  // namespace taihu::comm
