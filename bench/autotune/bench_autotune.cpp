// bench_autotune: for each shipped DSL spec, tune within a budget, then time: the tuned
// Halide schedule, Halide's default schedule, the Mullapudi2016, Li2018 and Adams2019
// autoschedules, and taihu's hand kernel for the operator (taihu::gemm sgemm for gemm /
// batched matmul; taihu::dnn conv and softmax when dnn is built). Prints a table with
// ratios and the tuning time.
// The final comparison runs in a fresh child process (this program with --compare),
// not in the tuning process: every contender is JIT-compiled there from its schedule,
// the tuned one from the record the tuner chose, on fresh buffers, with one Halide
// thread pool and one OpenMP pool that nothing else has used. Contenders are timed in
// 12 interleaved rounds (each round starts at the next contender, so none always
// follows the same one) of ~0.06 s (at most 50 calls) each; a contender's score is the
// median of its block medians, less the rounds during which another process held a
// core (ta::summarize_rounds) -- the statistic the tuner's confirmation ranks by
// (the lowest block would be each contender's luckiest moment on a machine whose core
// speed changes 2-3x from one block to the next; see autotune/README.md). Each block of
// calls starts after a 100 ms pause and at least 3 untimed calls lasting 20 ms, so no
// other contender's idle workers (OpenMP's or Halide's, which spin after their last
// task) share the cores with it.
// Today's peers, when scripts/anchors installed them (build/anchors/venv), each in its
// own child after taihu's timing child has exited (bench/autotune/anchors/*.py, one JSON
// object each; no timing overlaps another, nor TVM's tuning):
//   tvm       TVM MetaSchedule, given the same wall-clock budget per spec as taihu-tune
//             (its time limit is checked between batches of --tvm-per-iter trials, so it
//             may overrun by a batch: the table gives its trials and tuning seconds);
//             conv2d is tuned as direct loops and as Winograd F(4x4,3x3), the best counts.
//   halide21  Halide 21's CPU autoschedulers (the ones of Adams2019, Li2018, Mullapudi2016
//             listed in --anchors, all three when none is), the spec written in its
//             Python front end like autotune's Halide lowering; the best one counts.
// Both are timed by the scripts with the statistic below (median of block medians).
// They are on by default; without the venv the notice "anchor ... not installed: run
// scripts/anchors" is printed once and the table keeps its Halide 14 columns.
// `--final in-process` times them in the tuning process instead (the old way, for A/B).
// On a busy machine the hand kernels' OpenMP barriers suffer most (active waiting
// against descheduled threads): compare on a quiet machine, or see OMP_WAIT_POLICY in
// autotune/README.md.
//   bench_autotune [--budget 2m] [--specs gemm,conv2d,...] [--threads 2] [--log FILE] [--seed S] [--rounds 12]
//                  [--anchors default,Mullapudi2016,Li2018,Adams2019,tvm,halide21]   (Adams2019 takes minutes on stencils)
//                  [--final child|in-process] [--tvm-per-iter 8]
//   bench_autotune --suite dnn [--budget-per-layer 20s] [--layers ...] [--batch 1,32] [--anchors tvm|none] ...
//     (the DNN layer suite: bench_conv's layers tuned, vs dnn's best entry and TVM; dnn_suite.hpp)
//   bench_autotune --check-child-cpus [--threads N]
//     (launches a comparison child the way the table does and checks it may run on N
//      CPUs -- the OpenMP places' CPUs, not the calling thread's mask, which
//      OMP_PROC_BIND=true narrows to one; exit status 1 when it may not)
//   bench_autotune --compare SPEC --schedule RECORD.jsonl [--threads N] [--seed S] [--rounds R] [--anchors ...|none]
//     (the child: times the contenders for SPEC, the tuned schedule read from the first
//      line of RECORD.jsonl -- further lines are contenders tuned#2, tuned#3, ..., for
//      A/B runs of several schedules in one process -- and prints "cpus N" / "time NAME
//      SECONDS" / "hand NAME" / "note TEXT")
#include <omp.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "anchor_registry.hpp"
#include "bench_common.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/interpreter.hpp"
#include "taihu/autotune/measure.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/autotune/tuner.hpp"
#include "taihu/gemm/gemm.hpp"
#ifdef TAIHU_BENCH_HAVE_DNN
#include "dnn_suite.hpp"
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

