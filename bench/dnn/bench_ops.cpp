// bench_dnn_ops: taihu's non-convolution operators against oneDNN 2.6 (the anchor) in
// one process, on plain NCHW / NC data (the layout Caffe hands both): ReLU, Sigmoid,
// TanH, eltwise SUM (bandwidth bound: gbps and % of STREAM), softmax (ImageNet
// classifier), max pooling (Caffe ceil rounding, matched in oneDNN by padding_r), LRN
// across channels forward and backward (AlexNet norm1), batch-norm training forward and backward, ReLU
// backward, inner product (fc6-like).
// Counters: gbps or gflops, pct_peak, vs_anchor (oneDNN time / taihu time, > 1: taihu
// faster). Run: bench_dnn_ops [--benchmark_filter=relu]
#include <omp.h>

#include <algorithm>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/dnn/ops.hpp"

namespace {

using taihu::dnn::index_t;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

struct Buffer {
  explicit Buffer(index_t n) : data(static_cast<std::size_t>(n)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (auto& v : data) v = dist(rng);
  }
  float* get() { return data.data(); }
  taihu::arch::AlignedBuffer<float> data;
};

dnnl::memory wrap(const dnnl::memory::dims& dims, tag t, float* p) {
  return dnnl::memory({dims, dt::f32, t}, engine(), p);
}

// Runs taihu and a oneDNN primitive with `args`, threads pinned to `threads`.
void run(benchmark::State& state, const taihu::bench::Work& work, taihu::bench::Ceiling kind,
         int threads, const std::function<void()>& taihu_call, dnnl::primitive prim,
         std::unordered_map<int, dnnl::memory> args) {
  taihu::arch::set_num_threads(threads);
  omp_set_num_threads(threads);
  dnnl::stream s(engine());
  taihu::bench::compare(state, work, kind, threads, taihu_call, [&] {
    prim.execute(s, args);
    s.wait();
  });
  taihu::arch::set_num_threads(0);
}

constexpr index_t kElems = index_t{1} << 23;  // 32 MiB per float tensor: past the LLC

void eltwise(benchmark::State& state, dnnl::algorithm alg, int which, int threads) {
  Buffer x(kElems), y(kElems);
  const dnnl::memory::dims dims{kElems};
  const auto md = dnnl::memory::desc(dims, dt::f32, tag::a);
  dnnl::eltwise_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, alg, md, 0.f, 0.f},
                                           engine());
  taihu::bench::Work work;
  work.bytes = 8.0 * static_cast<double>(kElems);
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] {
        if (which == 0) taihu::dnn::relu_forward(kElems, x.get(), y.get());
        if (which == 1) taihu::dnn::sigmoid_forward(kElems, x.get(), y.get());
        if (which == 2) taihu::dnn::tanh_forward(kElems, x.get(), y.get());
      },
      dnnl::eltwise_forward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::a, x.get())}, {DNNL_ARG_DST, wrap(dims, tag::a, y.get())}});
}

void eltwise_sum(benchmark::State& state, int threads) {
  Buffer a(kElems), b(kElems), y(kElems);
  const dnnl::memory::dims dims{kElems};
  const auto md = dnnl::memory::desc(dims, dt::f32, tag::a);
  dnnl::sum::primitive_desc pd(md, {1.f, 1.f}, {md, md}, engine());
  taihu::bench::Work work;
  work.bytes = 12.0 * static_cast<double>(kElems);
  const std::vector<const float*> in{a.get(), b.get()};
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] {
        taihu::dnn::eltwise_forward(taihu::dnn::EltwiseOp::sum, kElems, in, {}, y.get(), nullptr);
      },
      dnnl::sum(pd),
      {{DNNL_ARG_MULTIPLE_SRC, wrap(dims, tag::a, a.get())},
       {DNNL_ARG_MULTIPLE_SRC + 1, wrap(dims, tag::a, b.get())},
       {DNNL_ARG_DST, wrap(dims, tag::a, y.get())}});
}

void softmax(benchmark::State& state, int threads) {
  const index_t n = 256, c = 1000;
  Buffer x(n * c), y(n * c);
  const dnnl::memory::dims dims{n, c};
  dnnl::softmax_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, dnnl::memory::desc(dims, dt::f32, tag::ab), 1},
      engine());
  taihu::bench::Work work;
  work.bytes = 8.0 * static_cast<double>(n * c);
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] { taihu::dnn::softmax_forward(n, c, 1, x.get(), y.get()); }, dnnl::softmax_forward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::ab, x.get())}, {DNNL_ARG_DST, wrap(dims, tag::ab, y.get())}});
}

