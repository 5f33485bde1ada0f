// Stops a diverging run (private; run_shot and run_shot_distributed).
//
// Contract: the time loop calls due(steps_done) after each step and, when it says so,
// check(max |u| over the whole wavefield, steps_done); check_record() on the finished
// gather. Both throw taihu::Error naming the step and the likely causes (dt against
// the stable dt for the model's largest speed and the space order; the absorbing
// layers). Criteria:
//  - any inf or NaN in the field or the gather;
//  - after the source has stopped (the last step injecting more than 1e-6 of the
//    wavelet's peak), max |u| above kDivergenceGrowth times its largest value while the
//    source was active. A passive medium with absorbing (or rigid) boundaries does not
//    amplify a wavefield by 10^6; an unstable one does so long before float overflows
//    (the old CPML defect took 60x30 from 1e-7 to 1e19, still finite, in 1 s).
// The checks run every kDivergenceCheckEvery steps, outside the kernels: one read of the
// field, under 1% of the steps' time.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

class DivergenceGuard {
 public:
  DivergenceGuard(const Model& model, const Options& opt, const std::vector<float>& wavelet)
      : model_(model), opt_(opt) {
    float peak = 0.f;
    for (int i = 0; i < opt.nt; ++i) peak = std::max(peak, std::abs(wavelet[std::size_t(i)]));
    for (int i = 0; i < opt.nt; ++i)
      if (std::abs(wavelet[std::size_t(i)]) > 1e-6f * peak) source_end_ = i + 1;
  }

  // steps_done: steps completed so far (1..nt).
  bool due(int steps_done) const {
    return steps_done % kDivergenceCheckEvery == 0 || steps_done == opt_.nt || steps_done == source_end_;
  }

  void check(float max_abs, int steps_done) {
    if (!std::isfinite(max_abs)) fail("the wavefield holds inf or NaN", steps_done);
    if (steps_done <= source_end_) {
      active_peak_ = std::max(active_peak_, double(max_abs));
      return;
    }
    if (active_peak_ > 0 && max_abs > kDivergenceGrowth * active_peak_) {
      char what[200];
      std::snprintf(what, sizeof what,
                    "max |u| grew to %.3g, over %.0e times its %.3g while the source was active (to step %d)",
                    double(max_abs), kDivergenceGrowth, active_peak_, source_end_);
      fail(what, steps_done);
    }
  }

  void check_record(const ShotRecord& r) const {
    for (std::size_t i = 0; i < r.data.size(); ++i)
      if (!std::isfinite(r.data[i])) {
        const std::size_t trace = i / std::size_t(r.nt), step = i % std::size_t(r.nt);
        fail("the gather holds a non-finite sample (trace " + std::to_string(trace + 1) + ")", int(step));
      }
  }

 private:
  [[noreturn]] void fail(const std::string& what, int steps_done) const {
    const double limit = stable_dt(model_, opt_.space_order);
    char buf[700];
    std::snprintf(buf, sizeof buf,
                  "taihu: the run diverged at step %d of %d (t = %.4g s): %s. Likely causes: dt = %.4g s against "
                  "the stable %.4g s for the largest speed %.1f m/s at space order %d (%.2f of it); the absorbing "
                  "layers (%s) on %s; or extreme model contrasts",
                  steps_done, opt_.nt, steps_done * opt_.dt, what.c_str(), opt_.dt, limit, model_.max_speed(),
                  opt_.space_order, opt_.dt / limit, describe_layers(model_.grid, opt_.boundary).c_str(),
                  model_.grid.describe().c_str());
    throw Error(buf);
  }

  const Model& model_;
  const Options& opt_;
  int source_end_ = 0;
  double active_peak_ = 0;
};

}  // namespace taihu::stencil
