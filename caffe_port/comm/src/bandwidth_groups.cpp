// Supernodes from measured link bandwidth (see bandwidth_groups.hpp): the pairwise
// probe among node leaders, the gap clustering of its matrix, and the cache lines.
#include "taihu/comm/bandwidth_groups.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "detail.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/comm/calibration.hpp"

namespace taihu::comm {

namespace {

// The groups the links of at least `threshold` make: valid when they are >= 2 cliques of
// equal size with only slower links between them; otherwise one group and the reason.
template <class PairBandwidth>
BandwidthGroups split_at(const PairBandwidth& pair_bw, int n, double threshold) {
  BandwidthGroups g;
  g.group_of.assign(static_cast<std::size_t>(n), 0);
  // Connected components of the fast links (union-find with path halving).
  std::vector<int> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (pair_bw(i, j) >= threshold) parent[find(i)] = find(j);
  std::vector<int> id_of_root(static_cast<std::size_t>(n), -1);
  int groups = 0;
  for (int i = 0; i < n; ++i) {
    int& id = id_of_root[find(i)];
    if (id < 0) id = groups++;
    g.group_of[i] = id;
  }
  std::vector<int> sizes(static_cast<std::size_t>(groups), 0);
  for (int i = 0; i < n; ++i) ++sizes[g.group_of[i]];
  auto flat = [&](std::string why) {
    g.group_of.assign(static_cast<std::size_t>(n), 0);
    g.groups = 1;
    g.reason = std::move(why);
    return g;
  };
  if (groups == 1) return flat("the fast links join every node");
  if (std::any_of(sizes.begin(), sizes.end(), [&](int s) { return s != sizes[0]; }))
    return flat("groups of fast links have different sizes");
  if (sizes[0] == 1) return flat("no two nodes share a fast link");
  // Inside a group every pair must be fast and between groups every pair slow: a chain
  // of fast links through a noisy measurement is not a supernode.
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if ((g.group_of[i] == g.group_of[j]) != (pair_bw(i, j) >= threshold))
        return flat("fast links do not form cliques (nodes " + std::to_string(i) + ", " + std::to_string(j) + ")");
  g.groups = groups;
  return g;
}

}  // namespace

BandwidthGroups cluster_by_bandwidth(const std::vector<double>& bandwidth, int n, double min_gap) {
  if (n < 0 || bandwidth.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n))
    throw Error("cluster_by_bandwidth: matrix has " + std::to_string(bandwidth.size()) + " entries, expected " +
                std::to_string(n) + " x " + std::to_string(n));
  BandwidthGroups g;
  g.group_of.assign(static_cast<std::size_t>(std::max(n, 0)), 0);
  auto pair_bw = [&](int i, int j) { return std::min(bandwidth[static_cast<std::size_t>(i) * n + j],
                                                     bandwidth[static_cast<std::size_t>(j) * n + i]); };
  if (n < 4) {
    g.reason = "fewer than 4 nodes";
    return g;
  }
  std::vector<double> values;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double b = pair_bw(i, j);
      if (!(b > 0) || !std::isfinite(b)) {
        g.reason = "pair " + std::to_string(i) + "-" + std::to_string(j) + " has no valid bandwidth";
        return g;
      }
      values.push_back(b);
    }
  std::sort(values.begin(), values.end());
  // Every gap of at least min_gap is a candidate split into fast and slow links, the
  // widest first: a gap inside the noise of one tier gives no valid partition, so the
  // next candidate is tried.
  std::vector<std::size_t> gaps;  // gap k lies between values[k] and values[k + 1]
  double widest = 0;
  for (std::size_t k = 0; k + 1 < values.size(); ++k) {
    widest = std::max(widest, values[k + 1] / values[k]);
    if (values[k + 1] >= min_gap * values[k]) gaps.push_back(k);
  }
  if (gaps.empty()) {
    std::ostringstream os;
    os << "no gap between link bandwidths (largest ratio " << widest << " < " << min_gap << ")";
    g.reason = os.str();
    return g;
  }
  std::stable_sort(gaps.begin(), gaps.end(), [&](std::size_t a, std::size_t b) {
    return values[a + 1] / values[a] > values[b + 1] / values[b];
  });
  std::string first_reason;
  for (std::size_t gap : gaps) {
    BandwidthGroups c = split_at(pair_bw, n, std::sqrt(values[gap] * values[gap + 1]));
    if (c.groups > 1) {
      c.slow_bytes_per_s = values[gap];
      c.fast_bytes_per_s = values[gap + 1];
      std::ostringstream os;
      os << c.groups << " groups of " << n / c.groups << " (links inside >= " << c.fast_bytes_per_s / 1e6
         << " MB/s, between <= " << c.slow_bytes_per_s / 1e6 << " MB/s)";
      c.reason = os.str();
      return c;
    }
    if (first_reason.empty()) first_reason = c.reason;
  }
  g.reason = first_reason;
  return g;
}

