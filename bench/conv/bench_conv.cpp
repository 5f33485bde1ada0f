// bench_conv: taihu convolution (its automatic choice, or TAIHU_BENCH_CONV_ALGO) against
// oneDNN 2.x (Debian's, linked; format_tag::any, convolution_auto / _direct / _winograd
// where offered), oneDNN 3.x (PyPI's from scripts/anchors, auto and direct, in
// onednn3_conv_server: see onednn3_conv_client.hpp) and Caffe's im2col + OpenBLAS,
// forward / backward-data / backward-weights, 1 and 2 threads. Rows:
// conv/<problem>/<direction>/threads:<t>.
// Counters: gflops (forward-equivalent FLOPs / time), pct_peak, vs_anchor (the fastest
// peer's time / taihu's), vs_onednn_auto, vs_onednn_direct, vs_onednn_winograd,
// vs_onednn3 (the faster of 3.x's auto and direct), vs_im2col_openblas. The label names
// taihu's algorithm and activation layout (TAIHU_BENCH_CONV_LAYOUT, default its
// preferred one) and each oneDNN's implementations and layout (format_tag::any), so a
// fallback shows; both sides' activations are reordered before timing. Without
// scripts/anchors one line says oneDNN 3 is missing and the rest runs as before.
// Timing is interleaved (taihu, then each anchor, every iteration; oneDNN 3's calls are
// timed inside its server, so the pipe round trip does not count); OpenBLAS's
// spinning idle threads are told to sleep (OPENBLAS_THREAD_TIMEOUT=4) so they do not
// slow the next call. On a shared machine, 2-thread rows are only as good as the
// scheduler: read ratios, not absolute times.
//   OMP_PROC_BIND=true bench_conv --benchmark_filter='conv/mb1ic128.*forward'
//   TAIHU_BENCH_CONV=mb1ic64ih56oc64oh56kh3ph1,mb1ic3ih32oc16kh5ph2 bench_conv
//   bench_conv --tune=records.jsonl   time every entry of dnn's implementation list that
//     supports each layer and direction (the minibatch entry included) at this process's
//     thread count (TAIHU_NUM_THREADS) and merge dnn's tuning records
//     (taihu/dnn/tuning_records.hpp, written by dnn) that TAIHU_TUNING_RECORDS then reads.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "bench_common.hpp"
#include "cblas_anchor.hpp"
#include "im2col_openblas_anchor.hpp"
#include "onednn3_conv_client.hpp"
#include "onednn_conv_anchor.hpp"
#include "conv_case.hpp"
#include "conv_layers.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace {

using taihu::dnn::ConvAlgo;
using taihu::dnn::ConvDesc;
using taihu::dnn::ConvDirection;

// The layer set (conv_layers.hpp, shared with bench_autotune --suite dnn).
const auto& kLayers = taihu::bench::kConvLayers;

const taihu::bench::CblasAnchor& openblas() {
  // Debian's OpenBLAS, as Caffe on Debian links it (a braced list: CblasAnchor takes
  // its candidates as an initializer_list).
  static const taihu::bench::CblasAnchor lib("openblas", {"libopenblas.so.0", "libopenblas.so"});
  return lib;
}

using taihu::bench::random_data;

// taihu's activation layout: TAIHU_BENCH_CONV_LAYOUT=best (default: preferred_layout,
// as oneDNN's format_tag::any), nchw, nChw8c or nchw->nChw8c. Activations are reordered
// into it before timing, as the oneDNN anchor's are.
taihu::dnn::ConvLayout requested_layout(const ConvDesc& d) {
  const char* l = std::getenv("TAIHU_BENCH_CONV_LAYOUT");
  const std::string name = l ? l : "best";
  return name == "best" ? taihu::dnn::preferred_layout(d) : taihu::dnn::parse_conv_layout(name);
}

ConvAlgo requested_algo() {
  const char* a = std::getenv("TAIHU_BENCH_CONV_ALGO");
  return a ? taihu::dnn::parse_conv_algo(a) : ConvAlgo::automatic;
}

// TAIHU_BENCH_STAT=best: fastest call (thread CPU time at 1 thread); else median, as
// bench_common's compare().
bool best_of_calls() {
  const char* v = std::getenv("TAIHU_BENCH_STAT");
  return v != nullptr && std::string(v) == "best";
}

