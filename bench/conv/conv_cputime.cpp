// conv_cputime: the steadier single-thread A/B of taihu's convolution against oneDNN on
// a shared machine. Per-thread CPU time (CLOCK_THREAD_CPUTIME_ID: time the scheduler
// gives another process is not counted), calls interleaved (taihu on NCHW, taihu in its
// preferred activation layout when that is not NCHW, oneDNN 2.x auto and direct, oneDNN
// 3.x auto and direct) with a 96 MiB cache flush before each, R rounds; prints the
// fastest and the median call of each and the ratios (> 1: taihu faster): taihu's best
// layout (dnn::preferred_layout) against the faster oneDNN (format_tag::any), both with
// the activations already in those layouts (reorders untimed on both sides), then
// against each oneDNN alone, and taihu on NCHW against the same oneDNN call. Each
// oneDNN's implementation and layout are printed, so a fallback (gemm, ref) shows.
// oneDNN 3.x is PyPI's (scripts/anchors), run in onednn3_conv_server: its calls are
// flushed and timed there, with that process's CPU clock at 1 thread (the primitive
// runs on a SYCL worker thread there; see onednn3_conv_client.hpp). Without it the
// 3.x columns read "-" / 0 and the ratios are against 2.x, after a one-line notice.
// This is how dnn/README.md's first table is measured:
//   conv_cputime [--rounds=5] [--algo=NAME] [--threads=N] [--only=taihu|onednn]
//                [--layout=best|nchw|nChw8c|nChw16c|nchw->nChw8c] problem[:dir] ...
//     --layout: taihu's second layout (default best = preferred_layout(problem))
//     dir: fwd | bwd_d | bwd_w | all (default all)
//     --threads=N (N > 1): all libraries on N threads (oneDNN 3's server on the first N
//       CPUs), timed by wall clock (the per-thread CPU time of the calling thread would
//       miss the others' work)
//     --only: time one side alone (taihu, or both oneDNNs; profiling; ratios print as 0)
//     --no-flush: no cache flush between calls (warm caches: what is left is compute)
//   AB_VAR=NAME AB_VALUES=v1,v2,..: also times taihu alone with the environment
//     variable NAME set to each value in turn, interleaved call by call (3 x rounds
//     calls each), for A/B of an experimental knob that the library reads per call
//     (no such knob is committed; this is the steadier way to decide one under load)
//   conv_cputime mb64ic32ih8oc64oh8kh5ph2:fwd g2mb1ic96ih27oc256oh27kh5ph2
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "onednn3_conv_client.hpp"
#include "onednn_conv_anchor.hpp"
#include "bench_common.hpp"
#include "cache_flush.hpp"
#include "conv_case.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;



using taihu::bench::flush_cache;

