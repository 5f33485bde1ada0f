// Communicator: builds the layout and communicators, holds the cost model, and
// dispatches each allreduce to the chosen algorithm.
#include "taihu/comm/communicator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "communicator_impl.hpp"
#include "hierarchical.hpp"
#include "shm_allreduce.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/comm/bandwidth_groups.hpp"
#include "taihu/comm/calibration.hpp"
#include "taihu/comm/eager_limit.hpp"

namespace taihu::comm {

namespace {

Probe probe_from_env(Probe fallback) {
  const char* env = std::getenv("TAIHU_COMM_PROBE");
  if (!env || !*env) return fallback;
  const std::string v(env);
  if (v == "auto") return Probe::automatic;
  if (v == "always") return Probe::always;
  if (v == "never") return Probe::never;
  throw Error("TAIHU_COMM_PROBE='" + v + "': use auto, always or never");
}

bool env_flag(const char* name) {
  const char* env = std::getenv(name);
  if (!env || !*env) return false;
  const std::string v(env);
  if (v == "0" || v == "off" || v == "false") return false;
  if (v == "1" || v == "on" || v == "true") return true;
  throw Error(std::string(name) + "='" + v + "': use 0 or 1");
}

// Rank 0's value everywhere, so every rank makes the same choices.
std::size_t broadcast_size(std::size_t v, MPI_Comm comm) {
  unsigned long long u = v;
  MPI_Bcast(&u, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  return static_cast<std::size_t>(u);
}

}  // namespace

Communicator::Impl::Impl(MPI_Comm comm, Options opts) : options(std::move(opts)) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error("taihu::comm::Communicator: MPI is not initialized (call MPI_Init first)");
  detail::check_mpi(MPI_Comm_dup(comm, &world), "MPI_Comm_dup");
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  forced = options.algorithm;
  if (forced == Algorithm::automatic)
    if (const char* env = std::getenv("TAIHU_ALLREDUCE"); env && *env)
      forced = parse_algorithm(env, "TAIHU_ALLREDUCE");
  check_counts = options.check_counts || env_flag("TAIHU_COMM_CHECK");
  if (const char* env = std::getenv("TAIHU_COMM_PIPELINE"); env && *env) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (*end != '\0' || v < 0) throw Error(std::string("TAIHU_COMM_PIPELINE='") + env + "': use a chunk size in bytes (0: off)");
    pipeline_override = v;
  }
  build_communicators();
  load_or_probe();
}

Communicator::Impl::~Impl() {
  shm.reset();
  for (MPI_Comm* c : {&ordered, &node, &leaders})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  for (MPI_Comm& c : rail_levels)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
}

