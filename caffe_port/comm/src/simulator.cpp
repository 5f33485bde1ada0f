// Alpha-beta model with link contention (see simulator.hpp).
//
// Every algorithm is a sequence of steps; in a step every participating node sends
// `bytes` to one partner given by a pattern (xor with d, or shift by d). For each step
// the model counts, per group of every tier, the flows leaving the group; a flow's
// bandwidth is the minimum over the tiers it leaves of (group uplink capacity / flows
// leaving that group), capped by its own link bandwidth; its latency is the latency of
// the tier where its endpoints meet; a two-way exchange of rendezvous-size messages
// across an uplink gets only exchange_efficiency of its capacity. Step time = slowest
// flow; reduction adds gamma per byte reduced. Patterns are evaluated over all nodes
// (O(nodes) per distinct step), identical steps are multiplied, so 65536 nodes take
// milliseconds.
//
// The TaihuLight-like preset (taihulight()) uses:
//  - 256 nodes per supernode, full bandwidth inside (Fu et al., "The Sunway TaihuLight
//    supercomputer: system and applications", Sci. China Inf. Sci. 59, 2016; Dongarra,
//    "Report on the Sunway TaihuLight System", 2016);
//  - 16 GB/s bidirectional node link -> 8 GB/s per direction, ~1 us latency (same);
//  - links between supernodes oversubscribed 4:1: the 70 TB/s bisection bandwidth of
//    40,960 nodes is ~1/4.7 of their 8 GB/s injection (Dongarra 2016); swCaffe (Li et
//    al., IEEE CLUSTER 2018) designs its allreduce around this over-subscription;
//  - 2 us latency across supernodes (assumption: one more switch level);
//  - gamma = 1 / (4 GB/s): the reduction runs on the node's management core, bound by
//    its memory bandwidth (assumption; swCaffe offloads it for this reason).
//  - 4 MPI processes per node, one per SW26010 core group (the usual MPI + Athread
//    layout, and swCaffe's), sharing the node's link; between two core groups of a
//    node 10 GB/s and 0.5 us (assumption: a copy through the node's memory).
#include "taihu/comm/simulator.hpp"
#include "taihu/comm/cost_model.hpp"  // kMinPipelineChunk: the library's pipelining rule

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "taihu/arch/error.hpp"

namespace taihu::comm::sim {

namespace {

enum class Pattern { xor_distance, shift };

struct Evaluator {
  const System& sys;
  bool topology_order;  // true: rank i on node i (block); false: the system's placement
  std::vector<long long> span;  // nodes per group of tier t (t < tiers-1)

  Evaluator(const System& s, bool topo) : sys(s), topology_order(topo) {
    long long g = 1;
    for (std::size_t t = 0; t + 1 < s.tiers.size(); ++t) {
      g *= std::max(1, s.tiers[t].group);
      span.push_back(g);
    }
  }

  long long node_of(long long rank, long long participants) const {
    if (topology_order || sys.placement == Placement::block || span.empty()) return rank;
    // Round-robin over the outermost groups: consecutive ranks land in different groups.
    const long long groups = std::max<long long>(1, participants / span.back());
    if (groups <= 1) return rank;
    return (rank % groups) * span.back() + rank / groups;
  }

  // Tier at which nodes a and b meet (0: same innermost group).
  std::size_t meet(long long a, long long b) const {
    for (std::size_t t = 0; t < span.size(); ++t)
      if (a / span[t] == b / span[t]) return t;
    return span.size();
  }