std::vector<double> measure_bandwidth_matrix(MPI_Comm leaders, std::size_t bytes, int reps) {
  int n = 1, r = 0;
  MPI_Comm_size(leaders, &n);
  MPI_Comm_rank(leaders, &r);
  // A pair's exchange grows (doubling from `bytes`) until it takes kTarget seconds, so
  // that a rate limiter's burst allowance (a token bucket refilled between messages)
  // and scheduling gaps are small against it; then the best of `reps` at that size.
  constexpr double kTarget = 0.01;
  constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
  bytes = std::clamp<std::size_t>(bytes, 1, kMaxBytes);
  std::vector<char> out(kMaxBytes, 1), in(kMaxBytes);
  std::vector<double> row(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      // One pair at a time: the others wait, so the pair has its links to itself.
      MPI_Barrier(leaders);
      if (r != i && r != j) continue;
      const int peer = r == i ? j : i;
      auto exchange = [&](std::size_t size) {
        const double t0 = arch::now_seconds();
        detail::check_mpi(MPI_Sendrecv(out.data(), static_cast<int>(size), MPI_CHAR, peer, 93, in.data(),
                                       static_cast<int>(size), MPI_CHAR, peer, 93, leaders, MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
        double t = arch::now_seconds() - t0, other = 0;
        // Both sides take the slower view, so they agree on the next size.
        MPI_Sendrecv(&t, 1, MPI_DOUBLE, peer, 94, &other, 1, MPI_DOUBLE, peer, 94, leaders, MPI_STATUS_IGNORE);
        return std::max(t, other);
      };
      std::size_t size = bytes;
      while (exchange(size) < kTarget && size < kMaxBytes) size = std::min(kMaxBytes, size * 2);
      double best = 0;
      for (int k = 0; k < reps; ++k) best = std::max(best, static_cast<double>(size) / std::max(exchange(size), 1e-9));
      row[peer] = best;
    }
  std::vector<double> matrix(static_cast<std::size_t>(n) * n);
  MPI_Allgather(row.data(), n, MPI_DOUBLE, matrix.data(), n, MPI_DOUBLE, leaders);
  return matrix;
}

std::string bandwidth_groups_key(const std::vector<std::string>& hosts_in_node_order) {
  std::string key = "groups:";
  for (std::size_t i = 0; i < hosts_in_node_order.size(); ++i) {
    if (i > 0) key += ',';
    key += hosts_in_node_order[i];
  }
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

std::optional<std::vector<int>> load_bandwidth_groups(const std::string& path, const std::string& key, int nodes) {
  const auto line = load_cache_line(path, key);
  if (!line) return std::nullopt;
  std::istringstream in(line->payload);
  std::vector<int> group_of;
  int g = 0;
  while (in >> g) {
    if (g < 0 || g >= nodes) throw Error(line->where + ": bad group index " + std::to_string(g));
    group_of.push_back(g);
  }
  if (!in.eof() || static_cast<int>(group_of.size()) != nodes)
    throw Error(line->where + ": expected " + std::to_string(nodes) + " group indices");
  return group_of;
}

void store_bandwidth_groups(const std::string& path, const std::string& key, const std::vector<int>& group_of) {
  std::string payload;
  for (std::size_t i = 0; i < group_of.size(); ++i) {
    if (i > 0) payload += ' ';
    payload += std::to_string(group_of[i]);
  }
  store_cache_line(path, key, payload);
}

}  // namespace taihu::comm