void Communicator::Impl::build_communicators() {
  // Physical nodes: ranks sharing memory; id = world rank of the first such rank.
  MPI_Comm phys;
  detail::check_mpi(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &phys),
                    "MPI_Comm_split_type");
  int phys_root = rank;
  MPI_Bcast(&phys_root, 1, MPI_INT, 0, phys);
  MPI_Comm_free(&phys);
  std::vector<int> phys_of(size);
  MPI_Allgather(&phys_root, 1, MPI_INT, phys_of.data(), 1, MPI_INT, world);

  // Every rank parses the same environment; a rank with a bad value throws alone, so
  // agree first and report everywhere.
  std::string error;
  try {
    spec = topology_from_environment(options.topology);
  } catch (const Error& e) {
    error = e.what();
  }
  int bad = error.empty() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (any_bad) throw Error(error.empty() ? "taihu::comm: another rank rejected the topology" : error);
  // Hostnames place nodes in the groups a topology file lists by name (real hosts).
  std::vector<std::string> hosts;
  const bool detected = spec.source == "detected" && spec.tiers.size() == 1 && !spec.user_node_size();
  std::vector<int> roots = phys_of;
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  const bool may_probe_groups = detected && roots.size() >= 4 && probe_from_env(options.probe) != Probe::never;
  if (may_probe_groups ||
      std::any_of(spec.tiers.begin(), spec.tiers.end(), [](const Tier& t) { return !t.members.empty(); })) {
    constexpr int kName = 256;
    char mine[kName] = {0};
    gethostname(mine, kName - 1);
    std::vector<char> all(static_cast<std::size_t>(kName) * size);
    MPI_Allgather(mine, kName, MPI_CHAR, all.data(), kName, MPI_CHAR, world);
    for (int r = 0; r < size; ++r) hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * kName);
  }
  if (may_probe_groups) groups_from_bandwidth(phys_of, roots, hosts);
  // Every rank sees the same names and spec, so a bad file throws on every rank alike.
  layout = make_layout(phys_of, spec, hosts);

  const int my_node = layout.node_of_rank[rank];
  const int my_local = layout.local_rank[rank];
  int before = 0;
  for (int n = 0; n < my_node; ++n) before += layout.ranks_per_node[n];
  MPI_Comm_split(world, 0, before + my_local, &ordered);
  MPI_Comm_split(world, my_node, my_local, &node);
  std::vector<int> node_world_ranks;
  for (int r = 0; r < size; ++r)
    if (layout.node_of_rank[r] == my_node) node_world_ranks.push_back(r);
  shm = std::make_unique<detail::ShmNode>(node, node_world_ranks);

  if (layout.nodes() > 1 && layout.uniform_nodes()) {
    MPI_Comm rail;
    MPI_Comm_split(world, my_local, my_node, &rail);
    if (layout.complete_tiers()) {
      int stride = 1;
      for (int s : layout.tier_sizes) {
        if (stride * s >= layout.nodes()) break;  // this tier spans every node: the top
        const int digit = (my_node / stride) % s;
        MPI_Comm level;
        MPI_Comm_split(rail, my_node - digit * stride, digit, &level);
        rail_levels.push_back(level);
        stride *= s;
      }
      MPI_Comm top;
      MPI_Comm_split(rail, my_node % stride, my_node / stride, &top);
      rail_levels.push_back(top);
      MPI_Comm_free(&rail);
    } else {
      rail_levels.push_back(rail);
    }
  } else if (layout.nodes() > 1) {
    MPI_Comm_split(world, my_local == 0 ? 0 : MPI_UNDEFINED, my_node, &leaders);
  }
  if (rank == 0 && arch::verbose_enabled())
    arch::log_verbose("comm: %s (topology from %s)\n", describe(layout).c_str(), spec.source.c_str());
}

