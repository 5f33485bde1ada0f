// bench_stencil: one time step of taihu's optimized CPU kernel on 3D grids, per physics
// and space order, against the STREAM triad roofline measured in this same run and two
// in-run anchors: taihu's plain reference kernel and a "Devito-style" OpenMP loop (the
// shape of Devito's generated C: collapse(2) over y, x, a simd z loop, no blocking).
//
// Compulsory-traffic model (bytes per grid point per step, float32, in-place update so
// the next level overwrites the previous one and there is no write-allocate):
//   acoustic (constant density): read u_prev, u, A = v^2 dt^2; write u_next     16 B/pt
//   density:  + G = A grad(ln rho), 3 floats (the optimized kernel reads these
//             precomputed terms instead of differentiating ln rho every step)   28 B/pt
//   vti:      read p_prev, p, q_prev, q, A, B, C; write p_next, q_next          36 B/pt
//   tti:      vti + the rotation weights R_ab (6 floats)                        60 B/pt
//             (compute-bound here: ~250 loads per 8 points for the mixed terms)
// (u is read once: its 2H+1 neighbour planes are assumed to come from cache, which is
// what the kernel's y streaming arranges; halos are not counted.)
// roofline GPts/s = STREAM triad GB/s / (B/pt); pct_peak = achieved GB/s / STREAM.
// STREAM triad counts 12 B per element although plain stores also read the target line
// (write-allocate), while the in-place stencil has no write-allocate traffic; so each
// row also gives pct_stream_nt, the share of the non-temporal-store triad measured in
// the same run (the bandwidth without write-allocate, the stricter ceiling).
// Temporal blocking rows run two fused steps per call and count 2 x 16 B/pt: their
// pct_peak is the single-step roofline's (> 100: faster than any single-step kernel
// can be); the anchor there is two single optimized steps.
//   bench_stencil --benchmark_filter=acoustic
#include <cstdlib>
#include <memory>
#include <string>

#include "bench_common.hpp"
#include "taihu/arch/roofline.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/stencil/cuda.hpp"
#include "taihu/stencil/fd_coefficients.hpp"
#include "taihu/stencil/propagator.hpp"

namespace {

using namespace taihu::stencil;

struct Case {
  const char* name;
  Physics physics;
  int order;
  long nz, nx, ny;
  bool temporal = false;  // two fused steps per call (temporal blocking)
};

double bytes_per_point(Physics p) {
  switch (p) {
    case Physics::acoustic: return 16;
    case Physics::acoustic_density: return 28;
    case Physics::vti: return 36;
    case Physics::tti: return 60;  // vti + the 6 rotation weights R_ab
  }
  return 0;
}

Model make_model(const Case& c) {
  Grid g;
  g.dim = 3;
  g.n = {c.nz, c.nx, c.ny};
  g.h = {10, 10, 10};
  Model m = homogeneous_model(g, 2500.f);
  m.physics = c.physics;
  const auto n = m.vp.size();
  for (std::size_t i = 0; i < n; ++i) m.vp[i] = 2000.f + float(i % 977);
  if (c.physics == Physics::acoustic_density) m.rho.assign(n, 2000.f);
  if (c.physics == Physics::vti || c.physics == Physics::tti) {
    m.epsilon.assign(n, 0.2f);
    m.delta.assign(n, 0.1f);
  }
  if (c.physics == Physics::tti) {  // a tilt that varies point by point
    m.theta.resize(n);
    m.phi.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      m.theta[i] = 0.3f + 0.0003f * float(i % 1013);
      m.phi[i] = 0.2f + 0.0005f * float(i % 991);
    }
  }
  return m;
}

void seed(Propagator& p) {
  for (Field* f : p.current_fields()) f->at(f->layout().n[0] / 2, f->layout().n[1] / 2, f->layout().n[2] / 2) = 1.f;
}

// The Devito-style anchor: constant-density acoustic, radius fixed at compile time.
template <int H>
void devito_style_step(const Layout& L, const float* u, float* up, const float* m, const float (&c)[H + 1]) {
  const long n0 = L.n[0], n1 = L.n[1], n2 = L.n[2], s1 = L.s1, s2 = L.s2;
#pragma omp parallel for collapse(2) schedule(static)
  for (long y = 0; y < n2; ++y)
    for (long x = 0; x < n1; ++x) {
      const long base = L.index(0, x, y);
#pragma omp simd
      for (long z = 0; z < n0; ++z) {
        const long i = base + z;
        float lap = 3.f * c[0] * u[i];
        for (int k = 1; k <= H; ++k)
          lap += c[k] * (u[i + k] + u[i - k] + u[i + k * s1] + u[i - k * s1] + u[i + k * s2] + u[i - k * s2]);
        up[i] = 2.f * u[i] - up[i] + m[i] * lap;
      }
    }
}

// The non-temporal triad for `threads` threads, measured once per process (0 without AVX2).
double stream_nt_gbps(int threads) {
  static const double gbps = taihu::arch::measure_stream(threads).triad_nt_gbps;
  return gbps;
}

// pct_stream_nt: the row's GPts/s x bytes per point against the non-temporal triad.
void add_nt_counter(benchmark::State& state, double bytes_per_point) {
  const double nt = stream_nt_gbps(taihu::arch::num_threads());
  if (nt > 0 && state.counters.count("gpts"))
    state.counters["pct_stream_nt"] = 100.0 * double(state.counters["gpts"]) * bytes_per_point / nt;
}

