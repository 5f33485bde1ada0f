// The time-stepping engine: builds the merged coefficient arrays, runs the chosen
// kernel over the subdomain (interior first while the halo exchange is in flight),
// then the absorbing boundaries, the source and the free surface.
#include "taihu/stencil/propagator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "boundary/absorbing.hpp"
#include "kernels/cuda/cuda_step.hpp"
#include "kernels/flush_denormals.hpp"
#include "kernels/half_float.hpp"
#include "kernels/kernel_api.hpp"
#include "kernels/parallel_size.hpp"
#include "model/huge_page_storage.hpp"
#include "physics/divergence.hpp"
#include "taihu/arch/aligned_buffer.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::stencil {

const char* kernel_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::optimized: return "optimized";
    case KernelKind::reference: return "reference";
    case KernelKind::cuda: return "cuda";
  }
  return "?";
}

KernelKind parse_kernel(const std::string& text) {
  if (text == "optimized" || text == "cpu") return KernelKind::optimized;
  if (text == "reference") return KernelKind::reference;
  if (text == "cuda") return KernelKind::cuda;
  throw Error("taihu: unknown kernel '" + text + "' (use optimized, reference or cuda)");
}

const char* coefficient_precision_name(CoefficientPrecision precision) {
  switch (precision) {
    case CoefficientPrecision::float32: return "float";
    case CoefficientPrecision::half: return "half";
    case CoefficientPrecision::automatic: return "auto";
  }
  return "?";
}

CoefficientPrecision parse_coefficient_precision(const std::string& text) {
  if (text == "float" || text == "float32") return CoefficientPrecision::float32;
  if (text == "half" || text == "float16") return CoefficientPrecision::half;
  if (text == "auto") return CoefficientPrecision::automatic;
  throw Error("taihu: unknown coefficient precision '" + text + "' (use float, half or auto)");
}

namespace {

// The coefficients as the kernel reads them after Options::coefficients = half.
struct Compressed {
  arch::AlignedBuffer<std::uint16_t> packed;  // empty: the (rounded) float arrays
  kernels::FdWeights fd;                      // the weights with 2^-e folded in (packed only)
  int bytes = 0;                              // coefficient bytes per point
};

// An upper bound of every coefficient the kernels multiply by, from the whole (global)
// model, so every MPI rank picks the same scale and the decomposition stays bit-for-bit
// equal to one rank: max A (B, C) and, for density, |G_a| = |A d_a(ln rho)| <=
// max A * sum_k |d1[a][k]| * (max ln rho - min ln rho).
double largest_coefficient(const Model& model, const kernels::FdWeights& fd, double dt2) {
  double a = 0, lo = 0, hi = 0;
  const bool vti = model.physics == Physics::vti || model.physics == Physics::tti;
  for (std::size_t i = 0; i < model.vp.size(); ++i) {
    const double v2 = double(model.vp[i]) * model.vp[i] * dt2;
    a = std::max(a, v2);
    if (vti) a = std::max({a, v2 * (1 + 2.0 * model.epsilon[i]), v2 * (1 + 2.0 * model.delta[i])});
    if (model.physics == Physics::acoustic_density) {
      const double b = std::log(double(model.rho[i]));
      lo = i == 0 ? b : std::min(lo, b);
      hi = i == 0 ? b : std::max(hi, b);
    }
  }
  double g = 0;
  for (int ax = 0; ax < 3; ++ax) {
    double w = 0;
    for (int k = 1; k <= fd.half; ++k) w += std::abs(double(fd.d1[ax][k]));
    g = std::max(g, a * w * (hi - lo));
  }
  return std::max(a, g);
}

// Rounds the coefficient arrays `fields` (every array the kernels multiply by, none above
// `largest`) to halves of one power-of-two scale 2^e, in place, so every kernel sees the
// same values; with `K` > 0 (optimized CPU kernel: acoustic, density, vti) it also packs
// them in the order of kernel_api.hpp and folds 2^-e into a copy of the weights.
Compressed compress_coefficients(const std::vector<Field*>& fields, long total, const kernels::FdWeights& fd, int K,
                                 double largest) {
  // 2^e puts the largest coefficient in [2^14, 2^15): 1 to 2 binades below the largest
  // half (65504) and 28 above the smallest normal one.
  const int e = largest > 0 ? 14 - std::ilogb(largest) : 0;
  const int threads = threads_for_points(double(total));
  for (Field* f : fields) {
    float* v = f->data();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long i = 0; i < total; ++i)
      v[i] = std::ldexp(kernels::half_to_float(kernels::float_to_half(std::ldexp(v[i], e))), -e);
  }
  Compressed c;
  if (K == 0) {
    c.bytes = int(fields.size() * sizeof(float));
    return c;
  }
  c.packed = huge_page_storage<std::uint16_t>(kernels::packed_size(total, K));
  std::fill(c.packed.begin(), c.packed.end(), std::uint16_t(0));
  std::uint16_t* out = c.packed.data();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < total; ++i)
    for (int k = 0; k < K; ++k)
      out[kernels::packed_index(i, K, k)] = kernels::float_to_half(std::ldexp(fields[std::size_t(k)]->data()[i], e));
  c.fd = fd;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k <= kernels::kMaxHalf; ++k) {
      c.fd.d2[a][k] = std::ldexp(fd.d2[a][k], -e);
      c.fd.d1[a][k] = std::ldexp(fd.d1[a][k], -e);
    }
  c.fd.centre = std::ldexp(fd.centre, -e);
  c.bytes = K * int(sizeof(std::uint16_t));
  arch::log_verbose("stencil: coefficients packed as halves, %d per point (%d B), scale 2^%d", K, c.bytes, e);
  return c;
}

}  // namespace

