// Data-parallel training from Python under mpirun, on taihu-caffe's own machinery
// (taihu::caffe_parallel: prepare_data_parallel, DataParallel; cli/MpiSession).
//
// `import caffe` under a launcher (mpirun / srun: OMPI_COMM_WORLD_SIZE, PMI_SIZE, ...)
// starts MPI as taihu-caffe does (MPI_THREAD_MULTIPLE; rank > 0 logs warnings and
// errors only) and finalises it at interpreter exit; a plain `python3` never touches
// MPI. With more than one rank, every solver made afterwards (get_solver, SGDSolver,
// ...) trains data-parallel, exactly as `mpirun -np P taihu-caffe train`:
//   creation (collective): this rank's TRAIN data shard and rank 0's random_seed;
//   first step()/solve() (collective): parameters broadcast from rank 0, then each
//     iteration's gradients averaged by taihu::comm's bucketed allreduce;
//   only rank 0 tests, logs progress and writes snapshots; each snapshot first checks
//     that all ranks hold the same weights.
// Every rank must run the same calls (the script is the same on all ranks).
// Without MPI at build time (no caffe_parallel) the module is single-process and
// refuses a launcher with several ranks with a clear error, like the CLI.
#pragma once
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "taihu/caffe/proto.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::pycaffe {

// Collective when data-parallel: shards and seeds `param`; true when the solver about
// to be made from it trains data-parallel (pass that to register_solver).
bool prepare_solver(caffe::proto::SolverParameter* param);
void register_solver(caffe::Solver* solver, bool parallel);

// Called (GIL released) before step/solve: a data-parallel solver's first call
// broadcasts the parameters and connects the gradient allreduce.
void start_training(caffe::Solver& solver);

// Solver::snapshot() for Python: data-parallel, every rank checks the weights agree
// and rank 0 writes; every rank returns the .solverstate path.
std::string snapshot(caffe::Solver& solver);

// Deletes a solver after disconnecting its data-parallel state (pybind11 holder).
struct SolverDeleter {
  void operator()(caffe::Solver* solver) const;
};
using SolverPtr = std::unique_ptr<caffe::Solver, SolverDeleter>;

}  // namespace taihu::pycaffe