void run_conv(benchmark::State& state, const ConvDesc& d, ConvDirection dir, int threads) {
  taihu::arch::set_num_threads(threads);
  omp_set_num_threads(threads);  // oneDNN 2's OpenMP runtime
  openblas().set_threads(threads);
  const taihu::dnn::ConvLayout layout = requested_layout(d);
  taihu::bench::ConvCase data(d, layout);
  taihu::dnn::Convolution conv(d, requested_algo(), layout);
  auto taihu_call = [&] { data.run(conv, dir); };
  taihu_call();  // first call transforms / packs the weights (a training step does it once)

  const bool cpu_clock = best_of_calls() && threads == 1;
  std::vector<taihu::bench::Anchor> anchors;
  std::vector<std::unique_ptr<taihu::bench::OnednnConv>> dnnl;
  std::string dnnl_impls, dnnl_layout;
  for (const char* algo : {"auto", "direct", "winograd"}) {
    auto p = std::make_unique<taihu::bench::OnednnConv>(d, dir, algo);
    if (!p->available()) continue;
    dnnl_impls += std::string(dnnl_impls.empty() ? "" : ",") + algo + "=" + p->implementation();
    if (dnnl_layout.empty()) dnnl_layout = p->layout();
    auto* raw = p.get();
    anchors.push_back({std::string("onednn_") + algo, [raw] { raw->run(); }});
    dnnl.push_back(std::move(p));
  }
  // oneDNN 3.x in its server (same thread count; its process CPU clock where this side
  // uses the thread CPU clock).
  std::vector<std::unique_ptr<taihu::bench::Onednn3Conv>> dnnl3;
  std::string dnnl3_impls, dnnl3_layout;
  for (const char* algo : {"auto", "direct"}) {
    auto p = std::make_unique<taihu::bench::Onednn3Conv>(d, dir, algo, threads, cpu_clock);
    if (!p->available()) continue;
    dnnl3_impls += std::string(dnnl3_impls.empty() ? "" : ",") + algo + "=" + p->implementation();
    if (dnnl3_layout.empty()) dnnl3_layout = p->layout();
    auto* raw = p.get();
    anchors.push_back({std::string("onednn3_") + algo, nullptr, [raw] { return raw->run(false); }});
    dnnl3.push_back(std::move(p));
  }
  std::unique_ptr<taihu::bench::Im2colBlasConv> caffe;
  taihu::bench::ConvCase nchw_data(d);  // Caffe's layout for the im2col anchor
  if (openblas().loaded()) {
    caffe = std::make_unique<taihu::bench::Im2colBlasConv>(d, openblas());
    auto* c = caffe.get();
    anchors.push_back({"im2col_openblas", [&, c] {
                         auto& n = nchw_data;
                         if (dir == ConvDirection::forward)
                           c->forward(n.x.data(), n.w.data(), n.b.data(), n.y.data());
                         else if (dir == ConvDirection::backward_data)
                           c->backward_data(n.dy.data(), n.w.data(), n.dx.data());
                         else
                           c->backward_weights(n.x.data(), n.dy.data(), n.dw.data(), n.db.data());
                       }});
  }
  taihu::bench::Work work;
  work.flops = d.forward_flops();
  work.bytes = 4.0 * static_cast<double>(data.x.size() + data.w.size() + data.y.size());
  taihu::bench::compare(state, work, taihu::bench::Ceiling::peak_sp, threads, taihu_call, anchors);
  // vs_onednn3: the faster of its implementations (the smaller ratio).
  double vs_onednn3 = 0;
  for (const char* algo : {"vs_onednn3_auto", "vs_onednn3_direct"})
    if (state.counters.count(algo) != 0 && (vs_onednn3 == 0 || state.counters[algo] < vs_onednn3))
      vs_onednn3 = state.counters[algo];
  if (vs_onednn3 > 0) state.counters["vs_onednn3"] = vs_onednn3;
  state.SetLabel(std::string("taihu=") + taihu::dnn::to_string(conv.algorithm(dir)) + "/" +
                 taihu::dnn::to_string(layout) + (conv.layout_native(dir) ? "" : "(reordered)") +
                 (dnnl_impls.empty() ? "" : " onednn:" + dnnl_impls + "/" + dnnl_layout) +
                 (dnnl3_impls.empty() ? "" : " onednn3:" + dnnl3_impls + "/" + dnnl3_layout));
  taihu::arch::set_num_threads(0);
}

