// bench_stencil: one time step of taihu's optimized CPU kernel on 3D grids, per physics
// and space order, against the STREAM triad roofline measured in this same run, real
// Devito, and in-run anchors: taihu's plain reference kernel and, for acoustic order 8,
// a "Devito-style" OpenMP loop (collapse(2) over y, x, a simd z loop, no blocking: the
// shape of Devito's generated C without its blocking or autotuning; kept as the
// secondary column vs_devito_style, and the fallback when Devito is not installed); the
// order-8 acoustic, density and VTI rows also run the optimized kernel without its
// hand-written x86 line kernels (vs_template_kernel: the template line code,
// TAIHU_STENCIL_HAND=0).
//
// Devito (the anchor of the order-8 acoustic, VTI and TTI rows, float and half, single
// step and temporal): Devito 4.8 from scripts/anchors, run by anchors/devito_stencil.py
// in a child process before taihu's timed loop for the row (never at the same time):
// the same grid, order, float32, thread count and discrete equations with the same
// precomputed coefficient fields, no absorbing boundary (taihu's rows run none either),
// Devito's default 'advanced' optimisation, block shapes tuned by its 'aggressive'
// autotuner (excluded from timing, as its JIT compile), median of 5 runs of 10 steps
// by Devito's own section timers. One child per row, right before its loop (the host is
// shared: a figure from minutes earlier would compare different hosts); the first
// child for a (physics, shape, threads) autotunes, the later ones reuse its blocks
// (its JIT is cached by Devito), so they take seconds. Counters: devito_gpts, vs_devito = Devito's time
// per step (x2 on temporal rows) / taihu's; vs_anchor and anchor_gpts are Devito's
// whenever it ran. Without the anchors venv the rows say so once and vs_anchor falls
// back to the fastest in-run anchor, as before. TAIHU_BENCH_DEVITO=0 skips the child.
// Devito does not update in place: it keeps three time levels, so it moves 20 B/pt
// acoustic (u_prev, u, A read; u_next written with write-allocate) where taihu moves 16.
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
// roofline GPts/s = STREAM triad GB/s / (B/pt); pct_peak = achieved GB/s / STREAM triad,
// where the triad is measured inside the benchmark loop, one pass before every kernel
// call (StreamProbe: 2 reads + 1 write per element, 12 B counted as STREAM does, the
// same pinned threads, first-touched, on huge pages like the fields), and the same
// statistic is used for both sides: pct_peak_median = median kernel vs median triad,
// pct_peak_best = fastest kernel call vs fastest triad pass (pct_peak is the median
// pair, or the best pair under TAIHU_BENCH_STAT=best). pct_streams compares the kernel
// with a pass over exactly its own streams without the stencil (same bytes as the
// model): near 100 = bandwidth-bound, well below = compute- or cache-bound.
// Temporal blocking rows run two fused steps per call and count 2 x 16 B/pt: their
// pct_peak is the single-step roofline's (> 100: faster than any single-step kernel
// can be); the anchor there is two single optimized steps. Their own compulsory traffic
// is 20 B/pt per two steps (u_prev and u each read and rewritten once, A read once: the
// t+1 level and the y windows stay in cache), so pct_pair_roofline = pct_peak x 10/16 is
// how close the fused sweep is to its own bandwidth bound.
// Half-coefficient rows (`_half`, Options::coefficients = half: every coefficient an IEEE
// half, 2 B instead of 4) move 14 B/pt acoustic (u_prev r/w 8, u 4, A 2), 20 density
// (12 + 4 x 2), 30 VTI (24 + 3 x 2). Their pct_peak is against the float model above
// (16/28/36 B/pt: the roofline, so > 100 is possible), pct_own_roofline against
// their own compulsory bytes (pct_peak x float B / own B), and the anchor
// float_coefficients is the same optimized kernel with float32 coefficients, interleaved
// in the same loop (vs_float_coefficients > 1: the halves are faster).
//   bench_stencil --benchmark_filter=acoustic
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "anchor_registry.hpp"
#include "bench_common.hpp"
#include "taihu/arch/roofline.hpp"
#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/stencil/cuda.hpp"
#include "taihu/stencil/fd_coefficients.hpp"
#include "taihu/stencil/propagator.hpp"
#include "stream_probe.hpp"

