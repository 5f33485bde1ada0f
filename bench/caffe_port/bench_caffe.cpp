// bench_caffe: training throughput (images/s) of taihu-caffe's Solver::step for LeNet
// (batch 64) and CIFAR-10 quick (batch 100) at 1 and 2 threads, against
//   - PyTorch CPU (the anchors venv's torch, scripts/anchors): the same nets and SGD
//     settings written in PyTorch (anchors/torch_train.py), timed in a child process;
//   - a Caffe-style CPU execution of the same net and weights in this process (im2col
//     + OpenBLAS, see caffe_style_anchor.hpp), the secondary column.
// The nets are examples/caffe's prototxts with their data layers replaced by Input
// layers holding random images and labels; taihu's solver takes lr, momentum, weight
// decay and lr policy from examples/caffe's solver files (the Caffe-style anchor has
// no weight decay: plain momentum SGD at base_lr). Each case runs TAIHU_CAFFE_BENCH_BLOCKS
// (default 3) blocks; a block alternates taihu and Caffe-style steps for about 0.6 s
// of taihu time, then runs the PyTorch child for as many timed steps (after 5 warm-up
// steps), never at the same time, so the host's noise is spread over all three.
// With OMP_PROC_BIND the child gets the CPUs of all OpenMP places (the runtime has
// narrowed this thread to one), so its threads bind to the same cores as taihu's.
// Every figure is the median step over all blocks (the fastest with
// TAIHU_BENCH_STAT=best, as bench_common does). The child's per-layer parameter
// shapes are checked against taihu's net; a mismatch drops the PyTorch column.
//   OMP_PROC_BIND=true bench_caffe
//   TAIHU_CAFFE_BENCH_LAYERS=1 also prints each layer's forward/backward ms, taihu and
//   Caffe-style side by side (timed one layer at a time after the benchmark).
// Counters: images_per_s (taihu), gflops (3x the forward conv/FC flops per image),
// pct_peak, pytorch_images_per_s, caffe_style_images_per_s, vs_pytorch and
// vs_caffe_style (peer time / taihu time: > 1 means taihu-caffe is faster), vs_anchor
// and anchor_gflops against the fastest peer. Without the anchors venv the PyTorch
// counters are absent and the Caffe-style anchor is the only peer.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "anchor_registry.hpp"
#include "bench_common.hpp"
#include "caffe_style_anchor.hpp"
#include "cblas_anchor.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/caffe/log.hpp"
#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/solver.hpp"

#ifndef TAIHU_EXAMPLES_DIR
#define TAIHU_EXAMPLES_DIR "examples/caffe"
#endif