// No topology names the supernodes and the job spans >= 4 hosts: the node leaders
// measure their pairwise bandwidth (or read the cached grouping of these hosts) and the
// groups of fast links become the supernode tier (bandwidth_groups.hpp).
void Communicator::Impl::groups_from_bandwidth(const std::vector<int>& phys_of, const std::vector<int>& roots,
                                               const std::vector<std::string>& hosts) {
  const int nodes = static_cast<int>(roots.size());
  std::vector<std::string> node_hosts;
  for (int root : roots) node_hosts.push_back(hosts[root]);
  std::vector<std::string> unique_hosts = node_hosts;
  std::sort(unique_hosts.begin(), unique_hosts.end());
  if (std::adjacent_find(unique_hosts.begin(), unique_hosts.end()) != unique_hosts.end()) {
    if (rank == 0) arch::log_verbose("comm: supernodes not measured: two nodes share a hostname\n");
    return;
  }
  const Probe mode = probe_from_env(options.probe);
  const std::string path = options.calibration_cache.empty() ? default_cache_path() : options.calibration_cache;
  const std::string key = bandwidth_groups_key(node_hosts);
  std::vector<int> group_of(static_cast<std::size_t>(nodes), 0);
  int have = 0;
  if (mode != Probe::always && rank == 0) {
    try {
      if (auto cached = load_bandwidth_groups(path, key, nodes)) {
        group_of = *cached;
        have = 1;
      }
    } catch (const Error& e) {
      arch::log_verbose("comm: ignoring cached supernodes: %s\n", e.what());
    }
  }
  MPI_Bcast(&have, 1, MPI_INT, 0, world);
  std::string summary = "cache " + path;
  if (!have) {
    MPI_Comm node_leaders;
    MPI_Comm_split(world, phys_of[rank] == rank ? 0 : MPI_UNDEFINED, rank, &node_leaders);
    if (node_leaders != MPI_COMM_NULL) {
      std::vector<double> matrix = measure_bandwidth_matrix(node_leaders);
      // A gap without a valid partition is ambiguous (a pair slowed by a busy host, say):
      // measure once more and keep each pair's better rate.
      if (const BandwidthGroups first = cluster_by_bandwidth(matrix, nodes);
          first.groups == 1 && first.reason.rfind("no gap", 0) != 0) {
        const std::vector<double> again = measure_bandwidth_matrix(node_leaders);
        for (std::size_t k = 0; k < matrix.size(); ++k) matrix[k] = std::max(matrix[k], again[k]);
      }
      if (rank == 0 && arch::verbose_enabled()) {
        std::string text;
        for (int i = 0; i < nodes; ++i) {
          text += "\n  ";
          for (int j = 0; j < nodes; ++j) text += std::to_string(std::lround(matrix[static_cast<std::size_t>(i) * nodes + j] / 1e6)) + " ";
        }
        arch::log_verbose("comm: link bandwidth between node leaders, MB/s:%s\n", text.c_str());
      }
      const BandwidthGroups g = cluster_by_bandwidth(matrix, nodes);
      group_of = g.group_of;
      summary = g.reason;
      MPI_Comm_free(&node_leaders);
    }
    if (rank == 0) {
      try {
        store_bandwidth_groups(path, key, group_of);
      } catch (const Error& e) {
        arch::log_verbose("comm: measured supernodes not cached: %s\n", e.what());
      }
    }
  }
  MPI_Bcast(group_of.data(), nodes, MPI_INT, 0, world);
  const int groups = *std::max_element(group_of.begin(), group_of.end()) + 1;
  if (rank == 0) arch::log_verbose("comm: supernodes from measured link bandwidth: %d group(s) (%s)\n", groups,
                                   summary.c_str());
  if (groups < 2) return;
  Tier tier;
  tier.name = "supernode";
  tier.members.resize(static_cast<std::size_t>(groups));
  for (int n = 0; n < nodes; ++n) tier.members[group_of[n]].push_back(node_hosts[n]);
  tier.size = static_cast<int>(tier.members[0].size());
  spec.tiers.push_back(tier);
  spec.source = "measured link bandwidth";
}

void Communicator::Impl::load_or_probe() {
  const Probe mode = probe_from_env(options.probe);
  const std::string path = options.calibration_cache.empty() ? default_cache_path() : options.calibration_cache;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  const std::string key = calibration_key(layout, host);
  CostParams params;
  int have = 0;
  if (mode != Probe::always && rank == 0) {
    try {
      if (auto cached = load_calibration(path, key)) {
        params = *cached;
        have = 1;
      }
    } catch (const Error& e) {
      // Said always: an old-format or damaged line costs a probe on every start until
      // it is replaced, which this run does unless probing is off.
      std::fprintf(stderr, "taihu::comm: calibration cache ignored: %s%s\n", e.what(),
                   mode == Probe::never ? " (TAIHU_COMM_PROBE=never: using the built-in defaults)" : "");
    }
  }
  MPI_Bcast(&have, 1, MPI_INT, 0, world);
  params.eager_limit = mpi_tcp_eager_limit();
  const bool probing = !have && mode != Probe::never;
  if (probing) {
    params = probe(ordered, node, layout);
    params.eager_limit = mpi_tcp_eager_limit();
  }
  agree_on(params, have ? "cache" : (probing ? "probe" : "defaults"));
  if (probing) {
    // The small-message table runs the algorithms under the model just agreed on.
    CostParams measured = model.params();
    measured.small = measure_small_messages();
    agree_on(measured, "probe + small-message table");
    if (rank == 0) {
      try {
        store_calibration(path, key, model.params());
      } catch (const Error& e) {
        arch::log_verbose("comm: calibration cache not written: %s\n", e.what());
      }
    }
  }
}