// AlexNet's / ResNet's 3x3 stride-2 window (kernel 3), or VGG's 2x2 (kernel 2, the
// dedicated 2x2 kernels of dnn/src/ops/pool_kernels.hpp).
void max_pool(benchmark::State& state, int threads, index_t kernel) {
  taihu::dnn::PoolingShape s;
  s.batch = 8;
  s.channels = 64;
  s.height = s.width = 112;
  s.kernel_h = s.kernel_w = kernel;
  s.stride_h = s.stride_w = 2;
  const index_t oh = s.out_h(), ow = s.out_w();
  Buffer x(s.input_elements()), y(s.output_elements());
  std::vector<std::int32_t> mask(static_cast<std::size_t>(s.output_elements()));
  const dnnl::memory::dims src{s.batch, s.channels, s.height, s.width},
      dst{s.batch, s.channels, oh, ow};
  const index_t pad_r = (oh - 1) * s.stride_h + s.kernel_h - s.height;  // Caffe's ceil
  dnnl::pooling_forward::primitive_desc pd({dnnl::prop_kind::forward_training,
                                            dnnl::algorithm::pooling_max,
                                            dnnl::memory::desc(src, dt::f32, tag::nchw),
                                            dnnl::memory::desc(dst, dt::f32, tag::nchw),
                                            {2, 2},
                                            {kernel, kernel},
                                            {0, 0},
                                            {pad_r, pad_r}},
                                           engine());
  dnnl::memory ws(pd.workspace_desc(), engine());
  taihu::bench::Work work;
  work.bytes = 4.0 * static_cast<double>(s.input_elements() + 2 * s.output_elements());
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] { taihu::dnn::pooling_forward(s, x.get(), y.get(), mask.data()); },
      dnnl::pooling_forward(pd),
      {{DNNL_ARG_SRC, wrap(src, tag::nchw, x.get())},
       {DNNL_ARG_DST, wrap(dst, tag::nchw, y.get())},
       {DNNL_ARG_WORKSPACE, ws}});
}

// AlexNet's norm1: local size 5, alpha 1e-4, beta 0.75, k 1.
taihu::dnn::LrnParams alexnet_norm1() {
  taihu::dnn::LrnParams p;
  p.batch = 8;
  p.channels = 96;
  p.height = p.width = 55;
  p.local_size = 5;
  p.alpha = 1e-4;
  p.beta = 0.75;
  p.k = 1.0;
  return p;
}

dnnl::lrn_forward::primitive_desc lrn_forward_pd(const dnnl::memory::dims& dims) {
  return dnnl::lrn_forward::primitive_desc(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::lrn_across_channels,
       dnnl::memory::desc(dims, dt::f32, tag::nchw), 5, 1e-4f, 0.75f, 1.f},
      engine());
}

void lrn(benchmark::State& state, int threads) {
  const taihu::dnn::LrnParams p = alexnet_norm1();
  Buffer x(p.elements()), y(p.elements()), scale(p.elements());
  const dnnl::memory::dims dims{p.batch, p.channels, p.height, p.width};
  const auto pd = lrn_forward_pd(dims);
  dnnl::memory ws(pd.workspace_desc(), engine());
  taihu::bench::Work work;
  work.bytes = 12.0 * static_cast<double>(p.elements());  // taihu also writes `scale`
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] { taihu::dnn::lrn_forward(p, x.get(), y.get(), scale.get()); }, dnnl::lrn_forward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::nchw, x.get())},
       {DNNL_ARG_DST, wrap(dims, tag::nchw, y.get())},
       {DNNL_ARG_WORKSPACE, ws}});
}

