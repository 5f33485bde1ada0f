// conv_cputime: the steadier single-thread A/B of taihu's convolution against oneDNN on
// a shared machine. Per-thread CPU time (CLOCK_THREAD_CPUTIME_ID: time the scheduler
// gives another process is not counted), calls interleaved (taihu on NCHW, taihu in its
// preferred activation layout when that is not NCHW, oneDNN auto, oneDNN direct) with a
// 32 MiB cache flush before each, R rounds; prints the fastest and the median call of
// each and the ratios (oneDNN's better algorithm / taihu; > 1: taihu faster): taihu's
// best layout (dnn::preferred_layout) against oneDNN's (format_tag::any), both with the
// activations already in those layouts (reorders untimed on both sides), and taihu on
// NCHW against the same oneDNN call. The layout columns say what each side used.
// This is how dnn/README.md's first table is measured:
//   conv_cputime [--rounds=5] [--algo=NAME] [--threads=N] [--only=taihu|onednn]
//                [--layout=best|nchw|nChw8c|nchw->nChw8c] problem[:dir] ...
//     --layout: taihu's second layout (default best = preferred_layout(problem))
//     dir: fwd | bwd_d | bwd_w | all (default all)
//     --threads=N (N > 1): both libraries on N threads, timed by wall clock (the
//       per-thread CPU time of the calling thread would miss the others' work)
//     --only: time one library alone (profiling; ratios print as 0)
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

#include "onednn_conv_anchor.hpp"
#include "conv_case.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/dnn/conv.hpp"

namespace {

using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;



void flush_cache() {
  static std::vector<char> junk(32u << 20);
  static char seed = 1;
  for (std::size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + seed);
  ++seed;
}

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

void run(const ConvDesc& d, ConvDirection dir, int rounds, taihu::dnn::ConvAlgo algo) {
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
  std::vector<std::unique_ptr<taihu::bench::OnednnConv>> dnnl;
  for (const char* a : {"auto", "direct"}) {
    if (g_only == "taihu") break;
    auto p = std::make_unique<taihu::bench::OnednnConv>(d, dir, a);
    if (p->available()) dnnl.push_back(std::move(p));
  }
  const bool mine_timed = g_only != "onednn";
  if (mine_timed) taihu_call();
  if (mine_timed && two) blocked_call();
  for (auto& p : dnnl) p->run();
  Timed mine, mine_b;
  std::vector<Timed> theirs(dnnl.size());
  for (int r = 0; r < rounds; ++r) {
    mine.t.push_back(mine_timed ? time_call(taihu_call) : 1e30);
    mine_b.t.push_back(mine_timed && two ? time_call(blocked_call) : mine.t.back());
    for (std::size_t i = 0; i < dnnl.size(); ++i) theirs[i].t.push_back(time_call([&] { dnnl[i]->run(); }));
  }
  double best = 1e30, med = 1e30;
  std::string their_layout = "-";
  for (std::size_t i = 0; i < dnnl.size(); ++i) {
    if (theirs[i].best() < best) their_layout = dnnl[i]->layout();
    best = std::min(best, theirs[i].best());
    med = std::min(med, theirs[i].median());
  }
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
  // taihu in its preferred (or --layout) layout, then on NCHW, against the same oneDNN call.
  const Timed& lay = two ? mine_b : mine;
  const std::string lay_name = taihu::dnn::to_string(two ? layout : ConvLayout{}) +
                               (two && !bconv->layout_native(dir) ? " (reordered)" : "");
  const bool any = !dnnl.empty();
  std::printf("| `%s` | %s | %s | %s | %.1f | %s | %.1f | %.2fx | %.2fx | %s | %.1f | %.2fx |\n", d.str().c_str(),
              taihu::dnn::to_string(dir), taihu::dnn::to_string((two ? *bconv : conv).algorithm(dir)),
              lay_name.c_str(), gf / lay.best(), their_layout.c_str(), any ? gf / best : 0.0,
              any ? best / lay.best() : 0.0, any ? med / lay.median() : 0.0,
              taihu::dnn::to_string(conv.algorithm(dir)), gf / mine.best(), any ? best / mine.best() : 0.0);
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
                 "[--layout=best|nchw|nChw8c|nchw->nChw8c] "
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
  std::printf(
      "| problem | dir | taihu algo | taihu layout | taihu GFLOP/s | oneDNN layout | oneDNN GFLOP/s | ratio (best) | "
      "ratio (median) | NCHW algo | taihu NCHW GFLOP/s | NCHW ratio (best) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& p : problems) {
    const auto colon = p.find(':');
    const ConvDesc d = ConvDesc::parse(p.substr(0, colon));
    const std::string dirs = colon == std::string::npos ? "all" : p.substr(colon + 1);
    if (dirs == "all" || dirs == "fwd") run(d, ConvDirection::forward, rounds, algo);
    if (dirs == "all" || dirs == "bwd_d") run(d, ConvDirection::backward_data, rounds, algo);
    if (dirs == "all" || dirs == "bwd_w") run(d, ConvDirection::backward_weights, rounds, algo);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {  // a bad problem string or option value: say which, no abort
    std::fprintf(stderr, "conv_cputime: %s\n", e.what());
    return 2;
  }
}