namespace {

using namespace taihu::caffe;

const taihu::bench::CblasAnchor& openblas() {
  static const taihu::bench::CblasAnchor lib("openblas", {"libopenblas.so.0", "libopenblas.so"});
  return lib;
}

// The train net of `file` with its data layers replaced by one Input layer.
proto::NetParameter with_input(const std::string& file, int batch, int c, int hw) {
  const proto::NetParameter orig = read_net_param(file);
  proto::NetParameter out;
  out.set_name(orig.name());
  auto* in = out.add_layer();
  parse_text("name: 'input' type: 'Input' top: 'data' top: 'label' input_param { shape { dim: " + std::to_string(batch) +
                 " dim: " + std::to_string(c) + " dim: " + std::to_string(hw) + " dim: " + std::to_string(hw) +
                 " } shape { dim: " + std::to_string(batch) + " } }",
             "<bench>", in);
  for (const auto& l : orig.layer()) {
    if (l.type() == "Data" || l.type() == "FileData" || l.type() == "Accuracy") continue;
    out.add_layer()->CopyFrom(l);
  }
  return out;
}

double forward_flops(const Net& net) {
  double f = 0;
  for (int i = 0; i < net.num_layers(); ++i) {
    const std::string type = net.layers()[static_cast<std::size_t>(i)]->type();
    if (type != "Convolution" && type != "InnerProduct") continue;
    const Blob* w = net.layers()[static_cast<std::size_t>(i)]->blobs()[0].get();
    const Blob* top = net.top_vecs()[static_cast<std::size_t>(i)][0];
    const double per_output = static_cast<double>(w->count() / w->shape(0));
    f += 2.0 * per_output * static_cast<double>(top->count());
  }
  return f;
}

// Per-layer forward/backward milliseconds of taihu-caffe and the anchor (mean of 10
// passes, one layer timed at a time), to stderr.
void print_layer_split(Net& net, taihu::bench::CaffeStyleNet& anchor, int threads) {
  constexpr int reps = 10;
  const auto a = anchor.time_layers(reps);
  std::vector<double> f(static_cast<std::size_t>(net.num_layers())), b(f.size());
  using clock = std::chrono::steady_clock;
  for (int r = 0; r < reps; ++r) {
    net.clear_param_diffs();
    for (int i = 0; i < net.num_layers(); ++i) {
      const auto t0 = clock::now();
      net.forward_layer(i);
      f[static_cast<std::size_t>(i)] += std::chrono::duration<double>(clock::now() - t0).count() / reps;
    }
    for (int i = net.num_layers(); i-- > 0;) {
      if (!net.layer_needs_backward(i)) continue;
      const auto t0 = clock::now();
      net.backward_layer(i);
      b[static_cast<std::size_t>(i)] += std::chrono::duration<double>(clock::now() - t0).count() / reps;
    }
  }
  std::fprintf(stderr, "%s, %d thread(s): layer  taihu fwd/bwd ms | anchor fwd/bwd ms  [convolution algorithms]\n",
               net.name().c_str(), threads);
  for (int i = 0; i < net.num_layers(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    const Layer& l = *net.layers()[u];
    const std::string algos = l.type() == std::string("Convolution") ? "  [" + l.save_state() + "]" : "";
    std::fprintf(stderr, "  %-8s %8.3f %8.3f | %8.3f %8.3f%s\n", net.layer_names()[u].c_str(), f[u] * 1e3, b[u] * 1e3,
                 a[u].forward * 1e3, a[u].backward * 1e3, algos.c_str());
  }
}

// TAIHU_BENCH_STAT=best: the fastest step (thread CPU time at 1 thread), else the
// median: the statistic bench_common::compare uses, so rows stay comparable.
bool best_of_steps() {
  const char* v = std::getenv("TAIHU_BENCH_STAT");
  return v != nullptr && std::string(v) == "best";
}

double summary(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return best_of_steps() ? v.front() : v[(v.size() - 1) / 2];  // lower median, as the child's
}

// "name=20x1x5x5+20 ..." for every layer with parameters: the form torch_train.py
// prints, so the two nets can be compared shape by shape.
std::string param_shapes(const Net& net) {
  std::string out;
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const auto& blobs = net.layers()[i]->blobs();
    if (blobs.empty()) continue;
    if (!out.empty()) out += ' ';
    out += net.layer_names()[i];
    out += '=';
    for (std::size_t j = 0; j < blobs.size(); ++j) {
      if (j > 0) out += '+';
      for (int a = 0; a < blobs[j]->num_axes(); ++a) {
        if (a > 0) out += 'x';
        out += std::to_string(blobs[j]->shape(a));
      }
    }
  }
  return out;
}

// Parameters per layer ("conv1 520, ...") and in all, for the log line.
std::string param_counts(const Net& net) {
  std::string out;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    std::int64_t n = 0;
    for (const auto& b : net.layers()[i]->blobs()) n += b->count();
    if (n == 0) continue;
    out += net.layer_names()[i] + " " + std::to_string(n) + ", ";
    total += n;
  }
  return out + "total " + std::to_string(total);
}

// The child's JSON is flat and written by torch_train.py: these two readers are all
// it needs. "" / {} when the key is absent.
std::string json_string(const std::string& json, const std::string& key) {
  const std::string tag = "\"" + key + "\": \"";
  const auto at = json.find(tag);
  if (at == std::string::npos) return "";
  const auto from = at + tag.size();
  const auto to = json.find('"', from);
  return to == std::string::npos ? "" : json.substr(from, to - from);
}