struct Propagator::State {
  Model const* model;
  Options opt;
  LocalBox box;
  kernels::FdWeights fd;
  Field p[2], q[2];  // p[cur], p[1-cur]
  int cur = 0;
  Field A, B, C;
  Field G[3];  // density, optimized CPU kernel: A d_a(ln rho) (kernel_api.hpp)
  Field R[6];  // tti rotation weights
  std::unique_ptr<Absorber> absorber;
  kernels::StepFn step_fn = nullptr;
  std::string kernel_label;
  std::unique_ptr<CudaStepper> cuda;
  Compressed compressed;  // Options::coefficients = half
  bool one_region = false;  // 2D, optimized CPU kernel: the whole step in one OpenMP region
};

namespace {

// Fills a coefficient field from a global model array, with edge values copied into
// the halo (the density kernel differentiates B there).
void fill_coefficient(Field& f, const LocalBox& box, const std::function<float(std::size_t)>& value) {
  const Layout& L = f.layout();
  const Grid& g = box.global;
  const int slow = g.slow_axis();
  const long p2 = L.pad[2];
  for (long i2 = -p2; i2 < L.n[2] + p2; ++i2)
    for (long i1 = -L.pad[1]; i1 < L.n[1] + L.pad[1]; ++i1)
      for (long i0 = -L.pad[0]; i0 < L.n[0] + L.pad[0]; ++i0) {
        long c[3] = {i0, i1, i2};
        c[slow] += box.slow_offset;
        for (int a = 0; a < 3; ++a) c[a] = std::clamp(c[a], 0L, g.n[a] - 1);
        const auto gi = static_cast<std::size_t>((c[2] * g.n[1] + c[1]) * g.n[0] + c[0]);
        f.data()[L.index(i0, i1, i2)] = value(gi);
      }
}

// TAIHU_STENCIL_ONE_REGION=0: a 2D step forks a region per phase (kernel, CPML loops,
// sponge) as 3D does, for A/B comparisons (read once per propagator).
bool one_region_enabled() {
  const char* v = std::getenv("TAIHU_STENCIL_ONE_REGION");
  return !(v && v[0] == '0');
}

}  // namespace

