// bench_autotune: for each shipped DSL spec, tune within a budget, then time in one
// process: the tuned Halide schedule, Halide's default schedule, the Mullapudi2016,
// Li2018 and Adams2019 autoschedules, and taihu's hand kernel for the operator
// (taihu::gemm sgemm for gemm / batched matmul; taihu::dnn conv and softmax when dnn
// is built). Prints a table with ratios and the tuning time.
// Contenders are timed in 7 interleaved rounds of ~0.1 s (best median of each kept):
// other processes' load only adds time, and a burst of it must not decide a ratio; each
// block of calls starts after a 100 ms pause and at least 3 untimed calls lasting 20 ms,
// so no other contender's idle workers (OpenMP's or Halide's, which spin after their
// last task) share the cores with it. On a busy
// machine the hand kernels' OpenMP barriers suffer most (active waiting against
// descheduled threads): compare on a quiet machine, or see OMP_WAIT_POLICY in
// autotune/README.md.
//   bench_autotune [--budget 2m] [--specs gemm,conv2d,...] [--threads 2] [--log FILE] [--seed S] [--rounds 7]
//                  [--anchors default,Mullapudi2016,Li2018,Adams2019]   (Adams2019 takes minutes on stencils)
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/measure.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/tuner.hpp"
#include "taihu/gemm/gemm.hpp"
#ifdef TAIHU_BENCH_HAVE_DNN
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/softmax.hpp"
#endif

namespace ta = taihu::autotune;