void run_case(benchmark::State& state, Case c) {
  const Model model = make_model(c);
  Options opt;
  opt.space_order = c.order;
  opt.boundary.kind = BoundaryKind::none;
  Options ref_opt = opt;
  ref_opt.kernel = KernelKind::reference;
  Propagator fast(model, opt), ref(model, ref_opt);
  seed(fast);
  seed(ref);
  if (c.temporal) {
    Propagator single(model, opt);
    seed(single);
    const double points = 2.0 * double(c.nz) * double(c.nx) * double(c.ny);
    const taihu::bench::Work work{0, points * bytes_per_point(c.physics), points};
    const int threads = taihu::arch::num_threads();
    taihu::bench::compare(state, work, taihu::bench::Ceiling::stream, threads, [&] { fast.step_pair_blocked(); },
                          std::vector<taihu::bench::Anchor>{{"single_steps", [&] {
                                                               single.step(nullptr, 0.f);
                                                               single.step(nullptr, 0.f);
                                                             }}});
    state.counters["roofline_gpts"] =
        taihu::bench::ceiling(taihu::bench::Ceiling::stream, threads) / bytes_per_point(c.physics);
    add_nt_counter(state, bytes_per_point(c.physics));
    state.SetLabel("cpu temporal blocking x2, single-step roofline 16 B/pt");
    return;
  }
  std::vector<taihu::bench::Anchor> anchors{{"reference", [&] { ref.step(nullptr, 0.f); }}};
  // Devito-style loop on its own arrays (same layout and traffic), 8th order acoustic.
  std::unique_ptr<Field> du, dp, dm;
  float w[5] = {};
  if (c.physics == Physics::acoustic && c.order == 8) {
    const Layout L = fast.current().layout();
    du = std::make_unique<Field>(L);
    dp = std::make_unique<Field>(L);
    dm = std::make_unique<Field>(L);
    dm->fill(1e-3f);
    const auto c2 = second_derivative_weights(8);
    for (int k = 0; k <= 4; ++k) w[k] = float(c2[k] / 100.0);
    anchors.push_back({"devito_style", [&du, &dp, &dm, &w, L] {
                         devito_style_step<4>(L, du->data(), dp->data(), dm->data(), w);
                         std::swap(du, dp);
                       }});
  }
  const double points = double(c.nz) * double(c.nx) * double(c.ny);
  const taihu::bench::Work work{0, points * bytes_per_point(c.physics), points};
  const int threads = taihu::arch::num_threads();
  taihu::bench::compare(state, work, taihu::bench::Ceiling::stream, threads, [&] { fast.step(nullptr, 0.f); },
                        anchors);
  state.counters["roofline_gpts"] =
      taihu::bench::ceiling(taihu::bench::Ceiling::stream, threads) / bytes_per_point(c.physics);
  add_nt_counter(state, bytes_per_point(c.physics));
  state.SetLabel(std::string(fast.kernel_in_use()) + ", " + std::to_string(int(bytes_per_point(c.physics))) +
                 " B/pt");
}

const Case kCases[] = {
    {"acoustic_o8_256^3", Physics::acoustic, 8, 256, 256, 256},
    {"acoustic_o8_512x512x256", Physics::acoustic, 8, 512, 512, 256},
    {"acoustic_o4_256^3", Physics::acoustic, 4, 256, 256, 256},
    {"acoustic_o16_256^3", Physics::acoustic, 16, 256, 256, 256},
    {"density_o8_256^3", Physics::acoustic_density, 8, 256, 256, 256},
    {"vti_o8_256^3", Physics::vti, 8, 256, 256, 256},
    {"tti_o8_256^3", Physics::tti, 8, 256, 256, 256},
    {"acoustic_o8_256^3_temporal2", Physics::acoustic, 8, 256, 256, 256, true},
};

// CUDA (only registered when a GPU is present): the device-resident sliding-window
// kernel, 16 B/pt against the device copy bandwidth measured in this run.
void run_cuda(benchmark::State& state, long n, int order) {
  const double seconds = cuda_time_acoustic3d(n, n, n, order, 20);
  const double gbps_ceiling = cuda_copy_gbps();
  for (auto _ : state) state.SetIterationTime(seconds);
  const double points = double(n) * double(n) * double(n);
  state.counters["gpts"] = points / seconds / 1e9;
  state.counters["pct_peak"] = 100.0 * points * 16.0 / seconds / 1e9 / gbps_ceiling;
  state.counters["roofline_gpts"] = gbps_ceiling / 16.0;
  state.SetLabel("cuda sliding window, 16 B/pt vs device copy GB/s");
}

const int kRegistered = [] {
  if (cuda_device_available())
    for (long n : {256L, 512L})
      benchmark::RegisterBenchmark(("stencil/cuda_acoustic_o8_" + std::to_string(n) + "^3").c_str(),
                                   [n](benchmark::State& s) { run_cuda(s, n, 8); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
  for (const Case& c : kCases)
    benchmark::RegisterBenchmark((std::string("stencil/") + c.name).c_str(),
                                 [c](benchmark::State& s) { run_case(s, c); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