namespace {

using namespace taihu::stencil;
using taihu::stencil::bench::StreamProbe;

struct Case {
  const char* name;
  Physics physics;
  int order;
  long nz, nx, ny;
  bool temporal = false;  // two fused steps per call (temporal blocking)
  bool half = false;      // Options::coefficients = half
};

// Compulsory bytes per point with half coefficients (2 B each instead of 4).
double half_bytes_per_point(Physics p) {
  switch (p) {
    case Physics::acoustic: return 14;
    case Physics::acoustic_density: return 20;
    case Physics::vti: return 30;
    case Physics::tti: return 60;  // (tti keeps float storage)
  }
  return 0;
}

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

// Runs `step` with the kernel switch `var` (TAIHU_STENCIL_PAIR, TAIHU_STENCIL_HAND) set to
// 0: the propagator reads it at each step, so one process times both variants.
template <class F>
void with_switch_off(const char* var, F&& step) {
  setenv(var, "0", 1);
  step();
  unsetenv(var);
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

// (reads, in-place updates) among the kernel's DRAM streams, as the model above counts.
std::pair<int, int> streams_of(Physics p) {
  switch (p) {
    case Physics::acoustic: return {2, 1};          // u, A; u_prev
    case Physics::acoustic_density: return {5, 1};  // u, A, G x3; u_prev
    case Physics::vti: return {5, 2};               // p, q, A, B, C; p_prev, q_prev
    case Physics::tti: return {11, 2};              // vti + R x6
  }
  return {0, 0};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double best(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

// TAIHU_BENCH_STAT=best: the headline counters use each side's fastest call (as
// bench_common does); otherwise the median of each side's calls.
bool best_of_calls() {
  const char* v = std::getenv("TAIHU_BENCH_STAT");
  return v != nullptr && std::string(v) == "best";
}

// A number or string from the child's one-line JSON object ("key": value), 0 or ""
// when absent (the script writes flat values, no escapes).
double json_number(const std::string& text, const std::string& key) {
  const auto at = text.find("\"" + key + "\":");
  return at == std::string::npos ? 0.0 : std::strtod(text.c_str() + at + key.size() + 3, nullptr);
}
std::string json_string(const std::string& text, const std::string& key) {
  const auto at = text.find("\"" + key + "\": \"");
  if (at == std::string::npos) return "";
  const auto from = at + key.size() + 5, to = text.find('"', from);
  return to == std::string::npos ? "" : text.substr(from, to - from);
}

// Real Devito's time per step for this row's problem, or 0 when it is not installed,
// not wanted (TAIHU_BENCH_DEVITO=0) or failed. Runs anchors/devito_stencil.py in a
// child; the block sizes its autotuner chose are kept per (physics, shape, threads).
double devito_seconds_per_step(const Case& c, int threads) {
  const bool has_devito = c.order == 8 && (c.physics == Physics::acoustic || c.physics == Physics::vti ||
                                           c.physics == Physics::tti);
  const char* off = std::getenv("TAIHU_BENCH_DEVITO");
  if (!has_devito || (off != nullptr && std::string(off) == "0")) return 0;
  if (taihu::bench::anchor_setting("TAIHU_ANCHOR_DEVITO").empty() || taihu::bench::anchor_python().empty()) {
    taihu::bench::missing_anchor("Devito", "the in-run Devito-style loop");
    return 0;
  }
  const char* physics = c.physics == Physics::acoustic ? "acoustic" : c.physics == Physics::vti ? "vti" : "tti";
  static std::map<std::tuple<std::string, long, long, long, int>, std::string> tuned;
  const auto key = std::make_tuple(std::string(physics), c.nz, c.nx, c.ny, threads);
  // TTI is ~10x slower per point: fewer steps keep its child to seconds, not minutes.
  const bool slow = c.physics == Physics::tti;
  std::vector<std::string> args{"--physics", physics, "--shape", std::to_string(c.nz), std::to_string(c.nx),
                                std::to_string(c.ny), "--order", std::to_string(c.order), "--threads",
                                std::to_string(threads), "--steps", slow ? "4" : "10", "--reps", slow ? "3" : "5"};
  if (const auto it = tuned.find(key); it != tuned.end() && !it->second.empty())
    args.insert(args.end(), {"--tuned", it->second});
  const auto child =
      taihu::bench::run_anchor_python(taihu::bench::bench_source_dir() + "/stencil/anchors/devito_stencil.py", args,
                                      threads);
  // The same statistic as taihu's side: median of the child's runs, or its best run.
  const char* field = best_of_calls() ? "best_seconds_per_step" : "seconds_per_step";
  const double seconds = child.exit_status == 0 ? json_number(child.out, field) : 0.0;
  if (seconds > 0)
    std::fprintf(stderr, "devito anchor: %s", child.out.c_str());
  else
    std::fprintf(stderr, "devito anchor: %s %ldx%ldx%ld failed (exit %d), falling back to the in-run anchors\n",
                 physics, c.nz, c.nx, c.ny, child.exit_status);
  if (seconds > 0) tuned[key] = json_string(child.out, "tuned_arg");
  return seconds;
}

// The interleaved loop: per iteration one STREAM triad pass, one pass over the kernel's
// streams, each anchor, then taihu's kernel, so all of them see the same host. Counters
// (besides bench_common's gpts, vs_*): pct_peak = the kernel's compulsory GB/s as % of
// the triad measured in these same iterations, with the same statistic for both
// (median/median, or best/best under TAIHU_BENCH_STAT=best), plus both explicitly
// (pct_peak_median, pct_peak_best); pct_streams = % of the kernel's own streams with no
// stencil work (the attainable bandwidth for exactly this traffic: near 100 = the kernel
// is bandwidth-bound); stream_gbps_* the triad itself. devito_seconds > 0: Devito's
// time for the same call (measured in its child before this loop) is the anchor.
void interleaved(benchmark::State& state, double points, double bytes, int reads, int updates, long field_points,
                 const std::function<void()>& taihu, const std::vector<taihu::bench::Anchor>& anchors,
                 double devito_seconds) {
  const int threads = taihu::arch::num_threads();
  StreamProbe probe(threads, field_points, reads, updates);
  taihu();  // warm-up: page faults, dispatch
  for (const auto& a : anchors) a.run();
  std::vector<double> kernel, triad, streams;
  std::vector<std::vector<double>> anchor(anchors.size());
  for (auto _ : state) {
    triad.push_back(probe.triad());
    streams.push_back(probe.streams());
    for (std::size_t i = 0; i < anchors.size(); ++i) {
      const double t0 = taihu::arch::now_seconds();
      anchors[i].run();
      anchor[i].push_back(taihu::arch::now_seconds() - t0);
    }
    const double t0 = taihu::arch::now_seconds();
    taihu();
    kernel.push_back(taihu::arch::now_seconds() - t0);
    state.SetIterationTime(kernel.back());
  }
  const bool use_best = best_of_calls();
  auto stat = [use_best](const std::vector<double>& v) { return use_best ? best(v) : median(v); };
  double best_anchor = 0;
  for (std::size_t i = 0; i < anchors.size(); ++i) {
    state.counters["vs_" + anchors[i].name] = stat(anchor[i]) / stat(kernel);
    if (best_anchor == 0 || stat(anchor[i]) < best_anchor) best_anchor = stat(anchor[i]);
  }
  if (devito_seconds > 0) {
    best_anchor = devito_seconds;
    state.counters["devito_gpts"] = points / devito_seconds / 1e9;
    state.counters["vs_devito"] = devito_seconds / stat(kernel);
  }
  const taihu::bench::Work work{0, bytes, points};
  taihu::bench::report(state, work, taihu::bench::Ceiling::stream, threads, stat(kernel),
                       best_anchor > 0 ? best_anchor : stat(kernel));
  const double triad_median = probe.triad_bytes() / median(triad) / 1e9;
  const double triad_best = probe.triad_bytes() / best(triad) / 1e9;
  const double kernel_median = bytes / median(kernel) / 1e9, kernel_best = bytes / best(kernel) / 1e9;
  state.counters["pct_peak_median"] = 100.0 * kernel_median / triad_median;
  state.counters["pct_peak_best"] = 100.0 * kernel_best / triad_best;
  state.counters["pct_peak"] = use_best ? state.counters["pct_peak_best"] : state.counters["pct_peak_median"];
  state.counters["stream_gbps_median"] = triad_median;
  state.counters["stream_gbps_best"] = triad_best;
  const double streams_gbps = probe.streams_bytes() / stat(streams) / 1e9;
  state.counters["pct_streams"] = 100.0 * (use_best ? kernel_best : kernel_median) / streams_gbps;
  state.counters["roofline_gpts"] = (use_best ? triad_best : triad_median) * 1e9 / (bytes / points) / 1e9;
}

void run_case(benchmark::State& state, Case c) {
  // Devito first, before taihu's fields exist, so the two never share the machine.
  const double devito_step = devito_seconds_per_step(c, taihu::arch::num_threads());
  const double devito_call = devito_step * (c.temporal ? 2 : 1);
  const Model model = make_model(c);
  Options opt;
  opt.space_order = c.order;
  opt.boundary.kind = BoundaryKind::none;
  opt.coefficients = CoefficientPrecision::float32;  // the float rows and anchors; `_half` rows set half
  Options ref_opt = opt;
  ref_opt.kernel = KernelKind::reference;
  Options fast_opt = opt;
  if (c.half) fast_opt.coefficients = CoefficientPrecision::half;
  Propagator fast(model, fast_opt);
  seed(fast);
  const long field_points = fast.current().layout().total;
  const auto [reads, updates] = streams_of(c.physics);
  const double points = double(c.nz) * double(c.nx) * double(c.ny);
  if (c.half) {
    // Side by side with float32 coefficients, interleaved in the same loop.
    Propagator single(model, opt);
    seed(single);
    const int steps = c.temporal ? 2 : 1;
    std::vector<taihu::bench::Anchor> anchors{{"float_coefficients", [&] {
                                                 if (c.temporal)
                                                   single.step_pair_blocked();
                                                 else
                                                   single.step(nullptr, 0.f);
                                               }}};
    // Acoustic order 8: the half kernel one line at a time (TAIHU_STENCIL_PAIR=0) too.
    std::unique_ptr<Propagator> lines;
    if (c.physics == Physics::acoustic && c.order == 8 && std::getenv("TAIHU_STENCIL_PAIR") == nullptr) {
      lines = std::make_unique<Propagator>(model, fast_opt);
      seed(*lines);
      anchors.push_back({"single_lines", [&lines, &c] {
                           with_switch_off("TAIHU_STENCIL_PAIR", [&] {
                             if (c.temporal)
                               lines->step_pair_blocked();
                             else
                               lines->step(nullptr, 0.f);
                           });
                         }});
    }
    interleaved(state, steps * points, steps * points * bytes_per_point(c.physics), reads, updates, field_points,
                [&] {
                  if (c.temporal)
                    fast.step_pair_blocked();
                  else
                    fast.step(nullptr, 0.f);
                },
                anchors, devito_call);
    const double own = half_bytes_per_point(c.physics);
    state.counters["own_bpt"] = own;
    state.counters["pct_own_roofline"] = state.counters["pct_peak"] * bytes_per_point(c.physics) / own;
    state.SetLabel(std::string(fast.kernel_in_use()) + (c.temporal ? ", temporal blocking x2" : "") +
                   ", half coefficients: " + std::to_string(int(own)) + " B/pt own, pct_peak vs the float " +
                   std::to_string(int(bytes_per_point(c.physics))) + " B/pt roofline");
    return;
  }
  if (c.temporal) {
    Propagator single(model, opt);
    seed(single);
    std::vector<taihu::bench::Anchor> anchors{{"single_steps", [&] {
                                                 single.step(nullptr, 0.f);
                                                 single.step(nullptr, 0.f);
                                               }}};
    // The same fused sweep one line at a time instead of two planes at a time
    // (TAIHU_STENCIL_PAIR=0), on its own fields: the in-run A/B of the plane-pair kernel.
    std::unique_ptr<Propagator> lines;
    if (c.order == 8 && std::getenv("TAIHU_STENCIL_PAIR") == nullptr) {
      lines = std::make_unique<Propagator>(model, opt);
      seed(*lines);
      anchors.push_back({"single_lines", [&lines] { with_switch_off("TAIHU_STENCIL_PAIR", [&] { lines->step_pair_blocked(); }); }});
    }
    interleaved(state, 2 * points, 2 * points * bytes_per_point(c.physics), reads, updates, field_points,
                [&] { fast.step_pair_blocked(); }, anchors, devito_call);
    state.counters["pct_pair_roofline"] = state.counters["pct_peak"] * (20.0 / 2) / bytes_per_point(c.physics);
    state.SetLabel("cpu temporal blocking x2, vs the single-step roofline 16 B/pt (own: 10 B/pt/step)");
    return;
  }
  Propagator ref(model, ref_opt);
  seed(ref);
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
  // The same optimized kernel with its hand-written order-8 x86 line kernels off
  // (TAIHU_STENCIL_HAND=0: the template line code), on its own fields: the in-run A/B.
  std::unique_ptr<Propagator> templ;
  const bool has_hand_kernel = c.order == 8 && (c.physics == Physics::acoustic ||
                                                 c.physics == Physics::acoustic_density || c.physics == Physics::vti);
  if (has_hand_kernel && std::getenv("TAIHU_STENCIL_HAND") == nullptr) {
    templ = std::make_unique<Propagator>(model, opt);
    seed(*templ);
    anchors.push_back({"template_kernel", [&templ] { with_switch_off("TAIHU_STENCIL_HAND", [&] { templ->step(nullptr, 0.f); }); }});
  }
  // Acoustic order 8: the hand kernel one line at a time instead of two planes at a time
  // (TAIHU_STENCIL_PAIR=0), on its own fields: the in-run A/B of the plane-pair kernel.
  std::unique_ptr<Propagator> lines;
  if (c.physics == Physics::acoustic && c.order == 8 && std::getenv("TAIHU_STENCIL_PAIR") == nullptr) {
    lines = std::make_unique<Propagator>(model, opt);
    seed(*lines);
    anchors.push_back({"single_lines", [&lines] { with_switch_off("TAIHU_STENCIL_PAIR", [&] { lines->step(nullptr, 0.f); }); }});
  }
  interleaved(state, points, points * bytes_per_point(c.physics), reads, updates, field_points,
              [&] { fast.step(nullptr, 0.f); }, anchors, devito_call);
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
    {"acoustic_o8_512x512x256_temporal2", Physics::acoustic, 8, 512, 512, 256, true},
    {"acoustic_o8_256^3_half", Physics::acoustic, 8, 256, 256, 256, false, true},
    {"density_o8_256^3_half", Physics::acoustic_density, 8, 256, 256, 256, false, true},
    {"vti_o8_256^3_half", Physics::vti, 8, 256, 256, 256, false, true},
    {"acoustic_o8_256^3_temporal2_half", Physics::acoustic, 8, 256, 256, 256, true, true},
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
        ->Iterations(7);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