Propagator::Propagator(const Model& model, const Options& options, const Subdomain& sub)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.model = &model;
  s.opt = resolved(model, options);
  const Grid& g = model.grid;
  const int slow = g.slow_axis();
  const long count = sub.slow_count < 0 ? g.n[slow] - sub.slow_begin : sub.slow_count;
  if (sub.slow_begin < 0 || count < 1 || sub.slow_begin + count > g.n[slow])
    throw Error("taihu: subdomain [" + std::to_string(sub.slow_begin) + ", +" + std::to_string(count) +
                ") does not fit the grid's slow axis of " + std::to_string(g.n[slow]) + " points");
  std::array<long, 3> n = g.n;
  n[slow] = count;
  s.box = {g, Layout::for_grid(g.dim, n), sub.slow_begin};
  s.fd = kernels::make_weights(g, s.opt.space_order);
  for (auto& f : s.p) f = Field(s.box.layout);
  const bool two_fields = model.physics == Physics::vti || model.physics == Physics::tti;
  if (two_fields)
    for (auto& f : s.q) f = Field(s.box.layout);
  if (model.physics == Physics::tti && s.opt.boundary.kind == BoundaryKind::cpml)
    throw Error("taihu: physics tti supports boundary = sponge or none (the CPML here splits by axis)");
  const double dt2 = s.opt.dt * s.opt.dt;
  s.A = Field(s.box.layout);
  switch (model.physics) {
    case Physics::acoustic:
    case Physics::acoustic_density:
      fill_coefficient(s.A, s.box, [&](std::size_t i) { return float(double(model.vp[i]) * model.vp[i] * dt2); });
      if (model.physics == Physics::acoustic_density) {
        s.B = Field(s.box.layout);
        fill_coefficient(s.B, s.box, [&](std::size_t i) { return float(std::log(double(model.rho[i]))); });
      }
      break;
    case Physics::tti:
      for (int r = 0; r < 6; ++r) {
        s.R[r] = Field(s.box.layout);
        fill_coefficient(s.R[r], s.box, [&, r](std::size_t i) {
          const double th = model.theta[i], ph = model.phi.empty() ? 0.0 : double(model.phi[i]);
          const double nz = std::cos(th), nx = std::sin(th) * std::cos(ph), ny = std::sin(th) * std::sin(ph);
          const double v[6] = {nz * nz, nx * nx, ny * ny, 2 * nz * nx, 2 * nx * ny, 2 * nz * ny};
          return float(v[r]);
        });
      }
      [[fallthrough]];
    case Physics::vti:
      s.B = Field(s.box.layout);
      s.C = Field(s.box.layout);
      fill_coefficient(s.A, s.box, [&](std::size_t i) {
        return float(double(model.vp[i]) * model.vp[i] * (1 + 2.0 * model.epsilon[i]) * dt2);
      });
      fill_coefficient(s.B, s.box, [&](std::size_t i) {
        return float(double(model.vp[i]) * model.vp[i] * (1 + 2.0 * model.delta[i]) * dt2);
      });
      fill_coefficient(s.C, s.box, [&](std::size_t i) { return float(double(model.vp[i]) * model.vp[i] * dt2); });
      break;
  }
  const double design_speed = s.opt.boundary.design_speed > 0 ? s.opt.boundary.design_speed : model.max_speed();
  s.absorber = std::make_unique<Absorber>(s.box, s.opt.boundary, s.fd, s.opt.dt, design_speed, s.opt.f0);
  switch (s.opt.kernel) {
    case KernelKind::reference:
      s.step_fn = &kernels::reference_step;
      s.kernel_label = "reference";
      break;
    case KernelKind::optimized:
      if (model.physics == Physics::acoustic_density) {
        float* G[3] = {nullptr, nullptr, nullptr};
        for (int a = 0; a < g.dim; ++a) G[a] = (s.G[a] = Field(s.box.layout)).data();
        kernels::make_density_terms(s.box.layout, g.dim, s.fd, s.A.data(), s.B.data(), G);
      }
      s.step_fn = kernels::optimized_step();
      s.kernel_label = std::string("cpu ") + kernels::optimized_step_name();
      s.one_region = g.dim == 2 && one_region_enabled();
      break;
    case KernelKind::cuda:
      s.cuda = make_cuda_stepper(s.box.layout, model.physics, g.dim, s.fd);  // throws without CUDA
      s.kernel_label = "cuda";
      break;
  }
  if (s.opt.coefficients == CoefficientPrecision::half) {
    std::vector<Field*> fields{&s.A};
    if (model.physics == Physics::vti || model.physics == Physics::tti) fields.insert(fields.end(), {&s.B, &s.C});
    if (model.physics == Physics::acoustic_density)
      for (int a = 0; a < g.dim; ++a)
        if (!s.G[a].empty()) fields.push_back(&s.G[a]);
    const bool pack = s.opt.kernel == KernelKind::optimized && model.physics != Physics::tti;
    s.compressed = compress_coefficients(fields, s.box.layout.total, s.fd,
                                         pack ? kernels::packed_count(model.physics, g.dim) : 0,
                                         largest_coefficient(model, s.fd, dt2));
    if (model.physics == Physics::tti) s.compressed.bytes += 6 * int(sizeof(float));  // R, not compressed
  } else {
    int arrays = model.physics == Physics::acoustic ? 1 : model.physics == Physics::vti ? 3 : 9;  // tti: A, B, C, R
    if (model.physics == Physics::acoustic_density) arrays = s.opt.kernel == KernelKind::optimized ? 1 + g.dim : 2;
    s.compressed.bytes = arrays * int(sizeof(float));
  }
  arch::log_verbose("stencil: %s, %s, order %d, dt %g s, kernel %s, boundary %s (%d pts)%s",
                    physics_name(model.physics), g.describe().c_str(), s.opt.space_order, s.opt.dt,
                    s.kernel_label.c_str(), boundary_name(s.opt.boundary.kind), s.opt.boundary.width,
                    s.opt.boundary.free_surface ? ", free surface" : "");
}