void Communicator::Impl::agree_on(const CostParams& params, const char* what) {
  // Rank 0's parameters everywhere, so every rank makes the same choices.
  std::string text = format_calibration(params);
  int len = static_cast<int>(text.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, world);
  text.resize(len);
  MPI_Bcast(text.data(), len, MPI_CHAR, 0, world);
  CostParams agreed = parse_calibration(text, "broadcast calibration");
  agreed.eager_limit = broadcast_size(params.eager_limit, world);
  model = CostModel(agreed);
  if (rank == 0 && arch::verbose_enabled())
    arch::log_verbose("comm: cost parameters %s (%s), eager limit %zu B\n", text.c_str(), what, agreed.eager_limit);
}

void Communicator::Impl::check_global_counts(std::uint64_t count) {
  long long v[2] = {static_cast<long long>(count), -static_cast<long long>(count)};
  long long m[2];
  MPI_Allreduce(v, m, 2, MPI_LONG_LONG, MPI_MAX, world);
  if (m[0] == -m[1]) return;
  std::vector<long long> all(size);
  MPI_Allgather(&v[0], 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, world);
  std::string msg = "taihu::comm allreduce: counts differ across ranks:";
  for (int r = 0; r < size; ++r) msg += " rank " + std::to_string(r) + " has " + std::to_string(all[r]) + ";";
  throw Error(msg + " every rank must pass the same count");
}

template <class T>
void Communicator::Impl::run_flat(MPI_Comm comm, const LinkCost& link, T* data, std::size_t count,
                                  Algorithm algorithm, std::size_t segment_bytes) {
  int p = 1;
  MPI_Comm_size(comm, &p);
  const double bytes = static_cast<double>(count * sizeof(T));
  if (algorithm == Algorithm::automatic) {
    const Choice c = model.best_flat(p, bytes, link);
    algorithm = c.algorithm;
    segment_bytes = c.segment_bytes;
  }
  switch (algorithm) {
    case Algorithm::recursive_doubling:
      detail::recursive_doubling_allreduce(comm, data, count, scratch);
      break;
    case Algorithm::rabenseifner:
      detail::rabenseifner_allreduce(comm, data, count, scratch);
      break;
    default:
      if (segment_bytes == 0) segment_bytes = model.ring_segment(p, bytes, link);
      detail::ring_allreduce(comm, data, count, std::max<std::size_t>(1, segment_bytes / sizeof(T)), scratch);
  }
}

// Chunk of the pipelined top exchange (hierarchical.cpp): the cost model's plan (the
// cheapest of 1, 2, 4, ... chunks), so that its predictions model what runs;
// TAIHU_COMM_PIPELINE=<bytes> overrides (0: off).
std::size_t Communicator::Impl::pipeline_bytes(const Choice& c) const {
  if (pipeline_override >= 0) return static_cast<std::size_t>(pipeline_override);
  return c.pipeline_bytes;
}

Choice Communicator::Impl::resolve(std::size_t bytes, Algorithm requested) const {
  if (requested == Algorithm::automatic) requested = forced;
  Choice c = model.choose(layout, bytes);
  if (requested != Algorithm::automatic && requested != c.algorithm) {
    c.algorithm = requested;
    c.segment_bytes = 0;  // run_flat derives it
    c.pipeline_bytes = requested == Algorithm::hierarchical
                           ? model.hierarchical_plan(layout, static_cast<double>(bytes)).pipeline_bytes
                           : 0;
  }
  // shm needs one node; hierarchical on one node is the shm algorithm.
  if (c.algorithm == Algorithm::shared_memory && layout.nodes() > 1) c.algorithm = Algorithm::hierarchical;
  if (c.algorithm == Algorithm::hierarchical && layout.nodes() == 1) c.algorithm = Algorithm::shared_memory;
  return c;
}

Choice Communicator::choose(std::size_t bytes, Algorithm requested) const {
  return impl_->resolve(bytes, requested);
}

