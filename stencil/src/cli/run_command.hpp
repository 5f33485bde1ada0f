// Executes a RunPlan: shots (spread over MPI ranks when launched under mpirun), progress
// on stderr, SEG-Y and PNG outputs (private to the CLI).
#pragma once
#include "taihu/stencil/run_plan.hpp"

namespace taihu::stencil::cli {

int run_plan(const RunPlan& plan);

}  // namespace taihu::stencil::cli