Propagator::~Propagator() = default;

const Field& Propagator::current() const { return s_->p[s_->cur]; }
Field& Propagator::current() { return s_->p[s_->cur]; }
Field& Propagator::previous() { return s_->p[1 - s_->cur]; }
const Grid& Propagator::grid() const { return s_->model->grid; }
double Propagator::dt() const { return s_->opt.dt; }
const Field& Propagator::velocity_term() const { return s_->A; }
const char* Propagator::kernel_in_use() const { return s_->kernel_label.c_str(); }
int Propagator::coefficient_bytes_per_point() const { return s_->compressed.bytes; }

std::vector<Field*> Propagator::current_fields() {
  std::vector<Field*> f{&s_->p[s_->cur]};
  if (!s_->q[0].empty()) f.push_back(&s_->q[s_->cur]);
  return f;
}

void Propagator::step(const PointStencil* source, float amplitude, HaloExchange* halo) {
  step_impl(source, amplitude, nullptr, halo);
}

void Propagator::step(const std::function<void(Field& next)>& inject, HaloExchange* halo) {
  step_impl(nullptr, 0.f, &inject, halo);
}

std::size_t Propagator::state_floats() const {
  std::size_t n = 0;
  for (const Field* f : {&s_->p[0], &s_->p[1], &s_->q[0], &s_->q[1]})
    if (!f->empty()) n += std::size_t(f->layout().total);
  for (const auto* v : s_->absorber->state_arrays()) n += v->size();
  return n;
}

// Levels are saved as (current, previous), so a state loads whatever `cur` is now.
void Propagator::save_state(float* out) const {
  const State& s = *s_;
  for (const Field* f : {&s.p[s.cur], &s.p[1 - s.cur], &s.q[s.cur], &s.q[1 - s.cur]})
    if (!f->empty()) out = std::copy(f->data(), f->data() + f->layout().total, out);
  for (const auto* v : s.absorber->state_arrays()) out = std::copy(v->begin(), v->end(), out);
}

void Propagator::load_state(const float* in) {
  State& s = *s_;
  for (Field* f : {&s.p[s.cur], &s.p[1 - s.cur], &s.q[s.cur], &s.q[1 - s.cur]})
    if (!f->empty()) {
      std::copy(in, in + f->layout().total, f->data());
      in += f->layout().total;
    }
  for (auto* v : s.absorber->state_arrays()) {
    std::copy(in, in + v->size(), v->begin());
    in += v->size();
  }
}