struct Timed {
  std::vector<double> t;
  double best() const { return *std::min_element(t.begin(), t.end()); }
  double median() const {
    auto v = t;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
};

bool g_wall_clock = false;  // more than one thread: wall-clock time
bool g_flush = true;        // flush the caches before each call (--no-flush: warm)
std::string g_only;         // "", "taihu" or "onednn"
std::string g_layout = "best";

double time_call(const std::function<void()>& f) {
  if (g_flush) flush_cache();
  const double t0 = g_wall_clock ? taihu::arch::now_seconds() : taihu::arch::thread_cpu_seconds();
  f();
  return (g_wall_clock ? taihu::arch::now_seconds() : taihu::arch::thread_cpu_seconds()) - t0;
}

// One oneDNN primitive (2.x in this process, or 3.x in its server) and its timings.
struct Peer {
  int major;  // 2 or 3
  std::string impl, layout;
  std::function<double()> timed_call;  // one call, its seconds
  Timed t;
};

// The fastest of one oneDNN's primitives (auto, direct): best and median seconds, and
// the implementation and layout of the one with the best call.
struct PeerBest {
  double best = 1e30, median = 1e30;
  std::string impl = "-", layout = "-";
  bool found = false;
};
PeerBest best_of(const std::vector<Peer>& peers, int major) {
  PeerBest b;
  for (const auto& p : peers) {
    if (p.major != major) continue;
    if (p.t.best() < b.best) {
      b.best = p.t.best();
      b.impl = p.impl;
      b.layout = p.layout;
    }
    b.median = std::min(b.median, p.t.median());
    b.found = true;
  }
  return b;
}

void run(const ConvDesc& d, ConvDirection dir, int rounds, taihu::dnn::ConvAlgo algo, int threads) {
  using taihu::dnn::ConvLayout;
  const ConvLayout layout =
      g_layout == "best" ? taihu::dnn::preferred_layout(d) : taihu::dnn::parse_conv_layout(g_layout);
  const bool two = layout != ConvLayout{};  // a second taihu call in the other layout
  taihu::bench::ConvCase data(d);
  taihu::dnn::Convolution conv(d, algo);
  auto taihu_call = [&] { data.run(conv, dir); };
  std::unique_ptr<taihu::bench::ConvCase> bdata;
  std::unique_ptr<taihu::dnn::Convolution> bconv;
  if (two) {
    bdata = std::make_unique<taihu::bench::ConvCase>(d, layout);
    bconv = std::make_unique<taihu::dnn::Convolution>(d, algo, layout);
  }
  auto blocked_call = [&] { bdata->run(*bconv, dir); };
  // oneDNN 2.x (linked) and 3.x (onednn3_conv_server; it flushes and times each call
  // itself, with its process CPU clock at 1 thread: see onednn3_conv_client.hpp).
  std::vector<std::unique_ptr<taihu::bench::OnednnConv>> dnnl2;
  std::vector<std::unique_ptr<taihu::bench::Onednn3Conv>> dnnl3;
  std::vector<Peer> peers;
  for (const char* a : {"auto", "direct"}) {
    if (g_only == "taihu") break;
    auto p = std::make_unique<taihu::bench::OnednnConv>(d, dir, a);
    if (!p->available()) continue;
    auto* raw = p.get();
    peers.push_back({2, p->implementation(), p->layout(), [raw] { return time_call([raw] { raw->run(); }); }, {}});
    dnnl2.push_back(std::move(p));
  }
  for (const char* a : {"auto", "direct"}) {
    if (g_only == "taihu") break;
    auto p = std::make_unique<taihu::bench::Onednn3Conv>(d, dir, a, threads, !g_wall_clock);
    if (!p->available()) continue;
    auto* raw = p.get();
    peers.push_back({3, p->implementation(), p->layout(), [raw] { return raw->run(g_flush); }, {}});
    dnnl3.push_back(std::move(p));
  }
  const bool mine_timed = g_only != "onednn";
  if (mine_timed) taihu_call();
  if (mine_timed && two) blocked_call();
  for (auto& p : peers) p.timed_call();  // warm-up: page faults, first-call setup
  Timed mine, mine_b;
  // The contenders in a fresh random order each round (fixed seed: the same sequence
  // every run), so none always runs right after another's calls. In a fixed order
  // taihu ran after the oneDNN 3 server's calls and both flushes, and at 2 threads found
  // its OpenMP worker asleep every time (LeNet conv2 batch 1: 29 GFLOP/s against 55-68
  // without the server in the run); a rotation still gave each contender the same
  // predecessor every round (taihu after the server's direct call: LeNet conv1 batch 64
  // forward at 2 threads, under chrt, 44 GFLOP/s in some processes against 120 for
  // oneDNN 2.6; 1.02-1.05x with the order shuffled).
  std::vector<std::function<void()>> order;
  order.push_back([&] { mine.t.push_back(mine_timed ? time_call(taihu_call) : 1e30); });
  if (two) order.push_back([&] { mine_b.t.push_back(mine_timed ? time_call(blocked_call) : 1e30); });
  for (auto& p : peers) order.push_back([&p] { p.t.t.push_back(p.timed_call()); });
  std::mt19937 shuffle_rng(20261129u);
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (auto& call : order) call();
  }
  if (!two) mine_b = mine;
  const PeerBest v2 = best_of(peers, 2), v3 = best_of(peers, 3);
  const double best = std::min(v2.best, v3.best), med = std::min(v2.median, v3.median);
  const double gf = d.forward_flops() * 1e-9;
  if (const char* var = std::getenv("AB_VAR")) {  // A/B of a knob: its values interleaved
    std::vector<std::string> vals;
    const char* values = std::getenv("AB_VALUES");
    const std::string all = values ? values : "";
    for (std::size_t b = 0, e; b <= all.size(); b = e + 1) {
      e = all.find(',', b);
      if (e == std::string::npos) e = all.size();
      vals.push_back(all.substr(b, e - b));
    }
    std::vector<Timed> ab(vals.size());
    for (int r = 0; r < 3 * rounds; ++r)
      for (std::size_t v = 0; v < vals.size(); ++v) {
        setenv(var, vals[v].c_str(), 1);
        ab[v].t.push_back(time_call(two ? std::function<void()>(blocked_call) : std::function<void()>(taihu_call)));
      }
    std::printf("AB %s %s (%s):", d.str().c_str(), taihu::dnn::to_string(dir),
                taihu::dnn::to_string(two ? layout : ConvLayout{}).c_str());
    for (std::size_t v = 0; v < vals.size(); ++v)
      std::printf("  %s=%s best %.1f med %.1f", var, vals[v].c_str(), gf / ab[v].best(), gf / ab[v].median());
    std::printf("\n");
  }
  // taihu in its preferred (or --layout) layout, then on NCHW, against the faster
  // oneDNN (ratios > 1: taihu faster); each oneDNN's own ratio and choice beside it.
  const Timed& lay = two ? mine_b : mine;
  const std::string lay_name = taihu::dnn::to_string(two ? layout : ConvLayout{}) +
                               (two && !bconv->layout_native(dir) ? " (reordered)" : "");
  const auto rate = [&](const PeerBest& p, double s) { return p.found ? gf / s : 0.0; };
  const auto ratio = [&](bool found, double theirs, double ours) { return found ? theirs / ours : 0.0; };
  const bool any = v2.found || v3.found;
  std::printf(
      "| `%s` | %s | %s | %s | %.1f | %s %s | %.1f | %s %s | %.1f | %.1f | %.2fx | %.2fx | %.2fx | %.2fx | %s | %.1f | "
      "%.2fx |\n",
      d.str().c_str(), taihu::dnn::to_string(dir), taihu::dnn::to_string((two ? *bconv : conv).algorithm(dir)),
      lay_name.c_str(), gf / lay.best(), v2.impl.c_str(), v2.layout.c_str(), rate(v2, v2.best), v3.impl.c_str(),
      v3.layout.c_str(), rate(v3, v3.best), rate(v3, v3.median), ratio(any, best, lay.best()),
      ratio(any, med, lay.median()), ratio(v2.found, v2.best, lay.best()), ratio(v3.found, v3.best, lay.best()),
      taihu::dnn::to_string(conv.algorithm(dir)), gf / mine.best(), ratio(any, best, mine.best()));
  std::fflush(stdout);
}

}  // namespace