template <class T>
void Communicator::Impl::run(T* data, std::size_t count, Op op, Algorithm requested) {
  if (count > 0 && data == nullptr) throw Error("taihu::comm allreduce: data is null but count is " + std::to_string(count));
  if (check_counts) check_global_counts(count);
  if (size == 1) return;
  const std::size_t bytes = count * sizeof(T);
  const Choice c = resolve(bytes, requested);
  if (arch::verbose_enabled() && rank == 0 && !measuring) {
    const int key = bytes == 0 ? -1 : static_cast<int>(std::log2(static_cast<double>(bytes)));
    auto it = logged.find(key);
    if (it == logged.end() || it->second != c.algorithm) {
      logged[key] = c.algorithm;
      arch::log_verbose("comm: allreduce %zu bytes on %d ranks -> %s (predicted %.1f us)\n", bytes, size,
                        std::string(to_string(c.algorithm)).c_str(), c.predicted_seconds * 1e6);
    }
  }
  // Tier links: tiers[0] joins nodes inside the innermost group, the last one the
  // outermost groups; a communicator spanning all nodes uses the outermost link.
  const std::size_t outer = layout.tier_sizes.size();
  const LinkCost link = layout.nodes() == 1 ? model.params().node_p2p : model.params().tier(outer);
  const bool per_tier = layout.uniform_nodes() && layout.complete_tiers();
  detail::FlatRunner<T> tier_runner = [&](MPI_Comm comm, int tier, T* d, std::size_t n) {
    run_flat(comm, model.params().tier(per_tier ? static_cast<std::size_t>(tier) : outer), d, n,
             Algorithm::automatic, 0);
  };
  switch (c.algorithm) {
    case Algorithm::mpi: {
      std::size_t done = 0;
      while (done < count) {
        const std::size_t n = std::min(detail::kMaxMessageElems, count - done);
        detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + done, static_cast<int>(n), detail::mpi_type<T>(),
                                        MPI_SUM, world),
                          "MPI_Allreduce");
        done += n;
      }
      break;
    }
    case Algorithm::shared_memory:
      detail::shm_allreduce(*shm, data, count);
      break;
    case Algorithm::hierarchical:
      if (layout.uniform_nodes())
        detail::hierarchical_allreduce(*shm, rail_levels, data, count, scratch, tier_runner,
                                       pipeline_bytes(c) / sizeof(T));
      else
        detail::leader_allreduce(*shm, leaders, data, count, tier_runner);
      break;
    case Algorithm::ring:
    case Algorithm::recursive_doubling:
    case Algorithm::rabenseifner:
      run_flat(ordered, link, data, count, c.algorithm, c.segment_bytes);
      break;
    case Algorithm::automatic:
      break;
  }
  if (op == Op::average) detail::divide(data, count, size);
}

Communicator::Communicator(MPI_Comm comm, Options options)
    : impl_(std::make_unique<Impl>(comm, std::move(options))) {}
Communicator::~Communicator() = default;

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }
MPI_Comm Communicator::comm() const { return impl_->world; }
const RankLayout& Communicator::layout() const { return impl_->layout; }
const CostModel& Communicator::cost_model() const { return impl_->model; }

void Communicator::set_cost_params(const CostParams& params) { impl_->agree_on(params, "set_cost_params"); }

void Communicator::allreduce(float* data, std::size_t count, Op op, Algorithm algorithm) {
  impl_->run(data, count, op, algorithm);
}
void Communicator::allreduce(double* data, std::size_t count, Op op, Algorithm algorithm) {
  impl_->run(data, count, op, algorithm);
}

void Communicator::calibrate() {
  CostParams p = probe(impl_->ordered, impl_->node, impl_->layout);
  p.eager_limit = impl_->model.params().eager_limit;  // the library's, read at start-up
  impl_->agree_on(p, "probe");
  p = impl_->model.params();
  p.small = impl_->measure_small_messages();
  impl_->agree_on(p, "probe + small-message table");
  if (impl_->rank == 0) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    const std::string path =
        impl_->options.calibration_cache.empty() ? default_cache_path() : impl_->options.calibration_cache;
    store_calibration(path, calibration_key(impl_->layout, host), impl_->model.params());
  }
}

}  // namespace taihu::comm
