// bench_caffe: training throughput (images/s) of taihu-caffe's Solver::step against a
// Caffe-style CPU execution of the same net and weights (im2col + OpenBLAS, see
// caffe_style_anchor.hpp), in the same process, 1 and 2 threads, for LeNet (batch 64)
// and CIFAR-10 quick (batch 100). The nets are examples/caffe's LeNet and CIFAR-10
// quick with their data layers replaced by Input layers holding random images.
//   OMP_PROC_BIND=true bench_caffe
//   TAIHU_CAFFE_BENCH_LAYERS=1 also prints each layer's forward/backward ms, taihu and
//   anchor side by side (timed one layer at a time after the benchmark).
// Counters: images_per_s (taihu), gflops (3x the forward conv/FC flops per image),
// pct_peak, vs_anchor (anchor time / taihu time: > 1 means taihu-caffe is faster).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "caffe_style_anchor.hpp"
#include "cblas_anchor.hpp"
#include "taihu/arch/threads.hpp"
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

void train_throughput(benchmark::State& state, const std::string& file, int batch, int c, int hw, int threads) {
  if (!openblas().loaded()) {
    state.SkipWithError("OpenBLAS (libopenblas.so.0) not found: no anchor");
    return;
  }
  set_log_sink([](const std::string&) {});
  proto::SolverParameter sp;
  *sp.mutable_net_param() = with_input(file, batch, c, hw);
  sp.set_base_lr(0.001f);
  sp.set_momentum(0.9f);
  sp.set_lr_policy("fixed");
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

  taihu::arch::set_num_threads(threads);
  openblas().set_threads(threads);
  solver->step(1);  // first step measures the convolution algorithms
  anchor.train_step(0.001f, 0.9f);
  taihu::bench::Work work;
  work.flops = 3.0 * forward_flops(net);
  taihu::bench::compare(
      state, work, taihu::bench::Ceiling::peak_sp, threads, [&] { solver->step(1); },
      [&] { anchor.train_step(0.001f, 0.9f); });
  state.counters["images_per_s"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(net.name() + " batch " + std::to_string(batch));
  static std::set<std::string> printed;  // Google Benchmark calls this several times
  if (const char* v = std::getenv("TAIHU_CAFFE_BENCH_LAYERS");
      v != nullptr && std::string(v) == "1" && printed.insert(net.name() + std::to_string(threads)).second) {
    print_layer_split(net, anchor, threads);
  }
  taihu::arch::set_num_threads(0);
}

void register_all() {
  const std::string dir = TAIHU_EXAMPLES_DIR;
  for (int t : {1, 2}) {
    benchmark::RegisterBenchmark(("caffe_train/lenet/threads:" + std::to_string(t)).c_str(),
                                 [dir, t](benchmark::State& s) { train_throughput(s, dir + "/lenet_train_test.prototxt", 64, 1, 28, t); })
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
    benchmark::RegisterBenchmark(("caffe_train/cifar10_quick/threads:" + std::to_string(t)).c_str(),
                                 [dir, t](benchmark::State& s) { train_throughput(s, dir + "/cifar10_quick_train_test.prototxt", 100, 3, 32, t); })
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
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