// Both sides start from their own forward's outputs (taihu: y and scale; oneDNN: its
// workspace). On NCHW oneDNN 2.6 runs its reference LRN backward (lrn_ref:any; its jit
// backward wants nChw16c), so this row's ratio measures that, not oneDNN's best.
void lrn_bwd(benchmark::State& state, int threads) {
  const taihu::dnn::LrnParams p = alexnet_norm1();
  Buffer x(p.elements()), y(p.elements()), scale(p.elements()), dy(p.elements()), dx(p.elements()),
      y1(p.elements());
  taihu::dnn::lrn_forward(p, x.get(), y.get(), scale.get());
  const dnnl::memory::dims dims{p.batch, p.channels, p.height, p.width};
  const auto md = dnnl::memory::desc(dims, dt::f32, tag::nchw);
  const auto fwd = lrn_forward_pd(dims);
  dnnl::memory ws(fwd.workspace_desc(), engine());
  {
    dnnl::stream s(engine());
    dnnl::lrn_forward(fwd).execute(s, {{DNNL_ARG_SRC, wrap(dims, tag::nchw, x.get())},
                                       {DNNL_ARG_DST, wrap(dims, tag::nchw, y1.get())},
                                       {DNNL_ARG_WORKSPACE, ws}});
    s.wait();
  }
  dnnl::lrn_backward::primitive_desc pd(
      {dnnl::algorithm::lrn_across_channels, md, md, 5, 1e-4f, 0.75f, 1.f}, engine(), fwd);
  taihu::bench::Work work;
  work.bytes = 20.0 * static_cast<double>(p.elements());  // taihu reads x, y, scale, dy
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] { taihu::dnn::lrn_backward(p, x.get(), y.get(), scale.get(), dy.get(), dx.get()); },
      dnnl::lrn_backward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::nchw, x.get())},
       {DNNL_ARG_DIFF_DST, wrap(dims, tag::nchw, dy.get())},
       {DNNL_ARG_WORKSPACE, ws},
       {DNNL_ARG_DIFF_SRC, wrap(dims, tag::nchw, dx.get())}});
}

void batch_norm(benchmark::State& state, int threads) {
  const taihu::dnn::BatchNormShape s{8, 64, 56 * 56};
  Buffer x(s.elements()), y(s.elements()), mean(64), var(64);
  const dnnl::memory::dims dims{8, 64, 56, 56};
  dnnl::batch_normalization_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_training, dnnl::memory::desc(dims, dt::f32, tag::nchw), 1e-5f,
       dnnl::normalization_flags::none},
      engine());
  const dnnl::memory::dims cdims{64};
  taihu::bench::Work work;
  work.bytes = 12.0 * static_cast<double>(s.elements());  // two reads + one write
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] {
        taihu::dnn::batch_norm_forward_training(s, 1e-5f, x.get(), y.get(), mean.get(), var.get());
      },
      dnnl::batch_normalization_forward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::nchw, x.get())},
       {DNNL_ARG_DST, wrap(dims, tag::nchw, y.get())},
       {DNNL_ARG_MEAN, wrap(cdims, tag::a, mean.get())},
       {DNNL_ARG_VARIANCE, wrap(cdims, tag::a, var.get())}});
}

void inner_product(benchmark::State& state, int threads) {
  const taihu::dnn::InnerProductShape s{64, 9216, 4096, false};
  Buffer x(s.batch * s.inputs), w(s.inputs * s.outputs), b(s.outputs), y(s.batch * s.outputs);
  const dnnl::memory::dims src{s.batch, s.inputs}, wei{s.outputs, s.inputs}, bia{s.outputs},
      dst{s.batch, s.outputs};
  dnnl::inner_product_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, dnnl::memory::desc(src, dt::f32, tag::ab),
       dnnl::memory::desc(wei, dt::f32, tag::ab), dnnl::memory::desc(bia, dt::f32, tag::a),
       dnnl::memory::desc(dst, dt::f32, tag::ab)},
      engine());
  taihu::bench::Work work;
  work.flops = 2.0 * static_cast<double>(s.batch * s.inputs * s.outputs);
  run(state, work, taihu::bench::Ceiling::peak_sp, threads,
      [&] { taihu::dnn::inner_product_forward(s, x.get(), w.get(), b.get(), y.get()); },
      dnnl::inner_product_forward(pd),
      {{DNNL_ARG_SRC, wrap(src, tag::ab, x.get())},
       {DNNL_ARG_WEIGHTS, wrap(wei, tag::ab, w.get())},
       {DNNL_ARG_BIAS, wrap(bia, tag::a, b.get())},
       {DNNL_ARG_DST, wrap(dst, tag::ab, y.get())}});
}

void relu_bwd(benchmark::State& state, int threads) {
  Buffer x(kElems), dy(kElems), dx(kElems);
  const dnnl::memory::dims dims{kElems};
  const auto md = dnnl::memory::desc(dims, dt::f32, tag::a);
  dnnl::eltwise_forward::primitive_desc fwd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_relu, md, 0.f, 0.f}, engine());
  dnnl::eltwise_backward::primitive_desc pd({dnnl::algorithm::eltwise_relu, md, md, 0.f, 0.f},
                                            engine(), fwd);
  taihu::bench::Work work;
  work.bytes = 12.0 * static_cast<double>(kElems);
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] { taihu::dnn::relu_backward(kElems, x.get(), dy.get(), dx.get()); },
      dnnl::eltwise_backward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::a, x.get())},
       {DNNL_ARG_DIFF_DST, wrap(dims, tag::a, dy.get())},
       {DNNL_ARG_DIFF_SRC, wrap(dims, tag::a, dx.get())}});
}