const char* const kAnchors[] = {"default", "Mullapudi2016", "Li2018", "Adams2019"};

// The raw text of `key`'s value in the JSON object `obj` (top level only, so a nested
// object's field of the same name is not taken), or "" when absent. Enough for the
// one-object output of the anchor scripts; not a general JSON parser.
std::string json_field(const std::string& obj, const std::string& key) {
  int depth = 0;
  for (std::size_t i = 0; i < obj.size(); ++i) {
    const char ch = obj[i];
    if (ch == '"') {
      std::size_t j = i + 1;
      for (; j < obj.size() && obj[j] != '"'; ++j)
        if (obj[j] == '\\') ++j;
      const std::string name = obj.substr(i + 1, j - i - 1);
      i = j;
      if (depth != 1 || name != key) continue;
      std::size_t v = obj.find_first_not_of(" \t\n", i + 1);
      if (v == std::string::npos || obj[v] != ':') continue;  // (a string value, not a key)
      v = obj.find_first_not_of(" \t\n", v + 1);
      if (v == std::string::npos) return "";
      std::size_t e = v;
      int d = 0;
      bool in_str = false;
      for (; e < obj.size(); ++e) {
        const char c = obj[e];
        if (in_str) {
          if (c == '\\') ++e;
          else if (c == '"') in_str = false;
          continue;
        }
        if (c == '"') in_str = true;
        else if (c == '{' || c == '[') ++d;
        else if (c == '}' || c == ']') {
          if (d == 0) break;
          --d;
        } else if (c == ',' && d == 0) break;
      }
      std::string val = obj.substr(v, e - v);
      while (!val.empty() && (val.back() == ' ' || val.back() == '\n')) val.pop_back();
      return val;
    }
    if (ch == '{' || ch == '[') ++depth;
    else if (ch == '}' || ch == ']') --depth;
  }
  return "";
}
double json_number(const std::string& obj, const std::string& key) {
  const std::string v = json_field(obj, key);
  if (v.empty() || v == "null") return NAN;
  return std::strtod(v.c_str(), nullptr);
}
std::string json_string(const std::string& obj, const std::string& key) {
  std::string v = json_field(obj, key);
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v == "null" ? "" : v;
}

// What one Python anchor (bench/autotune/anchors/*.py) reported for a spec.
struct PeerResult {
  bool ran = false;
  double ms = NAN;        // its best kernel (NAN: not run; INFINITY: failed)
  std::string what;       // TVM: the algorithm; Halide 21: the best scheduler (and algorithm)
  std::string json;       // the whole object, for the notes
  int trials = 0;
  double tune_s = NAN, wall_s = NAN;
};

// Runs bench/autotune/anchors/SCRIPT for the case in a child (the venv's Python) and
// reads the one JSON object it prints (its last line starting with '{').
PeerResult run_peer(const std::string& script, const Case& c, int threads, std::vector<std::string> args) {
  PeerResult r;
  r.ran = true;
  args.insert(args.begin(), {c.spec, "--shape", c.shape});
  std::fflush(stdout);
  const auto child =
      taihu::bench::run_anchor_python(taihu::bench::bench_source_dir() + "/autotune/anchors/" + script, args, threads);
  std::string obj;
  for (std::size_t b = 0; b < child.out.size();) {
    std::size_t e = child.out.find('\n', b);
    if (e == std::string::npos) e = child.out.size();
    if (child.out[b] == '{') obj = child.out.substr(b, e - b);
    b = e + 1;
  }
  r.json = obj;
  if (child.exit_status != 0 || obj.empty()) {
    r.ms = INFINITY;
    r.what = script + " failed (exit status " + std::to_string(child.exit_status) + "; its error is above)";
    return r;
  }
  r.ms = json_number(obj, "ms") * 1e-3;  // (seconds, as the other scores)
  if (!(r.ms > 0)) r.ms = INFINITY;
  r.trials = static_cast<int>(std::max(0.0, std::isnan(json_number(obj, "trials")) ? 0.0 : json_number(obj, "trials")));
  r.what = json_string(obj, "algorithm");
  if (r.what.empty()) r.what = json_string(obj, "best");
  r.tune_s = json_number(obj, "tune_s");
  r.wall_s = json_number(obj, "wall_s");
  return r;
}

