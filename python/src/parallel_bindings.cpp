// caffe.solver_count / solver_rank / set_multiprocess / set_data_parallel_options and
// the data-parallel solver life cycle (see parallel.hpp). MPI starts through
// taihu-caffe's own cli::MpiSession; the training uses taihu::caffe_parallel.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "cli/mpi_session.hpp"
#include "parallel.hpp"
#include "taihu/arch/error.hpp"
#if TAIHU_CAFFE_PARALLEL
#include <mpi.h>

#include "taihu/caffe/data_parallel.hpp"
#endif

namespace taihu::pycaffe {

namespace {

using caffe::Solver;

struct World {
  std::unique_ptr<caffe::cli::MpiSession> session;  // null: no launcher, or MPI started by someone else
  int rank = 0, size = 1;
  bool multiprocess = true;  // caffe.set_multiprocess
#if TAIHU_CAFFE_PARALLEL
  caffe::DataParallelOptions options;
  // Solvers made data-parallel; the DataParallel is made at their first step/solve.
  std::mutex mutex;
  std::map<const Solver*, std::unique_ptr<caffe::DataParallel>> solvers;
#endif
};

World& world() {
  static World* w = new World;  // outlives every solver (never destroyed)
  return *w;
}

bool data_parallel() { return world().size > 1 && world().multiprocess; }

void start_world() {
  World& w = world();
#if TAIHU_CAFFE_PARALLEL
  int running = 0;
  MPI_Initialized(&running);
  if (!running) {
    w.session = std::make_unique<caffe::cli::MpiSession>(nullptr, nullptr);
    if (!w.session->active()) {  // not under a launcher: single process, no MPI
      w.session.reset();
      return;
    }
  }
  // MPI may have been started by taihu-caffe (a Python layer's embedded interpreter) or
  // by mpi4py; then its owner finalises it.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
#else
  w.session = std::make_unique<caffe::cli::MpiSession>(nullptr, nullptr);  // refuses several ranks
  w.session.reset();
#endif
}

// atexit: disconnect every solver's allreduce, then MPI_Finalize (only if we started it).
void finish_world() {
  World& w = world();
#if TAIHU_CAFFE_PARALLEL
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    for (auto& [solver, dp] : w.solvers) dp.reset();
  }
#endif
  py::gil_scoped_release release;
  w.session.reset();
}

}  // namespace

bool prepare_solver([[maybe_unused]] caffe::proto::SolverParameter* param) {
  if (!data_parallel()) return false;
#if TAIHU_CAFFE_PARALLEL
  caffe::prepare_data_parallel(MPI_COMM_WORLD, param);
  return true;
#else
  return false;
#endif
}

void register_solver([[maybe_unused]] Solver* solver, [[maybe_unused]] bool parallel) {
#if TAIHU_CAFFE_PARALLEL
  if (!parallel) return;
  std::lock_guard<std::mutex> lock(world().mutex);
  world().solvers[solver] = nullptr;
#endif
}

void start_training([[maybe_unused]] Solver& solver) {
#if TAIHU_CAFFE_PARALLEL
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.solvers.find(&solver);
  if (it == w.solvers.end() || it->second) return;
  it->second = std::make_unique<caffe::DataParallel>(solver, MPI_COMM_WORLD, w.options);
#endif
}

std::string snapshot(Solver& solver) {
#if TAIHU_CAFFE_PARALLEL
  World& w = world();
  bool parallel = false;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    parallel = w.solvers.count(&solver) > 0;
  }
  if (parallel) {
    start_training(solver);  // the weights check needs the parameters broadcast first
    const std::string what = "weights at iteration " + std::to_string(solver.iter());
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      w.solvers[&solver]->verify_weights(what);
    }
    std::string path = w.rank == 0 ? solver.snapshot() : std::string();
    int n = static_cast<int>(path.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(static_cast<std::size_t>(n));
    MPI_Bcast(path.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
    return path;
  }
#endif
  return solver.snapshot();
}

void SolverDeleter::operator()(Solver* solver) const {
#if TAIHU_CAFFE_PARALLEL
  {
    std::lock_guard<std::mutex> lock(world().mutex);
    world().solvers.erase(solver);  // disconnects the hooks while the solver lives
  }
#endif
  delete solver;
}

void bind_parallel(py::module_& m) {
  start_world();
  if (world().session) py::module_::import("atexit").attr("register")(py::cpp_function(&finish_world));

  m.def("solver_count", [] { return world().size; },
        "Ranks of the data-parallel job (mpirun -np P), 1 without a launcher");
  m.def("solver_rank", [] { return world().rank; }, "This process's rank (0 without a launcher)");
  m.def("set_multiprocess", [](bool on) { world().multiprocess = on; }, py::arg("multiprocess"),
        "Whether solvers made from now on train data-parallel when several ranks run (default True);\n"
        "False: each rank trains on its own.");
  m.def("set_solver_count", [](int count) {
          if (count != world().size) {
            throw py::value_error("set_solver_count(" + std::to_string(count) + "): taihu takes the rank count from "
                                  "the launcher, and this job has " + std::to_string(world().size) +
                                  " (run the script under mpirun -np " + std::to_string(count) + ")");
          }
        }, py::arg("count"), "pycaffe's multi-GPU setup: accepted when it equals solver_count()");
  m.def("set_solver_rank", [](int rank) {
          if (rank != world().rank) {
            throw py::value_error("set_solver_rank(" + std::to_string(rank) + "): this process is rank " +
                                  std::to_string(world().rank) + " of the launcher's job");
          }
        }, py::arg("rank"), "pycaffe's multi-GPU setup: accepted when it equals solver_rank()");
  m.def("set_data_parallel_options",
        []([[maybe_unused]] long bucket_mb, [[maybe_unused]] const std::string& compress,
           [[maybe_unused]] const std::optional<std::string>& allreduce) {
          if (bucket_mb < 1 || bucket_mb > (1L << 20)) {
            throw py::value_error("bucket_mb=" + std::to_string(bucket_mb) + ": must be in [1, 1048576]");
          }
#if TAIHU_CAFFE_PARALLEL
          caffe::DataParallelOptions o;
          o.bucket_bytes = static_cast<std::size_t>(bucket_mb) << 20;
          o.compression = caffe::parse_compression(compress, "compress");
          if (allreduce) o.comm.algorithm = comm::parse_algorithm(*allreduce, "allreduce");
          world().options = o;
#endif
        },
        py::arg("bucket_mb") = 25, py::arg("compress") = "none", py::arg("allreduce") = py::none(),
        "taihu-caffe train's --bucket_mb, --compress and --allreduce for solvers made from now on");
  m.def("_abort_job", [](int rc) {
          if (world().session) world().session->finish(rc);  // MPI_Abort when rc != 0 and several ranks
        }, py::arg("rc"));
}

}  // namespace taihu::pycaffe