std::vector<double> json_numbers(const std::string& json, const std::string& key) {
  const std::string tag = "\"" + key + "\": [";
  std::vector<double> out;
  const auto at = json.find(tag);
  if (at == std::string::npos) return out;
  const char* p = json.c_str() + at + tag.size();
  while (*p != 0 && *p != ']') {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) break;
    out.push_back(v);
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  return out;
}

// Runs the PyTorch child for `iters` timed steps on `threads` CPUs; returns its JSON
// output, "" when it failed.
std::string run_torch_child(const std::string& net, int batch, int threads, int iters) {
  const auto r = taihu::bench::run_anchor_python(taihu::bench::bench_source_dir() + "/caffe_port/anchors/torch_train.py",
                                                 {net, std::to_string(batch), std::to_string(threads), "5",
                                                  std::to_string(iters)},
                                                 threads);
  if (r.exit_status != 0) {
    std::fprintf(stderr, "bench_caffe: PyTorch anchor (torch_train.py %s) exited with status %d\n", net.c_str(),
                 r.exit_status);
    return "";
  }
  return r.out;
}

// PyTorch is usable when the venv has torch; the notice is printed once.
bool have_torch() {
  static const bool ok = !taihu::bench::anchor_python().empty() && !taihu::bench::anchor_setting("TAIHU_ANCHOR_TORCH").empty();
  if (!ok) taihu::bench::missing_anchor("PyTorch (torch)", "the Caffe-style im2col + OpenBLAS anchor only");
  return ok;
}

struct Case {
  std::string key;  // torch_train.py's net name
  std::string net_file, solver_file;
  int batch, c, hw;
};

constexpr double block_seconds = 0.6;  // taihu time per block