// The Halide 14 autoschedulers listed in --anchors (Halide 21 runs the same ones; all
// three when none is listed).
std::string halide_schedulers(const std::string& anchors) {
  std::string list;
  for (const char* a : {"Adams2019", "Li2018", "Mullapudi2016"})
    if (anchors.find(std::string(",") + a + ",") != std::string::npos) list += (list.empty() ? "" : ",") + std::string(a);
  return list.empty() ? "Adams2019,Li2018,Mullapudi2016" : list;
}

struct Options {
  double budget = 120;
  int threads = 1;
  std::string only, log = "bench_autotune.jsonl";
  std::uint64_t seed = 1;
  int rounds = 12;  // many short rounds: a burst of load lasting seconds misses some of them
  std::string anchors = ",default,Mullapudi2016,Li2018,Adams2019,tvm,halide21,";
  int tvm_per_iter = 8;  // MetaSchedule trials per batch (its time limit is checked between batches)
  std::string final_mode = "child";
  std::string compare_spec, schedule_file;  // the child's job (--compare)
};

// What the final comparison found: per contender name its score, the median of its round
// medians (NAN: not run, INFINITY: failed), the hand kernel's name, and notes (anchors
// that failed).
struct Comparison {
  std::map<std::string, double> score;
  std::string hand_name;
  std::vector<std::string> notes;
};

ta::Problem load_problem(const Case& c) {
  return ta::Problem(ta::parse_spec_file(std::string(TAIHU_DSL_DIR) + "/" + c.spec + ".tdsl"), ta::parse_shape(c.shape));
}

// Builds every contender (the tuned schedules: "tuned", "tuned#2", ...; the listed
// anchors; the hand kernel), then times them in interleaved rounds.
Comparison compare(const ta::Problem& p, const ta::Space& space, const std::vector<ta::Point>& tuned, const Options& opt) {
  Comparison res;
  ta::TuneOptions o;
  o.threads = opt.threads;
  o.seed = opt.seed;
  auto in = ta::random_inputs(p, 99);
  std::vector<const float*> ptrs;
  for (const auto& n : p.inputs()) ptrs.push_back(in[n].data());
  std::vector<float> out(static_cast<std::size_t>(p.tensor(p.output()).size()));
  const ta::MeasureOptions mo = ta::comparison_measure_options();
  struct Contender {
    std::string name;
    std::function<void()> run;
  };
  std::vector<Contender> contenders;
  std::vector<std::unique_ptr<ta::Kernel>> kernels;
  for (std::size_t i = 0; i < tuned.size(); ++i) {
    const std::string name = i == 0 ? "tuned" : "tuned#" + std::to_string(i + 1);
    try {
      kernels.push_back(ta::build_checked(p, space.schedule(tuned[i]), o));
      ta::Kernel* k = kernels.back().get();
      contenders.push_back({name, [&, k] { k->run(ptrs, out.data()); }});
    } catch (const std::exception& e) {
      res.score[name] = INFINITY;
      res.notes.push_back(name + ": " + e.what());
    }
  }
  for (const char* a : kAnchors) {
    std::string listed = ",";  // (not "," + std::string(a) + ",": GCC 12 -Wrestrict)
    listed.append(a).append(",");
    if (opt.anchors.find(listed) == std::string::npos) continue;
    for (int al = 0; al < p.algorithm_count(); ++al) {  // the anchor gets every algorithm too
      // ... except a derived winograd one: its statements are its base's (the same
      // direct loops again); an autoscheduler cannot turn them into Winograd.
      if (p.is_winograd(al) || p.is_ocvec(al)) continue;
      try {
        kernels.push_back(ta::make_halide_autoscheduled(p, al, a, opt.threads));
        ta::Kernel* k = kernels.back().get();
        contenders.push_back({a, [&, k] { k->run(ptrs, out.data()); }});
      } catch (const std::exception& e) {
        res.notes.push_back(std::string(a) + ": " + std::string(e.what()).substr(0, 200));
      }
    }
  }
  auto hand = hand_kernel(p, &res.hand_name);
  if (hand) contenders.push_back({"hand", [&] { hand(ptrs, out.data()); }});
  // Interleaved rounds with a rotating start, timed by the tuner's confirmation's own
  // routine. A contender's score is the median of its uncontended round medians
  // (ta::summarize_rounds),
  // the statistic the tuner's confirmation ranks by: the core's speed changes 2-3x within
  // milliseconds to seconds here, and the lowest of 12 blocks would be each
  // contender's luckiest moment rather than what repeated calls see.
  std::vector<std::function<void()>> runs;
  for (const auto& k : contenders) runs.push_back(k.run);
  const auto rounds = ta::interleaved_rounds(runs, mo, opt.rounds, opt.rounds);
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const ta::RoundSummary sum = ta::summarize_rounds(rounds[i]);
    const double score = sum.median_s;
    if (std::getenv("TAIHU_VERBOSE")) {
      std::fprintf(stderr, "bench_autotune: %s round medians (ms, cores used):", contenders[i].name.c_str());
      for (const auto& m : rounds[i]) std::fprintf(stderr, " %.3f (%.2f)", m.median_s * 1e3, m.cores_used);
      std::fprintf(stderr, "; %d contended left out\n", sum.contended);
    }
    auto [it, fresh] = res.score.emplace(contenders[i].name, score);
    if (!fresh) it->second = std::min(it->second, score);  // an anchor's best algorithm
  }
  return res;
}

