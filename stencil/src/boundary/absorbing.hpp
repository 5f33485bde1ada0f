// Absorbing layers and the free surface applied after each kernel step (private).
//
// CPML for the second-order equation (Pasalic & McGarry, SEG 2010) with Komatitsch &
// Martin (2007) profiles d(x) = d0 (x/L)^2, alpha(x) = pi f0 (1 - x/L), kappa = 1:
//   psi  <- b psi  + a d1(f)
//   zeta <- b zeta + a (d2(f) + d1(psi))
//   next += coef * (d1(psi) + zeta)
// per axis, only in that axis's two slabs (plus the stencil radius, where d1(psi) is
// still non-zero). The correction is additive, so it composes with any kernel.
// VTI: axes x/y stretch p's horizontal operator, z stretches q's vertical one (each
// enters both equations with its coefficient). Variable density: the correction is the
// constant-density one (the grad(ln rho) term is not stretched), exact where the
// density is constant across the layer, as models usually are at their edges.
#pragma once
#include <array>
#include <vector>

#include "kernels/kernel_api.hpp"
#include "taihu/stencil/boundary.hpp"

namespace taihu::stencil {

struct LocalBox {
  Grid global;        // the whole model's grid
  Layout layout;      // this process's padded local layout
  long slow_offset;   // global index of local slow index 0
};

class Absorber {
 public:
  Absorber(const LocalBox& box, const BoundaryOptions& opt, const kernels::FdWeights& fd, double dt,
           double vmax, double f0);

  // CPML correction. src[a]: the field differentiated along axis a (at time n);
  // targets[t] (up to 2) receive coef[t][a] * correction of axis a.
  // team: called by every thread of an enclosing OpenMP region, which shares the slab
  // lines (barriers only where the data flow needs them, the last one at the end); the
  // caller then calls unpack_loaded_state() first, outside the region.
  void apply_cpml(const std::array<const float*, 3>& src, const std::array<float*, 2>& targets,
                  const std::array<std::array<const float*, 3>, 2>& coef, bool team = false);
  // Makes a state loaded through state_arrays() current (apply_cpml does it unless team).
  void unpack_loaded_state();
  // Sponge damping of one field (the whole field, or one z line (i1, i2) of local indices).
  void apply_sponge(float* field) const;
  void sponge_line(float* field, long i1, long i2) const;
  // Free surface on z = 0: zero on the surface, antisymmetric mirror above it.
  void apply_free_surface(float* field) const;
  void free_surface_line(float* field, long i1, long i2) const;

  BoundaryKind kind() const { return opt_.kind; }
  bool free_surface() const { return opt_.free_surface; }
  // The CPML's auxiliary fields (psi, zeta per axis; none for other kinds), the
  // absorber's part of the time-stepping state (Propagator::save_state/load_state), on
  // their axis's slabs only: they are zero elsewhere, so a checkpoint holds about 2
  // wavefields instead of 2 + 2 dim. The call packs the fields into the returned
  // arrays; the next apply_cpml() starts from whatever they hold then (a loaded state).
  std::vector<std::vector<float>*> state_arrays();
  // Half-open global index range of each absorbing slab of axis a (empty if none).
  std::array<long, 2> left_slab(int a) const;
  std::array<long, 2> right_slab(int a) const;

 private:
  LocalBox box_;
  BoundaryOptions opt_;
  kernels::FdWeights fd_;
  std::array<std::vector<float>, 3> a_, b_, sponge_;  // per axis, by global index
  std::array<std::vector<float>, 3> psi_, zeta_;       // per axis, padded local fields
  std::array<std::vector<float>, 3> psi_slabs_, zeta_slabs_;  // their slab points (state_arrays)
  std::array<long, 2> unit_z_{0, 0};  // z range where sponge_[0] is exactly 1
  bool state_exported_ = false;  // the slab arrays may have been written: unpack first
  // Copies the slab points of psi_/zeta_ into psi_slabs_/zeta_slabs_ (pack) or back.
  void copy_slabs(bool pack);
};

}  // namespace taihu::stencil