std::vector<std::pair<std::string, std::string>> layers() {
  std::vector<std::pair<std::string, std::string>> out;
  if (const char* env = std::getenv("TAIHU_BENCH_CONV")) {
    std::stringstream ss(env);
    std::string p;
    while (std::getline(ss, p, ','))
      if (!p.empty()) out.emplace_back(p, p);
    return out;
  }
  for (const auto& [name, problem] : kLayers) out.emplace_back(name, problem);
  return out;
}

void register_all() {
  for (const auto& [name, problem] : layers()) {
    const ConvDesc d = ConvDesc::parse(problem);
    for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data,
                              ConvDirection::backward_weights})
      for (int threads : {1, 2}) {
        const std::string row = "conv/" + d.str() + "/" + taihu::dnn::to_string(dir) +
                                "/threads:" + std::to_string(threads);
        auto* b = benchmark::RegisterBenchmark(row.c_str(), [d, dir, threads](benchmark::State& st) {
          run_conv(st, d, dir, threads);
        });
        // About 0.2 s of taihu time per row at ~100 GFLOP/s per thread, 3..100 repeats.
        const auto iters = static_cast<benchmark::IterationCount>(
            std::clamp(0.2 * 100e9 * threads / d.forward_flops(), 3.0, 100.0));
        b->UseManualTime()->Iterations(iters)->Unit(benchmark::kMillisecond);
      }
    (void)name;
  }
}

// --tune=FILE: median of 5 timed calls per candidate, records merged into FILE.
int tune(const std::string& path) {
  taihu::dnn::TuningRecords recs;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
    recs = taihu::dnn::TuningRecords::load(path);
  }
  const int threads = taihu::arch::num_threads();
  const std::string isa = taihu::arch::isa_name(taihu::arch::active_isa());
  for (const auto& [name, problem] : layers()) {
    const ConvDesc d = ConvDesc::parse(problem);
    const auto x = random_data(d.n * d.c * d.h * d.w, 1), w = random_data(d.k * (d.c / d.groups) * d.kh * d.kw, 2),
               dy = random_data(d.n * d.k * d.out_h() * d.out_w(), 4);
    std::vector<float> y(dy.size()), dx(x.size()), dw(w.size());
    for (ConvDirection dir : {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_weights})
      for (ConvAlgo a : taihu::dnn::conv_candidates(d, dir)) {
        if (a == ConvAlgo::reference) continue;
        taihu::dnn::Convolution conv(d, a);
        if (conv.algorithm(dir) != a) continue;
        std::vector<double> times;
        for (int i = 0; i < 6; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          if (dir == ConvDirection::forward)
            conv.forward(x.data(), w.data(), nullptr, y.data(), taihu::dnn::WeightsHint::unchanged);
          else if (dir == ConvDirection::backward_data)
            conv.backward_data(dy.data(), w.data(), dx.data(), taihu::dnn::WeightsHint::unchanged);
          else
            conv.backward_weights(x.data(), dy.data(), dw.data(), nullptr, false);
          if (i > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(times.begin(), times.end());
        const double median = times[times.size() / 2];
        std::printf("%-32s %-17s %-14s %9.3f ms\n", d.str().c_str(), taihu::dnn::to_string(dir),
                    taihu::dnn::to_string(a), median * 1e3);
        recs.add(taihu::dnn::conv_tuning_record(d, dir, isa, threads, a, median));
      }
    (void)name;
  }
  taihu::dnn::save_tuning_records(recs, path);
  std::printf("wrote %zu records to %s\n", recs.size(), path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--tune=", 0) == 0) return tune(std::string(argv[i]).substr(7));
  // OpenBLAS's idle threads spin for a while after each call and would steal the two
  // cores from whatever runs next in the interleaved loop (taihu, oneDNN): let them
  // sleep at once (must be set before the library is loaded).
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("anchor_openblas", openblas().loaded() ? openblas().path() : "not found");
#ifdef TAIHU_HAVE_ONEDNN
  benchmark::AddCustomContext("anchor_onednn", "linked (format_tag::any)");
#else
  benchmark::AddCustomContext("anchor_onednn", "not built in");
#endif
  {
    const std::string v3 = taihu::bench::onednn3_version(1);  // says once when it is missing
    benchmark::AddCustomContext("anchor_onednn3",
                                v3.empty() ? "not installed (scripts/anchors)" : v3 + " (format_tag::any, server)");
  }
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