void bn_bwd(benchmark::State& state, int threads) {
  const taihu::dnn::BatchNormShape s{8, 64, 56 * 56};
  Buffer x(s.elements()), y(s.elements()), dy(s.elements()), dx(s.elements()), mean(64), var(64);
  taihu::dnn::batch_norm_forward_training(s, 1e-5f, x.get(), y.get(), mean.get(), var.get());
  const dnnl::memory::dims dims{8, 64, 56, 56}, cdims{64};
  const auto md = dnnl::memory::desc(dims, dt::f32, tag::nchw);
  dnnl::batch_normalization_forward::primitive_desc fwd(
      {dnnl::prop_kind::forward_training, md, 1e-5f, dnnl::normalization_flags::none}, engine());
  dnnl::batch_normalization_backward::primitive_desc pd(
      {dnnl::prop_kind::backward_data, md, md, 1e-5f, dnnl::normalization_flags::none}, engine(),
      fwd);
  taihu::bench::Work work;
  work.bytes = 16.0 * static_cast<double>(s.elements());  // oneDNN reads x, taihu y: same
  run(state, work, taihu::bench::Ceiling::stream, threads,
      [&] {
        taihu::dnn::batch_norm_backward(s, 1e-5f, y.get(), var.get(), dy.get(), dx.get(), false);
      },
      dnnl::batch_normalization_backward(pd),
      {{DNNL_ARG_SRC, wrap(dims, tag::nchw, x.get())},
       {DNNL_ARG_DIFF_DST, wrap(dims, tag::nchw, dy.get())},
       {DNNL_ARG_MEAN, wrap(cdims, tag::a, mean.get())},
       {DNNL_ARG_VARIANCE, wrap(cdims, tag::a, var.get())},
       {DNNL_ARG_DIFF_SRC, wrap(dims, tag::nchw, dx.get())}});
}

void relu_fwd(benchmark::State& s, int t) { eltwise(s, dnnl::algorithm::eltwise_relu, 0, t); }
void sigmoid_fwd(benchmark::State& s, int t) {
  eltwise(s, dnnl::algorithm::eltwise_logistic, 1, t);
}
void tanh_fwd(benchmark::State& s, int t) { eltwise(s, dnnl::algorithm::eltwise_tanh, 2, t); }

struct Row {
  const char* name;
  void (*run)(benchmark::State&, int threads);
  int iterations;
};

const Row kRows[] = {
    {"relu_fwd/8M", relu_fwd, 30},
    {"relu_bwd/8M", relu_bwd, 30},
    {"sigmoid_fwd/8M", sigmoid_fwd, 30},
    {"tanh_fwd/8M", tanh_fwd, 30},
    {"eltwise_sum2/8M", eltwise_sum, 30},
    {"softmax/256x1000", softmax, 100},
    {"maxpool/mb8ic64ih112kh3sh2", [](benchmark::State& st, int threads) { max_pool(st, threads, 3); }, 30},
    {"maxpool/mb8ic64ih112kh2sh2", [](benchmark::State& st, int threads) { max_pool(st, threads, 2); }, 30},
    {"lrn_across/mb8ic96ih55ls5", lrn, 30},
    {"lrn_across_bwd/mb8ic96ih55ls5", lrn_bwd, 30},
    {"bn_fwd_training/mb8ic64ih56", batch_norm, 30},
    {"bn_bwd_training/mb8ic64ih56", bn_bwd, 30},
    {"inner_product/mb64ic9216oc4096", inner_product, 10},
};

void register_all() {
  for (int threads : {1, 2})
    for (const Row& row : kRows) {
      const std::string name = std::string(row.name) + "/threads:" + std::to_string(threads);
      const auto run_row = row.run;
      benchmark::RegisterBenchmark(
          name.c_str(), [run_row, threads](benchmark::State& st) { run_row(st, threads); })
          ->UseManualTime()
          ->Iterations(row.iterations)
          ->Unit(benchmark::kMillisecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("anchor", "oneDNN " + std::to_string(dnnl_version()->major) + "." +
                                            std::to_string(dnnl_version()->minor));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
