// Forward modelling: second order in time (leapfrog), space order 2..16, on a Model
// with absorbing boundaries, an optional free surface, an interpolated source and
// interpolated receivers.
//
//   Options opt; opt.space_order = 8; opt.dt = 0 (automatic); opt.nt = 2000;
//   ShotRecord rec = run_shot(model, shot, opt);   // rec.trace(r)[it] = u(receiver r, it*dt)
//
// The equation solved is u_tt = L u + s(t) delta(x - x_s), with L the physics' operator
// (acoustic: v^2 lap u; density: rho v^2 div(grad u / rho), expanded as
// v^2 (lap u - grad ln(rho) . grad u); VTI: the coupled p/q system of Fletcher, Du and
// Fowler 2009 with vs = 0, where the source drives both p and q and receivers record p).
// In a homogeneous 3D medium u = s(t - r/v) / (4 pi v^2 r).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "taihu/stencil/acquisition.hpp"
#include "taihu/stencil/boundary.hpp"
#include "taihu/stencil/model.hpp"

namespace taihu::stencil {

enum class KernelKind { optimized, reference, cuda };
const char* kernel_name(KernelKind kind);
KernelKind parse_kernel(const std::string& text);  // "optimized" | "reference" | "cuda"

// How the per-point coefficients (v^2 dt^2 and its relatives) are stored:
//  - float32: one float array per coefficient;
//  - half: every coefficient rounded to an IEEE half (after scaling all of them by one
//    power of two so the largest lies in [2^14, 2^15); the scale is folded into the
//    stencil weights, so it costs nothing), and the optimized CPU kernel reads them merged
//    per block of 8 points: 2 B per coefficient, so a 3D acoustic step moves 14 B per point
//    instead of 16, density 20 instead of 28, VTI 30 instead of 36. The rounding (relative
//    error <= 2^-11 per coefficient) applies to every kernel, so reference, CUDA and TTI
//    (which keep float storage) give the same answer as the compressed CPU kernel within
//    float rounding. Accuracy: stencil/README.md.
//  - automatic (the default): half where it measured faster here (variable density
//    1.2-1.45x, VTI 1.2x, 3D constant-density acoustic 1.11-1.31x since its plane-pair
//    kernel), float32 elsewhere (2D acoustic: not measured; TTI keeps float storage
//    anyway); resolved() settles it.
enum class CoefficientPrecision { float32, half, automatic };
const char* coefficient_precision_name(CoefficientPrecision precision);   // "float" | "half" | "auto"
CoefficientPrecision parse_coefficient_precision(const std::string& text);  // "float" | "half" | "auto"

struct Options {
  int space_order = 8;
  double dt = 0;   // seconds; 0: 0.6 x the stable limit (negative or non-finite: an error)
  int nt = 0;      // time steps
  double f0 = 10;  // dominant frequency (Hz): the CPML's alpha profile uses pi f0
  BoundaryOptions boundary;
  KernelKind kernel = KernelKind::optimized;
  CoefficientPrecision coefficients = CoefficientPrecision::automatic;
  // Called every `snapshot_every` steps (0: never) with the step and the pressure.
  int snapshot_every = 0;
  std::function<void(int step, const class Field& pressure)> on_snapshot;
  // Called about every 2% of the steps.
  std::function<void(int step, int nt)> on_progress;
};

// The largest stable dt (seconds) for this model, order and physics (von Neumann bound
// of the leapfrog scheme with the computed stencil weights).
double stable_dt(const Model& model, int space_order);
// Throws taihu::Error "dt = ... is unstable ...; use dt <= ..." when dt is too large.
void check_cfl(const Model& model, int space_order, double dt);
// Options with dt filled in (automatic dt), coefficients = automatic settled for the
// model's physics, and validated.
Options resolved(const Model& model, const Options& options);

struct Shot {
  Position source;
  std::vector<Position> receivers;
  std::vector<float> wavelet;  // one value per time step (at least nt values)
};

struct ShotRecord {
  int nt = 0;
  double dt = 0;
  Position source;
  std::vector<Position> receivers;
  std::vector<float> data;  // receiver-major: data[r * nt + it]
  const float* trace(std::size_t r) const { return data.data() + r * nt; }
};

// The slab of the slow axis (y in 3D, x in 2D) one process owns; the whole grid by
// default. Used by the MPI decomposition.
struct Subdomain {
  long slow_begin = 0;
  long slow_count = -1;  // -1: to the end of the grid
};

// Exchanges the halo planes of the wavefields between neighbouring subdomains.
// start() posts the transfers, finish() completes them; the propagator computes the
// interior in between.
class HaloExchange {
 public:
  virtual ~HaloExchange() = default;
  virtual void start(const std::vector<class Field*>& fields) = 0;
  virtual void finish() = 0;
};

// The time-stepping engine for one subdomain. Most users call run_shot().
class Propagator {
 public:
  Propagator(const Model& model, const Options& options, const Subdomain& sub = {});
  ~Propagator();
  Propagator(const Propagator&) = delete;
  Propagator& operator=(const Propagator&) = delete;

