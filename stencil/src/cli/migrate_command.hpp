// `taihu-seismic migrate`: reverse-time migration of a survey (private to the CLI).
// The run configuration's model is the true earth; the migration velocity is that model
// smoothed (migration.smooth metres). Observed gathers come from migration.data (SEG-Y,
// one shot per field record, geometry and sampling from the trace headers) or, without
// it, are modelled in the true model minus the smoothed one (reflections only). Writes
// <dir>/image.{segy,png,npy} (compensated and Laplacian-filtered), image_xcorr.{png,npy},
// image_compensated.npy and illumination.npy.
#pragma once
#include "taihu/stencil/config.hpp"
#include "taihu/stencil/run_plan.hpp"

namespace taihu::stencil::cli {

int migrate(const Config& config, RunPlan plan);

}  // namespace taihu::stencil::cli