void Propagator::step_impl(const PointStencil* source, float amplitude,
                           const std::function<void(Field& next)>* inject, HaloExchange* halo) {
  State& s = *s_;
  FlushDenormals ftz;
  const int c = s.cur, nx = 1 - c;
  const bool vti = s.model->physics == Physics::vti || s.model->physics == Physics::tti;
  kernels::StepArgs args;
  args.physics = s.model->physics;
  args.dim = s.box.global.dim;
  args.layout = s.box.layout;
  args.fd = s.compressed.packed.size() ? &s.compressed.fd : &s.fd;
  args.packed = s.compressed.packed.size() ? s.compressed.packed.data() : nullptr;
  args.u = s.p[c].data();
  args.u_prev = s.p[nx].data();
  if (vti) {
    args.q = s.q[c].data();
    args.q_prev = s.q[nx].data();
  }
  args.A = s.A.data();
  args.B = s.B.empty() ? nullptr : s.B.data();
  args.C = s.C.empty() ? nullptr : s.C.data();
  for (int a = 0; a < 3; ++a) args.G[a] = s.G[a].empty() ? nullptr : s.G[a].data();
  for (int r = 0; r < 6; ++r) args.R[r] = s.R[r].empty() ? nullptr : s.R[r].data();
  const long ns = s.box.layout.n[s.box.global.slow_axis()];
  const long h = s.fd.half;
  auto run = [&](long j0, long j1) {
    if (j1 <= j0) return;
    if (s.cuda)
      s.cuda->step(args, j0, j1);
    else
      s.step_fn(args, j0, j1);
  };
  auto cpml = [&](bool team) {
    if (s.absorber->kind() != BoundaryKind::cpml) return;
    if (vti)
      s.absorber->apply_cpml({s.q[c].data(), s.p[c].data(), s.p[c].data()}, {s.p[nx].data(), s.q[nx].data()},
                             {{{s.C.data(), s.A.data(), s.A.data()}, {s.C.data(), s.B.data(), s.B.data()}}}, team);
    else
      s.absorber->apply_cpml({s.p[c].data(), s.p[c].data(), s.p[c].data()}, {s.p[nx].data(), nullptr},
                             {{{s.A.data(), s.A.data(), s.A.data()}, {nullptr, nullptr, nullptr}}}, team);
  };
  auto sources = [&] {
    if (source && amplitude != 0.f) {
      const Grid& g = s.box.global;
      const double cell = g.h[0] * g.h[1] * (g.dim == 3 ? g.h[2] : 1.0);
      const float scale = static_cast<float>(amplitude * s.opt.dt * s.opt.dt / cell);
      const int slow = g.slow_axis();
      const PointStencil& st = *source;
      for (int k2 = 0; k2 < st.count[2]; ++k2)
        for (int k1 = 0; k1 < st.count[1]; ++k1)
          for (int k0 = 0; k0 < st.count[0]; ++k0) {
            long c3[3] = {st.first[0] + k0, st.first[1] + k1, st.first[2] + k2};
            const float w = st.w[0][k0] * st.w[1][k1] * st.w[2][k2];
            if (w == 0.f) continue;
            c3[slow] -= s.box.slow_offset;
            bool inside = true;
            for (int a = 0; a < 3; ++a) inside = inside && c3[a] >= 0 && c3[a] < s.box.layout.n[a];
            if (!inside) continue;
            const long i = s.box.layout.index(c3[0], c3[1], c3[2]);
            s.p[nx].data()[i] += scale * w;
            if (vti) s.q[nx].data()[i] += scale * w;
          }
    }
    if (inject) (*inject)(s.p[nx]);
  };
  if (s.one_region && !halo) {
    // One region for the whole 2D step: a fork/join per phase costs about as much as
    // the phase on a 2D grid, and each is a point where a descheduled thread stalls the
    // rest. Same operations in the same order per point as the phases below, so the
    // results are bit-identical: the kernel's line loop (barrier), the CPML loops (their
    // barriers), the sources by one thread (barrier), then per line the sponge of both
    // levels and the free surface, which touch that line's own points only.
    args.team = true;
    s.absorber->unpack_loaded_state();
    Absorber& absorber = *s.absorber;
    float* const fields[4] = {s.p[nx].data(), s.p[c].data(), s.q[nx].empty() ? nullptr : s.q[nx].data(),
                              s.q[c].empty() ? nullptr : s.q[c].data()};
    const bool sponge = absorber.kind() == BoundaryKind::sponge, surface = absorber.free_surface();
#pragma omp parallel num_threads(threads_for_points(double(ns) * double(s.box.layout.n[0])))
    {
      FlushDenormals team_ftz;
      s.step_fn(args, 0, ns);
      cpml(true);
#pragma omp single
      sources();
      if (sponge || surface) {
#pragma omp for schedule(static)
        for (long j = 0; j < ns; ++j) {
          if (sponge)
            for (float* f : fields)
              if (f) absorber.sponge_line(f, j, 0);
          if (surface)
            for (int k : {0, 2})
              if (fields[k]) absorber.free_surface_line(fields[k], j, 0);
        }
      }
    }
    s.cur = nx;
    return;
  }
  if (halo) {
    halo->start(current_fields());
    if (ns > 2 * h) run(h, ns - h);
    halo->finish();
    if (ns > 2 * h) {
      run(0, h);
      run(ns - h, ns);
    } else {
      run(0, ns);
    }
  } else {
    run(0, ns);
  }
  if (s.cuda) s.cuda->sync(args);
  cpml(false);
  sources();
  for (Field* f : {&s.p[nx], &s.p[c], &s.q[nx], &s.q[c]}) {
    if (f->empty()) continue;
    s.absorber->apply_sponge(f->data());
  }
  for (Field* f : {&s.p[nx], &s.q[nx]})
    if (!f->empty()) s.absorber->apply_free_surface(f->data());
  s.cur = nx;
}