  // One step: u(n+1) from u(n), u(n-1), plus amplitude * dt^2 injected at `source`
  // (nullptr: no source). Afterwards current() is u(n+1).
  void step(const PointStencil* source, float amplitude, HaloExchange* halo = nullptr);

  // One step whose injection is `inject(next)`: it adds to u(n+1) where step() adds its
  // source (after the kernel and the CPML, before the sponge and the free surface), so
  // an adjoint propagation can inject many receivers with per-point weights.
  void step(const std::function<void(Field& next)>& inject, HaloExchange* halo = nullptr);

  // The whole time-stepping state (both time levels of every wavefield and the CPML's
  // auxiliary fields) as state_floats() floats, for checkpointing: load_state() of a
  // saved state makes the following steps repeat bit for bit.
  std::size_t state_floats() const;
  void save_state(float* out) const;
  void load_state(const float* in);

  // Two steps at once with temporal blocking (a wavefront along y keeps both time
  // levels in cache): same result as two step() calls without a source. Only for 3D
  // constant-density acoustic with boundary none and no free surface on the CPU
  // kernel; throws taihu::Error otherwise.
  void step_pair_blocked();

  // Pressure at u(n): the field receivers see.
  const Field& current() const;
  Field& current();
  Field& previous();
  // All time levels of all wavefields (what a halo exchange must update).
  std::vector<Field*> current_fields();

  // Receiver value split by slow-axis plane: partial[k] is the contribution of plane
  // stencil.first[slow] + k if this subdomain owns it, else 0. Summing the planes in
  // order gives the same float on any decomposition.
  void sample_planes(const PointStencil& receiver, float* partial) const;
  float sample(const PointStencil& receiver) const;

  // Largest |value| of the current time level of every wavefield (p, and q for VTI/TTI)
  // over this subdomain's points; +infinity if any is inf or NaN. One read of the
  // field(s), in parallel: run_shot calls it every kDivergenceCheckEvery steps, outside
  // the kernels, to stop a diverging run.
  float max_abs() const;

  // Discrete energy of the (constant-density) leapfrog scheme between u(n-1) and
  // u(n): sum (u(n)-u(n-1))^2/(v dt)^2 - u(n) . lap u(n-1), conserved without boundaries.
  double energy() const;

  const Grid& grid() const;
  // A = v^2 dt^2 per point as the kernel multiplies by it (after any half rounding);
  // for VTI/TTI v^2 (1 + 2 epsilon) dt^2.
  const Field& velocity_term() const;
  double dt() const;
  const char* kernel_in_use() const;
  // Bytes of coefficients the kernel in use reads per point (e.g. 4 acoustic float32, 2 half).
  int coefficient_bytes_per_point() const;

 private:
  void step_impl(const PointStencil* source, float amplitude, const std::function<void(Field& next)>* inject,
                 HaloExchange* halo);
  struct State;
  std::unique_ptr<State> s_;
};

// Runs one shot on one process, recording every receiver at every step. Every
// kDivergenceCheckEvery steps (and at the end) it checks the wavefield, and throws
// taihu::Error naming the step and the likely causes (dt against the stable dt, the
// absorbing layers) when it is no longer finite or, once the source has stopped, has
// grown kDivergenceGrowth-fold over its size when the source stopped. It never returns
// a record with a non-finite sample.
inline constexpr int kDivergenceCheckEvery = 64;
inline constexpr double kDivergenceGrowth = 1e6;
ShotRecord run_shot(const Model& model, const Shot& shot, const Options& options);

}  // namespace taihu::stencil