// The CPUs a comparison child gets: the first `threads` CPUs of the OpenMP places (a
// child inheriting the OMP_PROC_BIND-narrowed main thread's mask ran both of its
// threads, OpenMP's and Halide's, on one core). Unlike enter_anchor_child(), taihu's own
// child keeps this process's environment (no anchors' LD_LIBRARY_PATH).
cpu_set_t child_cpus(int threads) { return taihu::bench::openmp_places_cpus(threads); }

// Gives the calling (main) thread every CPU of the OpenMP places. With OMP_PROC_BIND the
// OpenMP runtime binds the initial thread to the first place when the program starts,
// and the threads Halide's runtime and this program start later inherit that one-CPU
// mask: Halide's workers, the tuned kernel's, would share one core (OpenMP's own
// workers keep their places).
void widen_main_thread() {
  const cpu_set_t all = child_cpus(0);
  if (CPU_COUNT(&all) > 0) sched_setaffinity(0, sizeof all, &all);
}

// The CPUs this process may run on (its main thread's mask, which its threads inherit).
int allowed_cpu_count() {
  cpu_set_t s;
  CPU_ZERO(&s);
  return sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 0;
}

// The child: reads the tuned schedule from the first record of opt.schedule_file (and
// more contenders from its further records) and prints the comparison as lines the
// parent parses.
int run_child(const Options& opt) {
  const Case* c = nullptr;
  for (const auto& k : kCases)
    if (k.spec == opt.compare_spec) c = &k;
  if (!c) throw taihu::Error("--compare: unknown spec '" + opt.compare_spec + "'");
  ta::Problem p = load_problem(*c);
  ta::Space space(p);
  std::vector<ta::Point> tuned;
  if (!opt.schedule_file.empty()) {
    const auto records = ta::load_log(opt.schedule_file);
    if (records.empty()) throw taihu::Error(opt.schedule_file + ": no record");
    for (const auto& rec : records) tuned.push_back(space.from_map(rec.schedule));
  }
  std::printf("cpus %d\n", allowed_cpu_count());  // (the parent checks the child got its CPUs)
  const Comparison r = compare(p, space, tuned, opt);
  for (const auto& [name, t] : r.score) std::printf("time %s %.9g\n", name.c_str(), t);
  std::printf("hand %s\n", r.hand_name.c_str());
  for (const auto& n : r.notes) {
    std::string line = n;
    for (char& ch : line)
      if (ch == '\n') ch = ' ';
    std::printf("note %s\n", line.c_str());
  }
  return 0;
}