void Propagator::step_pair_blocked() {
  State& s = *s_;
  if (s.model->physics != Physics::acoustic || s.box.global.dim != 3 || s.opt.boundary.kind != BoundaryKind::none ||
      s.opt.boundary.free_surface || s.opt.kernel != KernelKind::optimized ||
      s.box.layout.n[2] != s.box.global.n[2])
    throw Error("taihu: step_pair_blocked needs 3D constant-density acoustic, boundary none, no free surface, "
                "the optimized CPU kernel and the whole grid");
  FlushDenormals ftz;
  kernels::StepArgs args;
  args.physics = Physics::acoustic;
  args.dim = 3;
  args.layout = s.box.layout;
  args.fd = s.compressed.packed.size() ? &s.compressed.fd : &s.fd;
  args.packed = s.compressed.packed.size() ? s.compressed.packed.data() : nullptr;
  args.u = s.p[s.cur].data();
  args.u_prev = s.p[1 - s.cur].data();
  args.A = s.A.data();
  kernels::optimized_step_pair()(args);  // cur now holds t+2, the other buffer t+1
}

void Propagator::sample_planes(const PointStencil& st, float* partial) const {
  const State& s = *s_;
  const Grid& g = s.box.global;
  const int slow = g.slow_axis();
  const float* u = s.p[s.cur].data();
  for (int k = 0; k < st.count[slow]; ++k) {
    const long plane = st.first[slow] + k - s.box.slow_offset;
    float sum = 0.f;
    if (plane >= 0 && plane < s.box.layout.n[slow]) {
      const int other = slow == 2 ? 1 : 2;  // the non-slow, non-z axis (count 1 in 2D)
      for (int ko = 0; ko < st.count[other]; ++ko)
        for (int k0 = 0; k0 < st.count[0]; ++k0) {
          long c3[3];
          c3[0] = st.first[0] + k0;
          c3[other] = st.first[other] + ko;
          c3[slow] = plane;
          if (c3[0] < 0 || c3[0] >= g.n[0] || c3[other] < 0 || c3[other] >= g.n[other]) continue;
          sum += st.w[0][k0] * st.w[other][ko] * st.w[slow][k] * u[s.box.layout.index(c3[0], c3[1], c3[2])];
        }
    }
    partial[k] = sum;
  }
}

float Propagator::sample(const PointStencil& st) const {
  float partial[2 * kSincRadius];
  sample_planes(st, partial);
  float sum = 0.f;
  for (int k = 0; k < st.count[s_->box.global.slow_axis()]; ++k) sum += partial[k];
  return sum;
}