namespace {

int run_main(int argc, char** argv) {
  int rounds = 5, threads = 1;
  taihu::dnn::ConvAlgo algo = taihu::dnn::ConvAlgo::automatic;
  std::vector<std::string> problems;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--rounds=", 0) == 0)
      rounds = std::max(1, std::atoi(a.c_str() + 9));
    else if (a.rfind("--threads=", 0) == 0)
      threads = std::max(1, std::atoi(a.c_str() + 10));
    else if (a == "--no-flush")
      g_flush = false;
    else if (a.rfind("--only=", 0) == 0)
      g_only = a.substr(7);
    else if (a.rfind("--layout=", 0) == 0)
      g_layout = a.substr(9);
    else if (a.rfind("--algo=", 0) == 0)
      algo = taihu::dnn::parse_conv_algo(a.substr(7));
    else if (a.rfind("--", 0) == 0 && a != "--help") {
      std::fprintf(stderr, "conv_cputime: unknown option '%s'\n", a.c_str());
      return 2;
    } else if (a != "--help")
      problems.push_back(a);
  }
  if (problems.empty()) {
    std::fprintf(stderr,
                 "usage: conv_cputime [--rounds=5] [--algo=NAME] [--threads=N] [--only=taihu|onednn] [--no-flush] "
                 "[--layout=best|nchw|nChw8c|nChw16c|nchw->nChw8c] "
                 "problem[:fwd|bwd_d|bwd_w|all] ...\n");
    return 2;
  }
  if (g_only != "" && g_only != "taihu" && g_only != "onednn") {
    std::fprintf(stderr, "conv_cputime: --only must be taihu or onednn, not '%s'\n", g_only.c_str());
    return 2;
  }
  g_wall_clock = threads > 1;
  taihu::arch::set_num_threads(threads);
  omp_set_num_threads(threads);  // oneDNN's OpenMP runtime
  std::printf("threads: %d, timed by %s\n", threads, g_wall_clock ? "wall clock" : "per-thread CPU time");
  if (g_only != "taihu") {  // which oneDNN 3 runs, or the one-line notice that it is missing
    const std::string v3 = taihu::bench::onednn3_version(threads);
    std::printf("oneDNN 3: %s\n", v3.empty() ? "not available (2.x only)" : v3.c_str());
  }
  std::printf(
      "| problem | dir | taihu algo | taihu layout | taihu GFLOP/s | oneDNN 2 impl, layout | oneDNN 2 GFLOP/s | "
      "oneDNN 3 impl, layout | oneDNN 3 GFLOP/s | oneDNN 3 median GFLOP/s | ratio (best) | ratio (median) | "
      "vs 2 (best) | vs 3 (best) | NCHW algo | taihu NCHW GFLOP/s | NCHW ratio (best) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& p : problems) {
    const auto colon = p.find(':');
    const ConvDesc d = ConvDesc::parse(p.substr(0, colon));
    const std::string dirs = colon == std::string::npos ? "all" : p.substr(colon + 1);
    if (dirs == "all" || dirs == "fwd") run(d, ConvDirection::forward, rounds, algo, threads);
    if (dirs == "all" || dirs == "bwd_d") run(d, ConvDirection::backward_data, rounds, algo, threads);
    if (dirs == "all" || dirs == "bwd_w") run(d, ConvDirection::backward_weights, rounds, algo, threads);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::printf("machine: %s\n", taihu::bench::machine_description().c_str());
    return run_main(argc, argv);
  } catch (const std::exception& e) {  // a bad problem string or option value: say which, no abort
    std::fprintf(stderr, "conv_cputime: %s\n", e.what());
    return 2;
  }
}
