// Executes a RunPlan: shots (spread over MPI ranks when launched under mpirun), progress
// on stderr, SEG-Y and PNG outputs (private to the CLI).
#pragma once
#include "taihu/stencil/run_plan.hpp"

namespace taihu::stencil::cli {

// This process's rank and the rank count of MPI_COMM_WORLD (0 of 1 without MPI or
// before MPI_Init).
struct WorldRank {
  int rank = 0, ranks = 1;
};
WorldRank world_rank();

int run_plan(const RunPlan& plan);

}  // namespace taihu::stencil::cli
