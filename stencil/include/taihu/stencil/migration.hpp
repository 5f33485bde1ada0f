// Reverse-time migration (RTM) on the forward-modelling engine (propagator.hpp).
//
// Adjoint propagation: run_shot computes d = F f, the receiver samples of the wavefield
// a source wavelet f drives (leapfrog u(n+1) = 2u(n) - u(n-1) + A L u(n) + c f(n), with
// A = v^2 dt^2 and L the symmetric finite-difference operator). Its adjoint runs the
// same kernel backwards in time on mu = A lambda (lambda the adjoint field):
//   mu(n) = 2 mu(n+1) - mu(n+2) + A L mu(n+1) + A R^T d(n),
// receivers injected as sources with the sinc weights that sample them, time reversed;
// with a sponge the damping moves before the kernel, which is where Propagator::step
// already puts it. Variable density: the kernel's A (L mu - g . D mu), g_a = D_a ln rho,
// becomes A (L mu + sum_a D_a(g_a mu)) by adding A sum_a (D_a(g_a mu) + g_a D_a mu) to
// each step. This is the exact transpose (to float rounding) for acoustic and variable
// density with boundary none or sponge and no free surface (the dot-product test,
// tests/stencil/test_migration.cpp). With CPML or a free surface the same recursion is
// the usual RTM receiver propagation, not the exact transpose (the CPML's auxiliary
// fields and the free surface's mirror are not self-adjoint).
//
// Source wavefield backwards in time: stored whole when the memory budget allows, else
// checkpointed. A checkpoint is the full time-stepping state: both time levels, and the
// CPML's auxiliary fields on their slabs only (about 2 wavefields plus the layers).
//  - Single level: the forward pass saves a checkpoint every K steps and keeps the last
//    segment's snapshots; each earlier segment is recomputed once from its checkpoint
//    into a K-snapshot buffer (K the largest that fits the budget). Forward steps =
//    nt + (nt - last segment) = 1..2 x nt.
//  - Binomial (Griewank's revolve, ACM TOMS 26, 2000): s checkpoint slots and one
//    snapshot; states are advanced from the latest checkpoint, placing checkpoints at the
//    optimal split points, for revolve_forward_steps(nt, s) forward steps in all, the
//    least any schedule with s slots needs. Down to s = 1 (nt (nt - 1) / 2 steps).
// The plan takes whichever of the two fits the budget with fewer forward steps.
//
// Imaging: zero-lag cross-correlation I(x) = sum_n u(x, n) lambda(x, n), the source
// illumination S(x) = sum_n u(x, n)^2, the illumination-compensated image I / (S + eps
// max S), and the Laplacian filter -lap(.) that removes the low-wavenumber backscatter.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

// How the source wavefield is made available backwards in time.
struct CheckpointPlan {
  int nt = 0;
  bool store_all = false;           // every snapshot kept from the forward pass
  bool binomial = false;            // revolve: `checkpoints` slots and one snapshot
  int segment = 0;                  // K: steps between checkpoints (= snapshot buffer length; binomial: 1)
  int checkpoints = 0;              // ceil(nt / K) (binomial: the slots s)
  double snapshot_bytes = 0;        // one snapshot (the grid's points, float32)
  double state_bytes = 0;           // one checkpoint (Propagator::state_floats)
  double memory_bytes = 0;          // checkpoints + buffer (or nt snapshots)
  double store_all_bytes = 0;       // nt snapshots, for comparison
  long forward_steps = 0;           // including the recomputation
  double recompute_factor() const { return nt > 0 ? double(forward_steps) / nt : 0.0; }
  // "checkpoints every 120 steps: 9 x 1.2 MiB + 120-step buffer 56 MiB = 67 MiB; 1.89 x nt
  //  forward steps (store all: 470 MiB)"
  std::string describe() const;
};

// The plan for `budget_bytes` (infinity: store all). Throws taihu::Error naming the budget,
// one checkpoint and one snapshot (the least any plan needs) and what storing all would
// need when even that does not fit.
CheckpointPlan plan_checkpoints(int nt, double snapshot_bytes, double state_bytes, double budget_bytes);

// Griewank's minimal number of forward steps to visit the states of `steps` time steps
// in reverse with `slots` checkpoints (one holding the initial state): r steps - beta(s+1,
// r-1) with beta(s, r) = C(s + r, s) and r the least with beta(s, r) >= steps.
long revolve_forward_steps(long steps, long slots);
// The first checkpoint's distance from the current one in an optimal schedule of that
// many steps and slots (1 <= result < steps; steps >= 2, slots >= 2).
long revolve_split(long steps, long slots);

// Back-propagates receiver data (receiver-major, nt samples each, as ShotRecord::data):
// calls each(n, prop) for n = nt-1 down to 0, where prop.current() holds mu(n) = A
// lambda(n), the adjoint field paired with u(n) (the field run_shot samples at step n).
void propagate_adjoint(const Model& model, const std::vector<Position>& receivers, const std::vector<float>& data,
                       const Options& options, const std::function<void(int n, const Propagator& prop)>& each);

// F^T d at `source`: the adjoint of run_shot's map from the source wavelet to the
// receiver samples, one value per time step (the dot-product test).
std::vector<double> adjoint_source_wavelet(const Model& model, const Position& source,
                                           const std::vector<Position>& receivers, const std::vector<float>& data,
                                           const Options& options);

// One shot's image over the model's grid (z fastest, like Model::vp).
struct ShotImage {
  std::vector<float> image;         // sum_n u lambda
  std::vector<float> illumination;  // sum_n u^2
  CheckpointPlan plan;
};

// Migrates `observed` (the shot's receivers, options.nt samples at options.dt) in
// `model`; the source wavefield keeps within `checkpoint_bytes` (infinity: no limit).
ShotImage migrate_shot(const Model& model, const Shot& shot, const ShotRecord& observed, const Options& options,
                       double checkpoint_bytes);

// Migrates `recorded` minus the direct data run_shot(model, shot, options) gives (the
// reflections the smooth model does not explain), with that direct data sampled by the
// source wavefield's own forward pass: three grid sweeps per step (recorded data, source
// wavefield, adjoint) instead of four. Bitwise equal to migrate_shot on recorded - run_shot
// (model, ...), whatever the checkpoint plan (binomial: the samples come from revolve's
// first advance to nt - 1, which the adjoint needs anyway).
ShotImage migrate_scattered(const Model& model, const Shot& shot, const ShotRecord& recorded,
                            const Options& options, double checkpoint_bytes);

// image / (illumination + eps * reference), reference = max illumination unless > 0 given.
std::vector<float> illumination_compensated(const std::vector<float>& image, const std::vector<float>& illumination,
                                            double eps = 1e-3, double reference = 0);
// The image zeroed above depth - taper metres, a cosine taper up to `depth`, unchanged
// below: the acquisition's own cross-talk (sources and receivers against each other's
// fields, and a direct wave the migration model does not match) dwarfs the reflectors there.
std::vector<float> muted_above(const Grid& grid, const std::vector<float>& image, double depth, double taper);
// -lap(image) by second-order differences (zero outside the grid).
std::vector<float> laplacian_filtered(const Grid& grid, const std::vector<float>& image);
// The model with its slowness averaged over a box of +-radius metres per axis (two
// passes, so a triangle): a migration velocity model without the sharp reflectors.
Model smoothed_model(const Model& model, double radius_metres);

}  // namespace taihu::stencil
