// Calibration probe and its cache file (see calibration.hpp).
#include "taihu/comm/calibration.hpp"
#include "taihu/comm/cost_model.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "detail.hpp"
#include "shm_allreduce.hpp"
#include "shm_window.hpp"
#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/timer.hpp"

namespace taihu::comm {

std::string default_cache_path() {
  if (const char* p = std::getenv("TAIHU_COMM_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/taihu/comm-calibration.txt";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/taihu/comm-calibration.txt";
  return "comm-calibration.txt";
}

std::string calibration_key(const RankLayout& layout, const std::string& host) {
  std::ostringstream os;
  os << host << "/p" << layout.world_size << "/n" << layout.nodes();
  for (int s : layout.tier_sizes) os << "x" << s;
  // World ranks not in topology order (dealt round-robin, say): the library's own
  // MPI_Allreduce runs in world order, so the small-message table measured there holds
  // only for this order; a hash of the rank-to-node map keeps the orders apart.
  if (!std::is_sorted(layout.node_of_rank.begin(), layout.node_of_rank.end())) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (int n : layout.node_of_rank) h = (h ^ static_cast<std::uint64_t>(n)) * 1099511628211ull;
    os << "/order" << std::hex << h;
  }
  std::string key = os.str();
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

std::string format_calibration(const CostParams& p) {
  std::ostringstream os;
  os.precision(6);
  os << kCalibrationVersion << ' ' << std::scientific << p.node_p2p.alpha << ' ' << p.node_p2p.beta << ' '
     << p.shm_sync << ' ' << p.shm_copy << ' ' << p.gamma;
  for (const auto& t : p.tiers) os << ' ' << t.alpha << ' ' << t.beta;
  if (!p.small.empty()) {
    os << " small";
    for (const auto& m : p.small) os << ' ' << m.bytes << ':' << to_string(m.algorithm) << ':' << m.seconds;
  }
  return os.str();
}

namespace {

// A calibration number: seconds or seconds/byte in (0, 1].
double parse_value(const std::string& tok, const std::string& where) {
  char* end = nullptr;
  const double d = std::strtod(tok.c_str(), &end);
  if (tok.empty() || *end != '\0' || !(d > 0) || d > 1.0)
    throw Error(where + ": bad calibration value '" + tok + "' (expected seconds or seconds/byte in (0, 1])");
  return d;
}

// "<bytes>:<algorithm>:<seconds>" of the small-message table.
MeasuredChoice parse_measured(const std::string& tok, const std::string& where) {
  const auto a = tok.find(':'), b = tok.rfind(':');
  if (a == std::string::npos || a == b)
    throw Error(where + ": bad small-message entry '" + tok + "' (expected <bytes>:<algorithm>:<seconds>)");
  MeasuredChoice m;
  const std::string bytes = tok.substr(0, a);
  char* end = nullptr;
  const unsigned long long v = std::strtoull(bytes.c_str(), &end, 10);
  if (bytes.empty() || bytes[0] == '-' || *end != '\0' || v == 0 || v > kSmallCalibrationMax)
    throw Error(where + ": small-message entry '" + tok + "': bytes must be in [1, " +
                std::to_string(kSmallCalibrationMax) + "]");
  m.bytes = static_cast<std::size_t>(v);
  m.algorithm = parse_algorithm(tok.substr(a + 1, b - a - 1), where + ": small-message entry '" + tok + "'");
  if (m.algorithm == Algorithm::automatic)
    throw Error(where + ": small-message entry '" + tok + "': the algorithm must be a concrete one, not auto");
  m.seconds = parse_value(tok.substr(b + 1), where);
  return m;
}

}  // namespace

CostParams parse_calibration(const std::string& fields, const std::string& where) {
  std::istringstream in(fields);
  std::string tok;
  if (!(in >> tok)) throw Error(where + ": empty calibration line");
  if (tok != kCalibrationVersion) {
    char* end = nullptr;
    std::strtod(tok.c_str(), &end);
    if (*end == '\0')
      throw Error(where + ": calibration line in the old format (no '" + std::string(kCalibrationVersion) +
                  "', no small-message table); it is probed again and replaced");
    throw Error(where + ": calibration line starts with '" + tok + "', expected the version '" +
                std::string(kCalibrationVersion) + "'");
  }
  std::vector<double> v;
  CostParams p;
  bool in_small = false;
  while (in >> tok) {
    if (!in_small && tok == "small") {
      in_small = true;
      continue;
    }
    if (!in_small) {
      v.push_back(parse_value(tok, where));
      continue;
    }
    const MeasuredChoice m = parse_measured(tok, where);
    if (!p.small.empty() && m.bytes <= p.small.back().bytes)
      throw Error(where + ": small-message entry '" + tok + "': sizes must ascend");
    p.small.push_back(m);
  }
  if (v.size() < 5 || (v.size() - 5) % 2 != 0)
    throw Error(where + ": expected 5 + 2*tiers calibration values, got " + std::to_string(v.size()));
  p.node_p2p = {v[0], v[1]};
  p.shm_sync = v[2];
  p.shm_copy = v[3];
  p.gamma = v[4];
  for (std::size_t i = 5; i < v.size(); i += 2) p.tiers.push_back({v[i], v[i + 1]});
  return p;
}

std::optional<CacheLine> load_cache_line(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    if (line.compare(0, space, key) == 0 && space == key.size())
      return CacheLine{line.substr(space + 1), path + ":" + std::to_string(line_no) + ":" + std::to_string(space + 2)};
  }
  return std::nullopt;
}

std::optional<CostParams> load_calibration(const std::string& path, const std::string& key) {
  const auto line = load_cache_line(path, key);
  if (!line) return std::nullopt;
  return parse_calibration(line->payload, line->where);
}

void store_cache_line(const std::string& path, const std::string& key, const std::string& payload) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(key + " ", 0) != 0 && !line.empty()) lines.push_back(line);
  }
  if (lines.empty() || lines[0].rfind("#", 0) != 0)
    lines.insert(lines.begin(), "# taihu::comm calibration: key v2 node_alpha node_beta shm_sync shm_copy gamma [tier_alpha tier_beta]... [small bytes:algorithm:seconds...]");
  lines.push_back(key + " " + payload);
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  std::string text;
  for (const auto& l : lines) text += l + '\n';
  write_file_atomic(path, text);
}

