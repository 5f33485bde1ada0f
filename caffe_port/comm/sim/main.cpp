// taihu-allreduce-sim: predicts allreduce times from 2 to 65536 nodes with the
// contention-aware alpha-beta model (simulator.hpp) and writes a table + a PNG plot.
//
//   taihu-allreduce-sim                          # TaihuLight-like preset, 64 MiB
//   taihu-allreduce-sim --bytes 4096 --png small.png
//   taihu-allreduce-sim --preset machine         # this machine, from the calibration cache
//   taihu-allreduce-sim --system "gamma=2.5e-10 tier=rack,32,12.5e9,1.5e-6,1 tier=system,0,12.5e9,3e-6,3"
//                                               (+ exchange=F: share of an uplink large two-way exchanges get)
//   options: --max-nodes N  --ranks-per-node N  --placement block|round_robin  --png FILE
//            --calibration FILE
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/comm/calibration.hpp"
#include "taihu/comm/simulator.hpp"
#include "taihu/comm/sim_plot.hpp"

namespace sim = taihu::comm::sim;

namespace {

struct Args {
  std::string preset = "taihulight", system, png = "allreduce_sim.png", calibration;
  double bytes = 64.0 * 1024 * 1024;
  int max_nodes = 65536;
  std::string placement;
  std::optional<int> ranks_per_node;  // unset: the preset's (TaihuLight: 4) or the description's
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw taihu::Error(k + " needs a value");
      return argv[++i];
    };
    try {
      if (k == "--preset") a.preset = value();
      else if (k == "--system") a.system = value();
      else if (k == "--bytes") a.bytes = std::stod(value());
      else if (k == "--max-nodes") a.max_nodes = std::stoi(value());
      else if (k == "--png") a.png = value();
      else if (k == "--calibration") a.calibration = value();
      else if (k == "--placement") a.placement = value();
      else if (k == "--ranks-per-node") a.ranks_per_node = std::stoi(value());
      else if (k == "--help" || k == "-h") {
        std::printf("usage: taihu-allreduce-sim [--preset taihulight|machine] [--system DESC] [--bytes N]\n"
                    "       [--max-nodes N] [--ranks-per-node N] [--placement block|round_robin] [--png FILE]\n"
                    "       [--calibration FILE]\n");
        std::exit(0);
      } else {
        throw taihu::Error("unknown argument '" + k + "' (try --help)");
      }
    } catch (const std::invalid_argument&) {
      throw taihu::Error(k + ": not a number");
    }
  }
  if (!(a.bytes > 0)) throw taihu::Error("--bytes must be > 0");
  if (a.max_nodes < 2 || a.max_nodes > (1 << 20)) throw taihu::Error("--max-nodes must be in [2, 1048576]");
  if (a.preset != "taihulight" && a.preset != "machine") throw taihu::Error("--preset must be taihulight or machine");
  if (a.ranks_per_node && *a.ranks_per_node < 1) throw taihu::Error("--ranks-per-node must be >= 1");
  return a;
}

// This machine's link from the calibration cache (first entry): the tier between
// (fake) nodes if probed, else the node's point-to-point link.
sim::System machine(int nodes, const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw taihu::Error("calibration cache '" + path +
                       "' not found: run e.g. `TAIHU_COMM_PROBE=always mpirun -np 2 bench_allreduce --max-bytes 4` first");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find(' ');
    const auto p = taihu::comm::parse_calibration(line.substr(space + 1), path);
    const auto link = p.tiers.empty() ? p.node_p2p : p.tiers[0];
    return sim::single_tier(nodes, link.alpha, link.beta, p.gamma, "this machine (" + line.substr(0, space) + ")");
  }
  throw taihu::Error("calibration cache '" + path + "' has no entries");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    auto make = [&](int nodes) {
      sim::System s = !a.system.empty() ? sim::parse_system(a.system, nodes)
                      : a.preset == "machine" ? machine(nodes, a.calibration.empty() ? taihu::comm::default_cache_path() : a.calibration)
                                              : sim::taihulight(nodes);
      if (a.ranks_per_node) s.ranks_per_node = *a.ranks_per_node;  // predict() checks the node link
      if (a.placement == "round_robin") s.placement = sim::Placement::round_robin;
      else if (a.placement == "block") s.placement = sim::Placement::block;
      else if (!a.placement.empty()) throw taihu::Error("--placement must be block or round_robin");
      return s;
    };
    sim::rank_level(make(1024));  // a bad system fails here, before any output
    std::printf("%s\nmessage %.0f bytes; times in ms; flat_default = MPICH rule (recursive doubling <= 2 KiB, "
                "else Rabenseifner)\n",
                sim::describe(make(1024)).c_str(), a.bytes);
    const std::vector<sim::SimAlgorithm> algs = {sim::SimAlgorithm::ring, sim::SimAlgorithm::recursive_doubling,
                                                 sim::SimAlgorithm::rabenseifner, sim::SimAlgorithm::flat_default,
                                                 sim::SimAlgorithm::hierarchical, sim::SimAlgorithm::topology_aware};
    std::printf("%8s", "nodes");
    for (auto g : algs) std::printf(" %15s", sim::name(g));
    std::printf(" %12s\n", "flat/topo");
    std::vector<sim::Series> series(algs.size());
    const unsigned colors[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0x7f7f7f, 0x9467bd, 0xd62728};
    for (std::size_t i = 0; i < algs.size(); ++i) {
      series[i].label = sim::name(algs[i]);
      series[i].color = colors[i];
    }
    for (int n = 2; n <= a.max_nodes; n *= 2) {
      const sim::System s = make(n);
      std::printf("%8d", n);
      double flat = 0, hier = 0;
      for (std::size_t i = 0; i < algs.size(); ++i) {
        const double t = sim::predict(s, algs[i], a.bytes);
        std::printf(" %15.4f", t * 1e3);
        series[i].x.push_back(n);
        series[i].y.push_back(t);
        if (algs[i] == sim::SimAlgorithm::flat_default) flat = t;
        if (algs[i] == sim::SimAlgorithm::topology_aware) hier = t;
      }
      std::printf(" %11.2fx\n", hier > 0 ? flat / hier : 0.0);
    }
    if (!a.png.empty()) {
      char title[128];
      std::snprintf(title, sizeof(title), "ALLREDUCE %.0f BYTES", a.bytes);
      sim::write_loglog_png(a.png, title, "NODES", "SECONDS", series);
      std::printf("plot: %s\n", a.png.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "taihu-allreduce-sim: %s\n", e.what());
    return 1;
  }
  return 0;
}