void train_throughput(benchmark::State& state, const Case& cs, int threads) {
  if (!openblas().loaded()) {
    state.SkipWithError("OpenBLAS (libopenblas.so.0) not found: no Caffe-style anchor");
    return;
  }
  set_log_sink([](const std::string&) {});
  // The solver file's lr, momentum, weight decay and lr policy; no tests, display or
  // snapshots, which would only add noise to the timing.
  proto::SolverParameter sp = read_solver_param(cs.solver_file);
  sp.clear_net();
  *sp.mutable_net_param() = with_input(cs.net_file, cs.batch, cs.c, cs.hw);
  sp.clear_test_iter();
  sp.set_test_interval(0);
  sp.set_display(0);
  sp.set_snapshot(0);
  sp.set_snapshot_after_train(false);
  sp.set_random_seed(1);
  sp.set_solver_mode(proto::SolverParameter::CPU);
  auto solver = create_solver(sp);
  Net& net = solver->net();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  Blob* data = net.blob_by_name("data");
  Blob* label = net.blob_by_name("label");
  for (std::int64_t i = 0; i < data->count(); ++i) data->mutable_data()[i] = u(rng);
  for (std::int64_t i = 0; i < label->count(); ++i) label->mutable_data()[i] = static_cast<float>(rng() % 10);
  taihu::bench::CaffeStyleNet anchor(net, openblas());
  set_log_sink({});
  const float anchor_lr = sp.base_lr(), anchor_momentum = sp.momentum();

  taihu::arch::set_num_threads(threads);
  openblas().set_threads(threads);
  taihu::bench::ceiling(taihu::bench::Ceiling::peak_sp, threads);  // measured before anything is timed
  solver->step(1);  // first step measures the convolution algorithms
  anchor.train_step(anchor_lr, anchor_momentum);
  const auto clock = best_of_steps() && threads == 1 ? &taihu::arch::thread_cpu_seconds : &taihu::arch::now_seconds;
  bool torch = have_torch();
  const std::string shapes = param_shapes(net);
  std::vector<double> taihu_times, caffe_times, torch_times;
  std::string torch_version;
  for (auto _ : state) {
    // taihu and Caffe-style alternate step by step, as bench_common::compare does.
    std::vector<double> block;
    double spent = 0;
    while (spent < block_seconds || block.size() < 3) {
      double t0 = clock();
      anchor.train_step(anchor_lr, anchor_momentum);
      caffe_times.push_back(clock() - t0);
      t0 = clock();
      solver->step(1);
      block.push_back(clock() - t0);
      spent += block.back();
    }
    state.SetIterationTime(summary(block));
    taihu_times.insert(taihu_times.end(), block.begin(), block.end());
    if (!torch) continue;
    const std::string out = run_torch_child(cs.key, cs.batch, threads, static_cast<int>(block.size()));
    const std::vector<double> ms = json_numbers(out, "iter_ms");
    const std::string child_shapes = json_string(out, "params");
    if (ms.empty() || child_shapes != shapes) {
      std::fprintf(stderr, "bench_caffe: dropping the PyTorch anchor for %s: %s\n  taihu:   %s\n  PyTorch: %s\n",
                   cs.key.c_str(), ms.empty() ? "no timings in its output" : "its parameter shapes differ",
                   shapes.c_str(), child_shapes.c_str());
      torch = false;
      torch_times.clear();
      continue;
    }
    torch_version = json_string(out, "torch");
    for (double m : ms) torch_times.push_back(m * 1e-3);
  }
  const double taihu_s = summary(taihu_times), caffe_s = summary(caffe_times);
  double best_peer = caffe_s;
  const auto img = [&](double s) { return s > 0 ? cs.batch / s : 0.0; };
  if (!torch_times.empty()) {
    const double torch_s = summary(torch_times);
    state.counters["pytorch_images_per_s"] = img(torch_s);
    state.counters["vs_pytorch"] = torch_s / taihu_s;
    best_peer = std::min(best_peer, torch_s);
    static std::set<std::string> told;  // the shape check's result, once per net
    if (told.insert(cs.key).second) {
      std::fprintf(stderr, "bench_caffe: PyTorch %s %s has taihu's parameter shapes (%s): %s\n", torch_version.c_str(),
                   cs.key.c_str(), shapes.c_str(), param_counts(net).c_str());
    }
  }
  taihu::bench::Work work;
  work.flops = 3.0 * forward_flops(net);
  taihu::bench::report(state, work, taihu::bench::Ceiling::peak_sp, threads, taihu_s, best_peer);
  state.counters["images_per_s"] = img(taihu_s);
  state.counters["caffe_style_images_per_s"] = img(caffe_s);
  state.counters["vs_caffe_style"] = caffe_s / taihu_s;
  state.SetLabel(net.name() + " batch " + std::to_string(cs.batch) +
                 (torch_times.empty() ? "" : ", PyTorch " + torch_version));
  static std::set<std::string> printed;
  if (const char* v = std::getenv("TAIHU_CAFFE_BENCH_LAYERS");
      v != nullptr && std::string(v) == "1" && printed.insert(net.name() + std::to_string(threads)).second) {
    print_layer_split(net, anchor, threads);
  }
  taihu::arch::set_num_threads(0);
}

int blocks() {
  const char* v = std::getenv("TAIHU_CAFFE_BENCH_BLOCKS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : 3;
}

void register_all() {
  const std::string dir = TAIHU_EXAMPLES_DIR;
  const std::vector<Case> cases{
      {"lenet", dir + "/lenet_train_test.prototxt", dir + "/lenet_solver.prototxt", 64, 1, 28},
      {"cifar10_quick", dir + "/cifar10_quick_train_test.prototxt", dir + "/cifar10_quick_solver.prototxt", 100, 3, 32}};
  for (int t : {1, 2}) {
    for (const Case& cs : cases) {
      benchmark::RegisterBenchmark(("caffe_train/" + cs.key + "/threads:" + std::to_string(t)).c_str(),
                                   [cs, t](benchmark::State& s) { train_throughput(s, cs, t); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(blocks());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