namespace {

struct Case {
  std::string spec, shape;
};

const std::vector<Case> kCases = {
    {"gemm", "M=512,N=512,K=512"},
    {"batched_matmul", "BATCH=32,M=64,N=64,K=64"},
    {"conv2d", "N=1,C=64,H=28,W=28,KO=64,R=3,S=3,P=1"},
    {"depthwise_conv", "N=1,C=128,H=56,W=56,R=3,S=3,P=1"},
    {"softmax", "ROWS=2048,COLS=1024"},
    {"stencil7", "Z=128,Y=128,X=128,T=2"},
    {"stencil25", "Z=96,Y=96,X=96,T=2"},
};

// taihu's hand kernel for a case, or an empty function when none exists.
std::function<void(const std::vector<const float*>&, float*)> hand_kernel(const ta::Problem& p, std::string* name) {
  const std::string op = p.spec().name;
  if (op == "gemm") {
    *name = "taihu::gemm sgemm";
    const auto m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
    return [=](const std::vector<const float*>& in, float* out) {
      taihu::gemm::sgemm(taihu::gemm::Layout::row_major, taihu::gemm::Trans::no, taihu::gemm::Trans::no, m, n, k, 1.0f, in[0], k, in[1], n,
                         0.0f, out, n);
    };
  }
  if (op == "batched_matmul") {
    *name = "taihu::gemm sgemm_batch_strided";
    const auto b = p.dim("BATCH"), m = p.dim("M"), n = p.dim("N"), k = p.dim("K");
    return [=](const std::vector<const float*>& in, float* out) {
      taihu::gemm::sgemm_batch_strided(taihu::gemm::Layout::row_major, taihu::gemm::Trans::no, taihu::gemm::Trans::no, m, n, k, 1.0f,
                                       in[0], k, m * k, in[1], n, k * n, 0.0f, out, n, m * n, b);
    };
  }
#ifdef TAIHU_BENCH_HAVE_DNN
  if (op == "conv2d" || op == "depthwise_conv") {
    taihu::dnn::ConvDesc d;
    d.n = p.dim("N");
    d.c = p.dim("C");
    d.h = p.dim("H");
    d.w = p.dim("W");
    d.k = op == "conv2d" ? p.dim("KO") : p.dim("C");
    d.kh = p.dim("R");
    d.kw = p.dim("S");
    d.pad_h = d.pad_w = p.dim("P");
    d.groups = op == "conv2d" ? 1 : p.dim("C");
    auto conv = std::make_shared<taihu::dnn::Convolution>(d);
    *name = std::string("taihu::dnn conv (") + taihu::dnn::to_string(conv->algorithm()) + ")";
    return [conv](const std::vector<const float*>& in, float* out) {
      conv->forward(in[0], in[1], nullptr, out, taihu::dnn::WeightsHint::unchanged);
    };
  }
  if (op == "softmax") {
    *name = "taihu::dnn softmax_forward";
    const auto rows = p.dim("ROWS"), cols = p.dim("COLS");
    return [=](const std::vector<const float*>& in, float* out) { taihu::dnn::softmax_forward<float>(rows, cols, 1, in[0], out); };
  }
#endif
  *name = op.rfind("stencil", 0) == 0 ? "none (stencil/ propagators are wave-equation solvers, not this update)"
                                      : "none (dnn/ not built)";
  return {};
}

std::string fmt_ms(double s) {
  if (std::isnan(s)) return "-";  // not run (or failed: see the notes)
  if (!(s > 0) || !std::isfinite(s)) return "fail";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    double budget = 120;
    int threads = taihu::arch::num_threads();
    std::string only, log = "bench_autotune.jsonl";
    std::uint64_t seed = 1;
    int rounds = 7;
    std::string anchors = ",default,Mullapudi2016,Li2018,Adams2019,";
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::printf(
            "usage: bench_autotune [--budget 2m|90] [--specs gemm,conv2d,...] [--threads N] [--log FILE]\n"
            "                      [--seed S] [--rounds 7] [--anchors default,Mullapudi2016,Li2018,Adams2019]\n"
            "Tunes each spec within the budget (resuming from --log), then times the tuned kernel,\n"
            "Halide's autoschedules and taihu's hand kernel in interleaved rounds.\n");
        return 0;
      }
    }
    if (argc % 2 == 0) throw taihu::Error("options come in pairs (--name value); see --help");
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string k = argv[i], v = argv[i + 1];
      if (k == "--budget") budget = std::stod(v) * (v.back() == 'm' ? 60 : 1);
      else if (k == "--specs") only = "," + v + ",";
      else if (k == "--threads") threads = std::stoi(v);
      else if (k == "--log") log = v;
      else if (k == "--seed") seed = std::stoull(v);
      else if (k == "--rounds") rounds = std::max(1, std::stoi(v));
      else if (k == "--anchors") anchors = "," + v + ",";
      else throw taihu::Error("unknown option " + k);
    }
    taihu::arch::set_num_threads(threads);
    std::printf("bench_autotune: budget %.0f s per operator, %d threads, log %s (times in ms, median)\n\n", budget, threads, log.c_str());
    std::printf("| spec | shape | tuned | default | Mullapudi2016 | Li2018 | Adams2019 | hand kernel | tuned vs best Halide auto | tuned vs hand | trials | tuning s |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<std::string> notes;
    for (const auto& c : kCases) {
      if (!only.empty() && only.find("," + c.spec + ",") == std::string::npos) continue;
      ta::Problem p(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + c.spec + ".tdsl"), ta::parse_shape(c.shape));
      ta::Space space(p);
      ta::TuneOptions o;
      o.budget_s = budget;
      o.threads = threads;
      o.seed = seed;
      o.log_path = log;
      taihu::arch::Stopwatch tclock;
      ta::TuneResult r = ta::tune(p, space, o);
      const double tuning_s = tclock.seconds();
      auto in = ta::random_inputs(p, 99);
      std::vector<const float*> ptrs;
      for (const auto& n : p.inputs()) ptrs.push_back(in[n].data());
      std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()));
      ta::MeasureOptions mo;
      mo.target_seconds = 0.1;
      mo.min_repeats = 5;
      mo.pause_s = 0.1;  // each block of calls starts with no other contender's workers awake
      mo.warmup = 3;
      mo.warmup_s = 0.02;  // ... and after 20 ms of its own untimed calls
      // Every contender is built first, then timed in `rounds` interleaved rounds; each
      // keeps its best median (load from other processes hits all of them alike).
      struct Contender {
        std::string name;
        std::function<void()> run;
        double best = INFINITY;
      };
      std::vector<Contender> contenders;
      std::vector<std::unique_ptr<ta::Kernel>> kernels;
      int algo = 0;
      if (!r.best.empty()) {
        const ta::Schedule s = space.schedule(r.best);
        algo = s.algorithm;
        kernels.push_back(ta::build_checked(p, s, o));
        ta::Kernel* k = kernels.back().get();
        contenders.push_back({"tuned", [&, k] { k->run(ptrs, out.data()); }});
      }
      for (const char* a : {"default", "Mullapudi2016", "Li2018", "Adams2019"}) {
        std::string listed = ",";  // (not "," + std::string(a) + ",": GCC 12 -Wrestrict)
        listed.append(a).append(",");
        if (anchors.find(listed) == std::string::npos) continue;
        for (int al = 0; al < p.algorithm_count(); ++al) {  // the anchor gets every algorithm too
          // ... except a derived winograd one: its statements are its base's (the same
          // direct loops again); an autoscheduler cannot turn them into Winograd.
          if (p.is_winograd(al)) continue;
          try {
            kernels.push_back(ta::make_halide_autoscheduled(p, al, a, threads));
            ta::Kernel* k = kernels.back().get();
            contenders.push_back({a, [&, k] { k->run(ptrs, out.data()); }});
          } catch (const std::exception& e) {
            notes.push_back(c.spec + " " + a + ": " + std::string(e.what()).substr(0, 200));
          }
        }
      }
      std::string hand_name;
      auto hand = hand_kernel(p, &hand_name);
      if (hand) contenders.push_back({"hand", [&] { hand(ptrs, out.data()); }});
      for (int round = 0; round < rounds; ++round)
        for (auto& k : contenders) k.best = std::min(k.best, ta::measure(k.run, mo).median_s);
      auto best_of = [&](const std::string& name) {
        double t = NAN;
        for (const auto& k : contenders)
          if (k.name == name && !(t <= k.best)) t = k.best;
        return t;
      };
      const double tuned = best_of("tuned"), hand_t = best_of("hand");
      std::map<std::string, double> auto_t;
      for (const char* a : {"default", "Mullapudi2016", "Li2018", "Adams2019"}) auto_t[a] = best_of(a);
      double best_auto = INFINITY;
      for (const char* a : {"Mullapudi2016", "Li2018", "Adams2019"})
        if (auto_t[a] > 0) best_auto = std::min(best_auto, auto_t[a]);
      char ratio_auto[32] = "-", ratio_hand[32] = "-";
      if (tuned > 0 && std::isfinite(best_auto)) std::snprintf(ratio_auto, sizeof ratio_auto, "%.2fx", best_auto / tuned);
      if (tuned > 0 && hand_t > 0) std::snprintf(ratio_hand, sizeof ratio_hand, "%.2fx", hand_t / tuned);
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.0f |\n", c.spec.c_str(), c.shape.c_str(), fmt_ms(tuned).c_str(),
                  fmt_ms(auto_t["default"]).c_str(), fmt_ms(auto_t["Mullapudi2016"]).c_str(), fmt_ms(auto_t["Li2018"]).c_str(),
                  fmt_ms(auto_t["Adams2019"]).c_str(), hand ? fmt_ms(hand_t).c_str() : "-", ratio_auto, ratio_hand, r.trials, tuning_s);
      std::fflush(stdout);
      notes.push_back(c.spec + ": hand kernel = " + hand_name + "; tuner's own median " + fmt_ms(r.best_s) + " ms; tuned schedule: " + (r.best.empty() ? "none" : space.describe(r.best)) +
                      (p.algorithm_count() > 1 ? " (algorithm " + p.spec().algorithms[static_cast<std::size_t>(algo)].name + ")" : ""));
    }
    std::printf("\n");
    for (const auto& n : notes) std::printf("- %s\n", n.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_autotune: %s\n", e.what());
    return 1;
  }
}