// Runs this program with `args` in a fresh process on child_cpus(threads) and returns
// its standard output (its stderr passes through); *status: its wait status, or -1 when
// it could not be started. fork + sched_setaffinity + execv, not popen: a popen'ed
// shell inherits the calling thread's (possibly one-CPU) mask.
std::string run_self(const std::vector<std::string>& args, int threads, int* status) {
  *status = -1;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const cpu_set_t mask = child_cpus(threads);
  std::vector<std::string> argv_s{self};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return "";
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "";
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    if (CPU_COUNT(&mask) > 0) sched_setaffinity(0, sizeof mask, &mask);  // inherited by every thread it starts
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  *status = st;
  return out;
}

// The parent: runs this program with --compare in a fresh process and parses its lines.
Comparison compare_in_child(const Case& c, const ta::Problem& p, const ta::Space& space, const ta::Point& tuned, double tuned_s, const Options& opt) {
  Comparison res;
  std::vector<std::string> args{"--compare", c.spec, "--threads", std::to_string(opt.threads), "--seed", std::to_string(opt.seed),
                                "--rounds", std::to_string(opt.rounds), "--anchors",
                                opt.anchors.size() > 2 ? opt.anchors.substr(1, opt.anchors.size() - 2) : "none"};
  std::string file;
  if (!tuned.empty()) {
    file = (std::filesystem::temp_directory_path() / ("bench_autotune_" + std::to_string(getpid()) + "_" + c.spec + ".jsonl")).string();
    ta::TuneOptions o;
    o.threads = opt.threads;
    o.seed = opt.seed;
    ta::Record rec = ta::record_for(p, o);
    rec.schedule = space.to_map(tuned);
    rec.median_s = std::isfinite(tuned_s) && tuned_s > 0 ? tuned_s : 1;  // (a record's median must be > 0)
    ta::write_lines_atomic(file, {ta::to_json_line(rec)});
    args.insert(args.end(), {"--schedule", file});
  }
  int status = -1;
  const std::string out = run_self(args, opt.threads, &status);
  for (std::size_t b = 0; b < out.size();) {
    std::size_t e = out.find('\n', b);
    if (e == std::string::npos) e = out.size();
    std::string line = out.substr(b, e - b);
    b = e + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto sp = line.find(' ');
    const std::string tag = line.substr(0, sp), rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (tag == "time") {
      const auto sp2 = rest.find(' ');
      res.score[rest.substr(0, sp2)] = std::strtod(rest.c_str() + sp2 + 1, nullptr);
    } else if (tag == "hand") {
      res.hand_name = rest;
    } else if (tag == "note") {
      res.notes.push_back(rest);
    } else if (tag == "cpus") {
      const int cpus = std::atoi(rest.c_str());
      const cpu_set_t want = child_cpus(opt.threads);
      if (cpus < CPU_COUNT(&want))
        res.notes.push_back("the comparison process ran on " + rest + " CPU(s) for " + std::to_string(opt.threads) + " threads");
    }
  }
  if (!file.empty()) std::filesystem::remove(file);
  if (status != 0) res.notes.push_back("the comparison process failed (status " + std::to_string(status) + "); its error is above");
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options opt;
    opt.threads = taihu::arch::num_threads();
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::printf(
            "usage: bench_autotune [--budget 2m|90] [--specs gemm,conv2d,...] [--threads N] [--log FILE]\n"
            "                      [--seed S] [--rounds 12] [--anchors default,Mullapudi2016,Li2018,Adams2019,tvm,halide21]\n"
            "                      [--final child|in-process] [--tvm-per-iter 8]\n"
            "Tunes each spec within the budget (resuming from --log), then times the tuned kernel,\n"
            "Halide 14's autoschedules and taihu's hand kernel in interleaved rounds, in a fresh\n"
            "process (--final child, the default) or in the tuning process (--final in-process).\n"
            "tvm (MetaSchedule, same budget) and halide21 (Halide 21's autoschedulers) run in\n"
            "their own child processes when scripts/anchors installed them.\n"
            "\n"
            "bench_autotune --suite dnn [--budget-per-layer 20s] [--layers lenet_conv2,...] [--batch 1,32]\n"
            "                           [--threads N] [--rounds 6] [--anchors tvm|none] [--log FILE]\n"
            "                           [--csv FILE] [--dnn-records FILE] [--seed S]\n"
            "Tunes each forward convolution layer of bench_conv's set that conv2d.tdsl expresses and\n"
            "compares it with dnn's fastest entry and TVM MetaSchedule (same budget); prints the\n"
            "fraction of layers where the tuned code is at least as fast as dnn's best, writes the\n"
            "CSV and dnn's tuning records (read by dnn with TAIHU_TUNING_RECORDS).\n");
        return 0;
      }
    }
    widen_main_thread();
    if (argc == 2 && std::string(argv[1]) == "--report-cpus") {  // (the child of --check-child-cpus)
      std::printf("cpus %d\n", allowed_cpu_count());
      return 0;
    }
    if (argc >= 2 && std::string(argv[1]) == "--check-child-cpus") {
      // Does a comparison child get `--threads` CPUs (all of the OpenMP places' CPUs when
      // fewer), whatever this thread's mask (OMP_PROC_BIND=true narrows it to one)?
      const int threads = argc >= 4 && std::string(argv[2]) == "--threads" ? std::stoi(argv[3]) : taihu::arch::num_threads();
      int status = -1;
      const std::string out = run_self({"--report-cpus"}, threads, &status);
      const int got = out.rfind("cpus ", 0) == 0 ? std::atoi(out.c_str() + 5) : -1;
      const cpu_set_t want = child_cpus(threads);
      std::printf("parent thread: %d CPU(s); comparison child: %d CPU(s) of %d wanted for %d threads\n", allowed_cpu_count(), got,
                  CPU_COUNT(&want), threads);
      return status == 0 && got >= CPU_COUNT(&want) && got >= 1 ? 0 : 1;
    }