void store_calibration(const std::string& path, const std::string& key, const CostParams& p) {
  store_cache_line(path, key, format_calibration(p));
}

namespace {

// The lower quartile of a sample: robust to the scheduling noise of a busy or
// oversubscribed host without taking the lucky minimum. Used for every probe.
double lower_quartile(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 4];
}

// Half round-trip time of `bytes` between ranks a and b of comm.
double ping_pong(MPI_Comm comm, int a, int b, std::size_t bytes, int reps) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  std::vector<char> buf(std::max<std::size_t>(bytes, 1));
  std::vector<double> times;
  for (int i = 0; i < reps + 1; ++i) {
    const double t0 = arch::now_seconds();
    if (r == a) {
      MPI_Send(buf.data(), static_cast<int>(bytes), MPI_CHAR, b, 91, comm);
      MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_CHAR, b, 91, comm, MPI_STATUS_IGNORE);
    } else if (r == b) {
      MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_CHAR, a, 91, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), static_cast<int>(bytes), MPI_CHAR, a, 91, comm);
    }
    if (i > 0) times.push_back((arch::now_seconds() - t0) / 2);
  }
  return lower_quartile(times);
}

// Seconds the slowest rank of comm spends in run(), started together after a barrier.
template <class Run>
double slowest_time(MPI_Comm comm, Run&& run) {
  MPI_Barrier(comm);
  const double t0 = arch::now_seconds();
  run();
  double t = arch::now_seconds() - t0, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

// The value of one model parameter that makes model_time(value) equal `measured`;
// every model time is linear in each of its parameters, so two evaluations solve it.
template <class ModelTime>
double fit_parameter(ModelTime&& model_time, double measured, double floor) {
  const double unit = 1e-10, t0 = model_time(0.0), t1 = model_time(unit);
  return t1 > t0 ? std::max(floor, (measured - t0) / (t1 - t0) * unit) : floor;
}

LinkCost fit_link(MPI_Comm comm, int a, int b) {
  const std::size_t big = 1 << 20;
  const double t_small = ping_pong(comm, a, b, 8, 20);
  const double t_big = ping_pong(comm, a, b, big, 5);
  LinkCost l;
  // Clamp to physical ranges (10 ns .. 1 ms per message, <= 100 GB/s) so a disturbed
  // sample cannot produce absurd choices.
  l.alpha = std::clamp(t_small, 1e-8, 1e-3);
  l.beta = std::max((t_big - t_small) / static_cast<double>(big), 1e-11);
  return l;
}

}  // namespace