float Propagator::max_abs() const {
  const State& s = *s_;
  const Layout& L = s.box.layout;
  // |x| as bits: for non-negative floats the integer order is the float order, and
  // every inf or NaN lies at or above the bits of +inf, so one integer max finds both
  // (a float max would drop NaNs).
  std::uint32_t worst = 0;
  for (const Field* f : {&s.p[s.cur], &s.q[s.cur]}) {
    if (f->empty()) continue;
    const float* base = f->data();
#pragma omp parallel for collapse(2) reduction(max : worst) schedule(static) num_threads(threads_for_points(double(L.n[0] * L.n[1] * L.n[2])))
    for (long i2 = 0; i2 < L.n[2]; ++i2)
      for (long i1 = 0; i1 < L.n[1]; ++i1) {
        const float* line = base + L.index(0, i1, i2);
        std::uint32_t m = 0;
#pragma omp simd reduction(max : m)
        for (long i0 = 0; i0 < L.n[0]; ++i0) m = std::max(m, std::bit_cast<std::uint32_t>(line[i0]) & 0x7fffffffu);
        worst = std::max(worst, m);
      }
  }
  constexpr std::uint32_t kInfBits = 0x7f800000u;
  return worst >= kInfBits ? std::numeric_limits<float>::infinity() : std::bit_cast<float>(worst);
}

double Propagator::energy() const {
  const State& s = *s_;
  const Layout& L = s.box.layout;
  const Grid& g = s.box.global;
  const float* un = s.p[s.cur].data();
  const float* uo = s.p[1 - s.cur].data();
  const long strides[3] = {1, L.s1, L.s2};
  double e = 0;
#pragma omp parallel for collapse(2) reduction(+ : e) schedule(static) num_threads(threads_for_points(double(L.n[0] * L.n[1] * L.n[2])))
  for (long i2 = 0; i2 < L.n[2]; ++i2)
    for (long i1 = 0; i1 < L.n[1]; ++i1)
      for (long i0 = 0; i0 < L.n[0]; ++i0) {
        const long i = L.index(i0, i1, i2);
        double lap = 0;
        for (int a = 0; a < g.dim; ++a) {
          lap += double(s.fd.d2[a][0]) * uo[i];
          for (int k = 1; k <= s.fd.half; ++k)
            lap += double(s.fd.d2[a][k]) * (double(uo[i + k * strides[a]]) + uo[i - k * strides[a]]);
        }
        const double du = double(un[i]) - uo[i];
        e += du * du / double(s.A.data()[i]) - double(un[i]) * lap;  // A = v^2 dt^2
      }
  return e;
}

ShotRecord run_shot(const Model& model, const Shot& shot, const Options& options) {
  const Options opt = resolved(model, options);
  if (shot.wavelet.size() < static_cast<std::size_t>(opt.nt))
    throw Error("taihu: the wavelet has " + std::to_string(shot.wavelet.size()) + " samples, the run needs " +
                std::to_string(opt.nt));
  Propagator prop(model, opt);
  const PointStencil src = point_stencil(model.grid, shot.source);
  std::vector<PointStencil> rec;
  for (const auto& r : shot.receivers) rec.push_back(point_stencil(model.grid, r));
  ShotRecord out;
  out.nt = opt.nt;
  out.dt = opt.dt;
  out.source = shot.source;
  out.receivers = shot.receivers;
  out.data.assign(rec.size() * static_cast<std::size_t>(opt.nt), 0.f);
  const int every = std::max(1, opt.nt / 50);
  DivergenceGuard guard(model, opt, shot.wavelet);
  for (int it = 0; it < opt.nt; ++it) {
    for (std::size_t r = 0; r < rec.size(); ++r) out.data[r * opt.nt + it] = prop.sample(rec[r]);
    if (opt.snapshot_every > 0 && opt.on_snapshot && it % opt.snapshot_every == 0 && it > 0)
      opt.on_snapshot(it, prop.current());
    prop.step(&src, shot.wavelet[it]);
    if (guard.due(it + 1)) guard.check(prop.max_abs(), it + 1);
    if (opt.on_progress && (it % every == 0 || it + 1 == opt.nt)) opt.on_progress(it + 1, opt.nt);
  }
  guard.check_record(out);
  return out;
}

}  // namespace taihu::stencil