#ifndef TAIHU_BENCH_HAVE_DNN
    if (argc >= 2 && std::string(argv[1]).rfind("--suite", 0) == 0)
      throw taihu::Error(std::string(argv[1]) + ": the DNN layer suite needs dnn/, which this build left out");
#else
    if (argc >= 2 && std::string(argv[1]) == "--suite") {  // the DNN layer suite (dnn_suite.hpp)
      if (argc < 3 || std::string(argv[2]) != "dnn") throw taihu::Error("--suite: the one suite is 'dnn' (--suite dnn)");
      namespace ds = taihu::bench::dnn_suite;
      ds::Hooks hooks;
      hooks.run_self = [](const std::vector<std::string>& args, int threads, int* status) { return run_self(args, threads, status); };
      const std::vector<std::string> args(argv + 3, argv + argc);
      bool no_tvm = false;  // (--anchors none: no missing-anchor notice either)
      for (std::size_t i = 0; i + 1 < args.size(); i += 2)
        if (args[i] == "--anchors") no_tvm = args[i + 1] == "none";
      if (!no_tvm && !taihu::bench::anchor_python().empty() && !taihu::bench::anchor_setting("TAIHU_ANCHOR_TVM").empty()) {
        hooks.run_tvm = [](const std::string& shape, double budget_s, int threads) {
          char budget[32];
          std::snprintf(budget, sizeof budget, "%.0f", budget_s);
          const PeerResult r = run_peer("tvm_metaschedule.py", Case{"conv2d", shape}, threads,
                                        {"--budget", budget, "--threads", std::to_string(threads), "--rounds", "6"});
          ds::PeerTiming t;
          t.ran = r.ran;
          t.seconds = r.ms;
          t.what = r.what;
          t.json = r.json;
          t.trials = r.trials;
          t.tune_s = r.tune_s;
          return t;
        };
      } else if (!no_tvm) {
        taihu::bench::missing_anchor("TVM MetaSchedule (apache-tvm)", "no TVM column");
      }
      return ds::run_suite(args, hooks);
    }
    if (argc >= 2 && std::string(argv[1]) == "--suite-compare")
      return taihu::bench::dnn_suite::run_child(std::vector<std::string>(argv + 2, argv + argc));