  // Time of one step: ranks [0, p) (stride `stride` apart in rank space, offset 0) send
  // `bytes` to partner(rank); nodes holding rank*stride + lane for lane < lanes also
  // send in parallel (the hierarchical algorithm's concurrent groups).
  double step(Pattern pattern, long long d, long long p, double bytes, long long stride = 1,
              long long lanes = 1) const {
    if (bytes <= 0 && p <= 1) return 0;
    const long long total = p * stride;
    // Flows leaving each group at each tier.
    std::vector<std::vector<int>> leaving(span.size());
    for (std::size_t t = 0; t < span.size(); ++t)
      leaving[t].assign(static_cast<std::size_t>((sys.nodes + span[t] - 1) / span[t]) + 1, 0);
    struct Flow { long long src; std::size_t tier; };
    std::vector<Flow> flows;
    flows.reserve(static_cast<std::size_t>(p * lanes));
    for (long long lane = 0; lane < lanes; ++lane)
      for (long long r = 0; r < p; ++r) {
        const long long q = pattern == Pattern::xor_distance ? (r ^ d) : (r + d) % p;
        if (q >= p || q == r) continue;
        const long long a = node_of(r * stride + lane, total), b = node_of(q * stride + lane, total);
        const std::size_t t = meet(a, b);
        for (std::size_t u = 0; u < t; ++u) ++leaving[u][static_cast<std::size_t>(a / span[u])];
        flows.push_back({a, t});
      }
    // Rendezvous-size two-way exchanges get only part of a shared uplink (System::
    // exchange_efficiency); one-way shifts and eager-size messages get all of it.
    const double share =
        pattern == Pattern::xor_distance && bytes > static_cast<double>(eager_payload(sys.eager_limit))
            ? sys.exchange_efficiency
            : 1.0;
    double worst = 0;
    for (const Flow& f : flows) {
      const SimTier& tier = sys.tiers[std::min(f.tier, sys.tiers.size() - 1)];
      double bw = tier.bandwidth;
      for (std::size_t u = 0; u < f.tier; ++u) {
        const SimTier& up = sys.tiers[u + 1];
        const double capacity = static_cast<double>(span[u]) * up.bandwidth / up.oversubscription * share;
        bw = std::min(bw, capacity / leaving[u][static_cast<std::size_t>(f.src / span[u])]);
      }
      worst = std::max(worst, tier.latency + bytes / bw);
    }
    return worst;
  }
};

int floor_pow2(long long p) {
  int q = 1;
  while (2LL * q <= p) q *= 2;
  return q;
}

// Fold for non-powers of two: two extra full-vector steps (to/from the partner).
double fold(const Evaluator& ev, long long p, double n, double gamma) {
  const int q = floor_pow2(p);
  if (q == p) return 0;
  return 2 * ev.step(Pattern::xor_distance, 1, 2 * (p - q), n) + n * gamma;
}

double ring(const Evaluator& ev, long long p, double n, double gamma) {
  if (p <= 1) return 0;
  const double block = n / static_cast<double>(p);
  return 2.0 * static_cast<double>(p - 1) * ev.step(Pattern::shift, 1, p, block) + static_cast<double>(p - 1) * block * gamma;
}

double recursive_doubling(const Evaluator& ev, long long p, double n, double gamma) {
  if (p <= 1) return 0;
  const int q = floor_pow2(p);
  double t = fold(ev, p, n, gamma);
  for (long long d = 1; d < q; d *= 2) t += ev.step(Pattern::xor_distance, d, q, n) + n * gamma;
  return t;
}

// Rabenseifner in MPICH's order (MPIR_Allreduce_intra_reduce_scatter_allgather: the
// mask starts at 1): the reduce-scatter halves the vector while the distance doubles,
// so the heaviest exchanges are between neighbouring ranks; the allgather mirrors it.
double rabenseifner(const Evaluator& ev, long long p, double n, double gamma, long long stride = 1,
                    long long lanes = 1) {
  if (p <= 1) return 0;
  const int q = floor_pow2(p);
  double t = stride == 1 ? fold(ev, p, n, gamma) : 0;
  std::vector<long long> ds;
  for (long long d = 1; d < q; d *= 2) ds.push_back(d);
  double bytes = n;
  for (long long d : ds) {  // reduce-scatter
    bytes /= 2;
    t += ev.step(Pattern::xor_distance, d, q, bytes, stride, lanes) + bytes * gamma;
  }
  for (auto it = ds.rbegin(); it != ds.rend(); ++it) {  // allgather
    t += ev.step(Pattern::xor_distance, *it, q, bytes, stride, lanes);
    bytes *= 2;
  }
  return t;
}

}  // namespace

const char* name(SimAlgorithm a) {
  switch (a) {
    case SimAlgorithm::ring: return "ring";
    case SimAlgorithm::recursive_doubling: return "recursive_doubling";
    case SimAlgorithm::rabenseifner: return "rabenseifner";
    case SimAlgorithm::hierarchical: return "hierarchical";
    case SimAlgorithm::flat_default: return "flat_default";
    case SimAlgorithm::topology_aware: return "topology_aware";
  }
  return "?";
}

namespace {

// `system` is rank-level here (rank_level() applied).
double predict_ranks(const System& system, SimAlgorithm algorithm, double bytes) {
  if (system.nodes <= 1 || system.tiers.empty()) return 0;
  const long long p = system.nodes;
  switch (algorithm) {
    case SimAlgorithm::ring: return ring(Evaluator(system, false), p, bytes, system.gamma);
    case SimAlgorithm::recursive_doubling: return recursive_doubling(Evaluator(system, false), p, bytes, system.gamma);
    case SimAlgorithm::rabenseifner: return rabenseifner(Evaluator(system, false), p, bytes, system.gamma);
    case SimAlgorithm::flat_default:
      // MPICH's fixed rule (Sunway's MPI derives from MPICH): recursive doubling up to
      // 2 KiB, Rabenseifner above.
      return bytes <= 2048 ? predict_ranks(system, SimAlgorithm::recursive_doubling, bytes)
                           : predict_ranks(system, SimAlgorithm::rabenseifner, bytes);
    case SimAlgorithm::topology_aware: {
      const Evaluator ev(system, true);
      return std::min({predict_ranks(system, SimAlgorithm::hierarchical, bytes), ring(ev, p, bytes, system.gamma),
                       recursive_doubling(ev, p, bytes, system.gamma),
                       rabenseifner(ev, p, bytes, system.gamma)});
    }
    case SimAlgorithm::hierarchical: {
      // Per tier, inner first: Rabenseifner reduce-scatter inside the tier's groups (all
      // groups at once), the block shrinks by the group size; the outermost tier runs
      // the full allreduce on the smallest block; then allgathers back out. Each tier
      // uses the better of ring and halving/doubling for its own size, as the library's
      // cost model does.
      const Evaluator ev(system, true);
      double t = 0, block = bytes;
      long long stride = 1, remaining = p;
      long long last_g = 0, last_stride = 1;
      double last_block = 0, last_rs_ag = 0;
      for (std::size_t tier = 0; tier + 1 < system.tiers.size(); ++tier) {
        const long long g = std::min<long long>(remaining, std::max(1, system.tiers[tier].group));
        if (g >= remaining) break;
        // Reduce-scatter + allgather within groups of g (ranks stride apart): half of
        // a Rabenseifner allreduce each way; the lanes are the concurrent groups.
        const double rs_ag = rabenseifner(ev, g, block, system.gamma, stride, stride);
        t += rs_ag;
        last_g = g, last_stride = stride, last_block = block, last_rs_ag = rs_ag;
        block /= static_cast<double>(g);
        stride *= g;
        remaining /= g;
      }
      if (remaining == 2 && last_g > 1) {
        // Two groups at the top: taihu pipelines k chunks (hierarchical.cpp; k = 1, 2,
        // 4, ... 512, the cheapest, as the library's cost model picks it) - chunk c's
        // whole-block exchange across the top overlaps the inner reduce-scatter of
        // chunk c+1 and allgather of chunk c-1: one chunk's inner phases and exchange,
        // plus, per further chunk, the slower of the two. As in the cost model, chunks
        // whose per-rank message across exceeds the eager limit are taken only when no
        // chunk fits it; a rendezvous message adds a round trip (2 latencies).
        const double eager = static_cast<double>(eager_payload(system.eager_limit));
        const double top_latency = system.tiers.back().latency;
        double best = -1, best_eager = -1;
        for (int k = 1; k <= kMaxPipelineChunks; k *= 2) {
          const double piece = last_block / k;
          if (k > 1 && piece < kMinPipelineChunk) break;
          const double inner = rabenseifner(ev, last_g, piece, system.gamma, last_stride, last_stride);
          const double mine = piece / static_cast<double>(last_g);
          const bool fits = mine <= eager;
          const double across = ev.step(Pattern::xor_distance, 1, 2, mine, stride, stride) + mine * system.gamma +
                                (fits ? 0 : 2 * top_latency);
          const double tk = t - last_rs_ag + inner + across + (k - 1) * std::max(across, inner);
          if (best < 0 || tk < best) best = tk;
          if (fits && (best_eager < 0 || tk < best_eager)) best_eager = tk;
        }
        return best_eager >= 0 ? best_eager : best;
      }
      if (remaining > 1) {
        // All nodes take part at the top: `stride` lanes of `remaining` ranks each.
        const double flat_rab = rabenseifner(ev, remaining, block, system.gamma, stride, stride);
        double flat_rd = 0;
        for (long long d = 1; d < floor_pow2(remaining); d *= 2)
          flat_rd += ev.step(Pattern::xor_distance, d, floor_pow2(remaining), block, stride, stride) + block * system.gamma;
        t += std::min(flat_rab, flat_rd);
      }
      return t;
    }
  }
  return 0;
}

}  // namespace


double predict(const System& system, SimAlgorithm algorithm, double bytes) {
  return predict_ranks(rank_level(system), algorithm, bytes);
}

System taihulight(int nodes, int ranks_per_node) {
  if (ranks_per_node < 1) throw Error("taihulight: ranks_per_node must be >= 1");
  System s;
  s.name = "TaihuLight-like";
  s.nodes = nodes;
  s.tiers = {{"supernode", 256, 8e9, 1e-6, 1}, {"system", 0, 8e9, 2e-6, 4}};
  s.gamma = 1.0 / 4e9;
  s.ranks_per_node = ranks_per_node;
  s.node_bandwidth = 10e9;
  s.node_latency = 0.5e-6;
  return s;
}

System rank_level(const System& system) {
  if (system.ranks_per_node <= 1) return system;
  if (!(system.node_bandwidth > 0) || !(system.node_latency >= 0))
    throw Error("system with " + std::to_string(system.ranks_per_node) +
                " ranks per node needs node=bandwidth,latency for the links inside a node");
  System r = system;
  r.nodes = system.nodes * system.ranks_per_node;
  r.ranks_per_node = 1;
  r.tiers.clear();
  r.tiers.push_back({"node", system.ranks_per_node, system.node_bandwidth, system.node_latency, 1});
  for (SimTier t : system.tiers) {
    // A tier's uplink capacity is counted per unit below it; units are now ranks, and
    // ranks_per_node of them share what one node had.
    t.oversubscription *= system.ranks_per_node;
    r.tiers.push_back(t);
  }
  return r;
}

System single_tier(int nodes, double alpha, double beta, double gamma, const std::string& label) {
  System s;
  s.name = label;
  s.nodes = nodes;
  s.tiers = {{"node", 0, 1.0 / beta, alpha, 1}};
  s.gamma = gamma;
  return s;
}

System parse_system(const std::string& text, int nodes) {
  System s;
  s.name = "custom";
  s.nodes = nodes;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw Error("system description: '" + item + "' has no '='");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    try {
      if (key == "gamma") {
        s.gamma = std::stod(value);
      } else if (key == "ranks_per_node") {
        s.ranks_per_node = std::stoi(value);
        if (s.ranks_per_node < 1) throw Error("ranks_per_node must be >= 1");
      } else if (key == "node") {
        const auto comma = value.find(',');
        if (comma == std::string::npos) throw Error("expected bandwidth,latency");
        s.node_bandwidth = std::stod(value.substr(0, comma));
        s.node_latency = std::stod(value.substr(comma + 1));
        if (!(s.node_bandwidth > 0) || !(s.node_latency >= 0)) throw Error("bandwidth > 0, latency >= 0");
      } else if (key == "exchange") {
        s.exchange_efficiency = std::stod(value);
        if (!(s.exchange_efficiency > 0) || s.exchange_efficiency > 1) throw Error("must be in (0, 1]");
      } else if (key == "placement") {
        if (value == "block") s.placement = Placement::block;
        else if (value == "round_robin") s.placement = Placement::round_robin;
        else throw Error("placement must be block or round_robin");
      } else if (key == "tier") {
        std::vector<std::string> f;
        std::stringstream ss(value);
        for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
        if (f.size() != 5) throw Error("expected name,group,bandwidth,latency,oversubscription");
        SimTier t{f[0], std::stoi(f[1]), std::stod(f[2]), std::stod(f[3]), std::stod(f[4])};
        if (t.group < 0 || !(t.bandwidth > 0) || !(t.latency >= 0) || !(t.oversubscription >= 1))
          throw Error("group >= 0, bandwidth > 0, latency >= 0, oversubscription >= 1");
        s.tiers.push_back(t);
      } else {
        throw Error("unknown key (gamma, placement, tier, ranks_per_node, node, exchange)");
      }
    } catch (const Error& e) {
      throw Error("system description item '" + item + "': " + e.what());
    } catch (const std::exception&) {
      throw Error("system description item '" + item + "': not a number");
    }
  }
  if (s.tiers.empty()) throw Error("system description has no tier=... item");
  if (s.ranks_per_node > 1 && !(s.node_bandwidth > 0))
    throw Error("system description: ranks_per_node=" + std::to_string(s.ranks_per_node) +
                " needs node=bandwidth,latency");
  return s;
}

std::string describe(const System& s) {
  std::ostringstream os;
  os << s.name << ": " << s.nodes << " nodes";
  if (s.ranks_per_node > 1)
    os << " x " << s.ranks_per_node << " ranks (" << s.node_bandwidth / 1e9 << " GB/s " << s.node_latency * 1e6
       << " us inside a node)";
  for (const auto& t : s.tiers)
    os << "; " << t.name << (t.group ? " of " + std::to_string(t.group) : std::string()) << " " << t.bandwidth / 1e9
       << " GB/s " << t.latency * 1e6 << " us oversub " << t.oversubscription;
  if (s.exchange_efficiency < 1) os << "; large two-way exchanges get " << s.exchange_efficiency << " of an uplink";
  os << "; gamma " << (s.gamma > 0 ? 1.0 / s.gamma / 1e9 : 0) << " GB/s; placement "
     << (s.placement == Placement::block ? "block" : "round_robin");
  return os.str();
}

}  // namespace taihu::comm::sim