CostParams probe(MPI_Comm comm, MPI_Comm node, const RankLayout& layout) {
  CostParams p;
  int r = 0, size = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &size);
  // comm is in topology order: rank 1 is in rank 0's node when nodes have > 1 rank.
  // Inside a node all ranks exchange at once, like the shm copy probe below, so both
  // see the same contention for cores and memory.
  // (On one node it is measured below, interleaved with the shared-window probe.)
  if (size > 1 && layout.ranks_per_node[0] > 1 && layout.nodes() > 1) p.node_p2p = fit_link(comm, 0, 1);
  // Tiers: the first rank of node `stride` is rank 0's nearest peer across that tier.
  std::vector<int> first_of_node(layout.nodes(), 0);
  for (int n = 1; n < layout.nodes(); ++n) first_of_node[n] = first_of_node[n - 1] + layout.ranks_per_node[n - 1];
  long long stride = 1;
  std::vector<int> sizes = layout.tier_sizes;
  sizes.push_back(layout.nodes());
  for (int s : sizes) {
    if (stride >= layout.nodes()) break;
    p.tiers.push_back(fit_link(comm, 0, first_of_node[stride]));
    stride *= s;
  }
  // Across nodes, the per-step latency of a real 8-byte recursive-doubling allreduce
  // over all ranks is the floor for every tier's alpha: where hosts share cores (the
  // namespace cluster of scripts/cluster: 8 hosts on 2 cores) each step waits for its
  // partner to be scheduled, which a lone pair's ping-pong misses (measured there:
  // ~4 ms per step against 0.04-0.2 ms ping-pong), and the model then picks
  // many-step algorithms for small messages that lose to fewer steps.
  if (size > 1 && layout.nodes() > 1 && !p.tiers.empty()) {
    detail::Scratch scratch;
    float tiny[2] = {1.0f, 2.0f};
    std::vector<double> rd_times;
    for (int i = 0; i < 9; ++i)
      rd_times.push_back(slowest_time(comm, [&] { detail::recursive_doubling_allreduce(comm, tiny, 2, scratch); }));
    const LinkCost outer = p.tiers.back();
    const double step = std::min(1e-2, fit_parameter(
                                           [&](double x) {
                                             return CostModel(p).recursive_doubling(size, 8.0, LinkCost{x, outer.beta});
                                           },
                                           lower_quartile(rd_times), 1e-8));
    for (LinkCost& t : p.tiers) t.alpha = std::max(t.alpha, step);
  }
  // gamma: a local reduction over 4 MiB (out of cache), best of 3.
  {
    std::vector<float> a(1 << 20, 1.0f), b(1 << 20, 2.0f);
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const double t0 = arch::now_seconds();
      detail::add_into(a.data(), b.data(), a.size());
      best = std::min(best, arch::now_seconds() - t0);
    }
    p.gamma = std::max(best / static_cast<double>(a.size() * sizeof(float)), 1e-12);
    if (a[7] == 0) p.gamma *= 2;  // keep the loop observable
  }
  // One node: the barrier, and the real shared-window and Rabenseifner allreduces of
  // 1 MiB, sampled interleaved round by round so host noise hits all alike. The per-byte
  // parameters are then fitted so that the model's time for each real algorithm equals
  // its measured time: the choice compares what the algorithms really cost here (a
  // lone copy or pair exchange misses the extra passes and the contention of the whole
  // algorithm, and steered 2 ranks to Rabenseifner where shm is 1.1-1.6x faster).
  {
    int L = 1;
    MPI_Comm_size(node, &L);
    if (L > 1) {
      std::vector<int> ranks(L);
      for (int i = 0; i < L; ++i) ranks[i] = i;
      detail::ShmNode shm(node, ranks);
      const std::size_t bytes = 1 << 20;
      std::vector<float> vec(bytes / sizeof(float), 1.0f);
      detail::Scratch scratch;
      const bool one_node = layout.nodes() == 1;
      float tiny[2] = {1.0f, 2.0f};
      std::vector<double> syncs, shm_times, rd_times, rab_times;
      for (int round = 0; round < 9; ++round) {
        for (int i = 0; i < 3; ++i) {
          const double t0 = arch::now_seconds();
          shm.barrier();
          syncs.push_back(arch::now_seconds() - t0);
        }
        shm_times.push_back(slowest_time(node, [&] { detail::shm_allreduce(shm, vec.data(), vec.size()); }));
        if (one_node) {
          rd_times.push_back(slowest_time(comm, [&] { detail::recursive_doubling_allreduce(comm, tiny, 2, scratch); }));
          rab_times.push_back(slowest_time(comm, [&] { detail::rabenseifner_allreduce(comm, vec.data(), vec.size(), scratch); }));
        }
      }
      const double n = static_cast<double>(bytes);
      p.shm_sync = std::max(lower_quartile(syncs), 1e-8);
      // Per-message latency from a real 8-byte recursive-doubling allreduce over all
      // ranks: a lone pair's ping-pong is far too optimistic when the ranks outnumber
      // the cores, since every step then waits for its partner to be scheduled.
      if (one_node)
        p.node_p2p.alpha = std::min(1e-3, fit_parameter(
                                              [&](double x) {
                                                CostParams q = p;
                                                q.node_p2p.alpha = x;
                                                return CostModel(q).recursive_doubling(size, 8.0, q.node_p2p);
                                              },
                                              lower_quartile(rd_times), 1e-8));
      p.shm_copy = fit_parameter(
          [&](double x) {
            CostParams q = p;
            q.shm_copy = x;
            return CostModel(q).shared_memory(L, n);
          },
          lower_quartile(shm_times), 1e-12);
      if (one_node)
        p.node_p2p.beta = fit_parameter(
            [&](double x) {
              CostParams q = p;
              q.node_p2p.beta = x;
              return CostModel(q).rabenseifner(size, n, q.node_p2p);
            },
            lower_quartile(rab_times), 1e-11);
    }
  }
  // Every rank takes rank 0's numbers.
  std::vector<double> v = {p.node_p2p.alpha, p.node_p2p.beta, p.shm_sync, p.shm_copy, p.gamma};
  for (const auto& t : p.tiers) {
    v.push_back(t.alpha);
    v.push_back(t.beta);
  }
  MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, 0, comm);
  p.node_p2p = {v[0], v[1]};
  p.shm_sync = v[2];
  p.shm_copy = v[3];
  p.gamma = v[4];
  for (std::size_t i = 0; i < p.tiers.size(); ++i) p.tiers[i] = {v[5 + 2 * i], v[6 + 2 * i]};
  return p;
}

}  // namespace taihu::comm