#endif
    if (argc % 2 == 0) throw taihu::Error("options come in pairs (--name value); see --help");
    for (int i = 1; i + 1 < argc; i += 2) {
      std::string k = argv[i], v = argv[i + 1];
      if (k == "--budget") opt.budget = std::stod(v) * (v.back() == 'm' ? 60 : 1);
      else if (k == "--specs") opt.only = "," + v + ",";
      else if (k == "--threads") opt.threads = std::stoi(v);
      else if (k == "--log") opt.log = v;
      else if (k == "--seed") opt.seed = std::stoull(v);
      else if (k == "--rounds") opt.rounds = std::max(1, std::stoi(v));
      else if (k == "--anchors") opt.anchors = "," + v + ",";
      else if (k == "--final") opt.final_mode = v;
      else if (k == "--tvm-per-iter") opt.tvm_per_iter = std::max(1, std::stoi(v));
      else if (k == "--compare") opt.compare_spec = v;
      else if (k == "--schedule") opt.schedule_file = v;
      else throw taihu::Error("unknown option " + k);
    }
    if (opt.final_mode != "child" && opt.final_mode != "in-process")
      throw taihu::Error("--final: unknown '" + opt.final_mode + "' (use child or in-process)");
    for (std::size_t b = 1, e; !opt.only.empty() && (e = opt.only.find(',', b)) != std::string::npos; b = e + 1) {
      const std::string name = opt.only.substr(b, e - b);  // every --specs name must be a known spec
      if (!name.empty() && std::none_of(kCases.begin(), kCases.end(), [&](const Case& c) { return c.spec == name; }))
        throw taihu::Error("--specs: unknown spec '" + name + "'");
    }
    taihu::arch::set_num_threads(opt.threads);
    if (!opt.compare_spec.empty()) return run_child(opt);
    std::printf("bench_autotune: budget %.0f s per operator, %d threads, log %s, final comparison %s (times in ms, median)\n\n",
                opt.budget, opt.threads, opt.log.c_str(), opt.final_mode == "child" ? "in a fresh process" : "in the tuning process");
    // The Python peers run when listed (by default both) and installed by scripts/anchors.
    auto wanted = [&](const char* a) { return opt.anchors.find(std::string(",") + a + ",") != std::string::npos; };
    const bool want_tvm = wanted("tvm"), want_h21 = wanted("halide21");
    bool run_tvm = false, run_h21 = false;
    if (want_tvm || want_h21) {
      if (taihu::bench::anchor_python().empty()) {
        taihu::bench::missing_anchor(want_tvm && want_h21 ? "TVM MetaSchedule and Halide 21" : want_tvm ? "TVM MetaSchedule" : "Halide 21",
                                     "Halide 14's autoschedulers only");
      } else {
        run_tvm = want_tvm && (!taihu::bench::anchor_setting("TAIHU_ANCHOR_TVM").empty() ||
                               taihu::bench::missing_anchor("TVM MetaSchedule (apache-tvm)", "no TVM column"));
        run_h21 = want_h21 && (!taihu::bench::anchor_setting("TAIHU_ANCHOR_HALIDE").empty() ||
                               taihu::bench::missing_anchor("Halide 21 (halide)", "Halide 14's autoschedulers only"));
      }
    }
    std::printf("machine: %s, %d threads\n\n", taihu::bench::machine_description().c_str(), opt.threads);
    std::printf("| spec | shape | tuned | TVM | Halide 21 best | default | Mullapudi2016 | Li2018 | Adams2019 | hand kernel | tuned vs TVM | "
                "tuned vs Halide 21 | tuned vs best Halide 14 auto | tuned vs hand | fastest other | trials | tuning s | TVM trials | TVM tuning s |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<std::string> notes;
    for (const auto& c : kCases) {
      if (!opt.only.empty() && opt.only.find("," + c.spec + ",") == std::string::npos) continue;
      ta::Problem p = load_problem(c);
      ta::Space space(p);
      ta::TuneOptions o;
      o.budget_s = opt.budget;
      o.threads = opt.threads;
      o.seed = opt.seed;
      o.log_path = opt.log;
      taihu::arch::Stopwatch tclock;
      ta::TuneResult r = ta::tune(p, space, o);
      const double tuning_s = tclock.seconds();
      const Comparison cmp = opt.final_mode == "child" ? compare_in_child(c, p, space, r.best, r.best_s, opt) : compare(p, space, r.best.empty() ? std::vector<ta::Point>{} : std::vector<ta::Point>{r.best}, opt);
      for (const auto& n : cmp.notes) notes.push_back(c.spec + " " + n);
      auto score_of = [&](const std::string& name) {
        auto it = cmp.score.find(name);
        return it == cmp.score.end() ? NAN : it->second;
      };
      const double tuned = score_of("tuned"), hand_t = score_of("hand");
      double best_auto = INFINITY;
      for (const char* a : {"Mullapudi2016", "Li2018", "Adams2019"})
        if (score_of(a) > 0) best_auto = std::min(best_auto, score_of(a));
      // The Python peers, each in its own child after taihu's timing child has exited, so
      // no two timings (nor TVM's tuning and a timing) share the cores.
      PeerResult tvm, h21;
      if (run_tvm) {
        char budget[32];
        std::snprintf(budget, sizeof budget, "%.0f", opt.budget);
        tvm = run_peer("tvm_metaschedule.py", c, opt.threads, {"--budget", budget, "--threads", std::to_string(opt.threads), "--per-iter",
                                                  std::to_string(opt.tvm_per_iter), "--rounds", std::to_string(opt.rounds),
                                                  "--seed", std::to_string(opt.seed)});
      }
      if (run_h21)
        h21 = run_peer("halide21_autoschedule.py", c, opt.threads, {"--scheduler", halide_schedulers(opt.anchors), "--threads", std::to_string(opt.threads),
                                                       "--rounds", std::to_string(opt.rounds)});
      auto ratio = [&](double other) {
        char b[32] = "-";
        if (tuned > 0 && std::isfinite(tuned) && other > 0 && std::isfinite(other)) std::snprintf(b, sizeof b, "%.2fx", other / tuned);
        return std::string(b);
      };
      // The fastest contender other than the tuned schedule (an anchor, or the hand kernel).
      std::string fastest = "-";
      double fastest_s = INFINITY;
      auto consider = [&](const std::string& name, double t) {
        if (t > 0 && t < fastest_s) fastest_s = t, fastest = name;
      };
      if (tvm.ran) consider("TVM (" + tvm.what + ")", tvm.ms);
      if (h21.ran) consider("Halide 21 " + h21.what, h21.ms);
      for (const char* a : kAnchors) consider(std::string("Halide 14 ") + a, score_of(a));
      consider("hand", hand_t);
      const bool has_hand = cmp.score.count("hand") > 0;
      auto cell = [](bool ran, double t) { return ran ? fmt_ms(t) : std::string("-"); };
      auto fmt_s = [](double s) {
        char b[32] = "-";
        if (std::isfinite(s)) std::snprintf(b, sizeof b, "%.0f", s);
        return std::string(b);
      };
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.0f | %s | %s |\n", c.spec.c_str(),
                  c.shape.c_str(), fmt_ms(tuned).c_str(), cell(tvm.ran, tvm.ms).c_str(), cell(h21.ran, h21.ms).c_str(),
                  fmt_ms(score_of("default")).c_str(), fmt_ms(score_of("Mullapudi2016")).c_str(), fmt_ms(score_of("Li2018")).c_str(),
                  fmt_ms(score_of("Adams2019")).c_str(), has_hand ? fmt_ms(hand_t).c_str() : "-", ratio(tvm.ms).c_str(), ratio(h21.ms).c_str(),
                  ratio(best_auto).c_str(), ratio(hand_t).c_str(), fastest.c_str(), r.trials, tuning_s,
                  tvm.ran ? std::to_string(tvm.trials).c_str() : "-", tvm.ran ? fmt_s(tvm.tune_s).c_str() : "-");
      std::fflush(stdout);
      if (tvm.ran) notes.push_back(c.spec + ": TVM MetaSchedule " + (std::isfinite(tvm.ms) ? "" : "FAILED ") + tvm.what + ": " + tvm.json);
      if (h21.ran) notes.push_back(c.spec + ": Halide 21 " + (std::isfinite(h21.ms) ? "" : "FAILED ") + h21.what + ": " + h21.json);
      int algo = 0;
      if (!r.best.empty()) algo = space.schedule(r.best).algorithm;
      notes.push_back(c.spec + ": hand kernel = " + cmp.hand_name + "; tuner's median over its confirmation rounds " + fmt_ms(r.best_s) + " ms; tuned schedule: " +
                      (r.best.empty() ? "none" : space.describe(r.best)) +
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
