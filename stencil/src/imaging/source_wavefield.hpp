// The source wavefield u(n) of one shot, readable backwards in time (private; see
// migration.hpp for the checkpoint scheme). The constructor runs the forward pass; given
// receivers, that pass also samples them as run_shot does (same propagator, same order:
// bitwise run_shot(model, shot)), so RTM needs no separate run for the direct data.
// Binomial plans compute states on demand: their first pass, and the samples, come with
// the first at(nt - 1) (recorded() is null until then).
#pragma once
#include <vector>

#include "physics/divergence.hpp"
#include "taihu/stencil/migration.hpp"

namespace taihu::stencil {

class SourceWavefield {
 public:
  SourceWavefield(const Model& model, const Shot& shot, const Options& options, double budget_bytes,
                  const std::vector<Position>* receivers = nullptr);
  // u(n) over the grid's points (z fastest), the field run_shot samples at step n.
  // Fastest when called with n decreasing; valid until the next call.
  const float* at(int n);
  const CheckpointPlan& plan() const { return plan_; }
  long forward_steps() const { return steps_; }  // steps run so far (first pass + replays)
  // The receivers' samples of the first pass (receiver-major, nt each), or nullptr when
  // no receivers were given or the first pass has not run yet (binomial before at(nt - 1)).
  const ShotRecord* recorded() const {
    return recorded_.receivers.empty() || sampled_ < opt_.nt ? nullptr : &recorded_;
  }

 private:
  void copy_interior(const Field& f, float* out) const;
  void replay(int segment);  // fills buffer_ with the segment's snapshots
  const float* binomial_at(int n);
  void advance_to(int n);  // binomial: steps prop_ from position_ to n

  const Model& model_;
  const Shot& shot_;
  Options opt_;
  CheckpointPlan plan_;
  Propagator prop_;
  PointStencil src_;
  std::size_t points_ = 0;
  std::vector<float> checkpoints_;  // plan_.checkpoints states (store_all: none)
  std::vector<float> buffer_;       // snapshots of buffered_segment_ (store_all: all nt)
  int buffered_segment_ = -1;
  long steps_ = 0;
  DivergenceGuard guard_;
  std::vector<int> stack_;  // binomial: checkpointed positions, increasing (slot i holds stack_[i])
  int position_ = 0;        // binomial: the step prop_ is at
  int furthest_ = 0;        // binomial: the furthest step reached (checked for divergence)
  void sample_new_position();  // samples the receivers at position_ if it is the next unsampled step
  ShotRecord recorded_;     // receivers sampled in the first pass (empty: none)
  std::vector<PointStencil> receivers_;
  int sampled_ = 0;         // steps 0 .. sampled_ - 1 are in recorded_
  int copied_ = -1;         // binomial: the step whose snapshot buffer_ holds
};

}  // namespace taihu::stencil
