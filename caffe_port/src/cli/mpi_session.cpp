// MPI start-up and shut-down for taihu-caffe. See cli/mpi_session.hpp.
#include "cli/mpi_session.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/log.hpp"
#if TAIHU_CAFFE_PARALLEL
#include <mpi.h>
#endif

namespace taihu::caffe::cli {

namespace {
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(v)) return true;
  }
  return false;
}
}  // namespace

int launcher_world_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* s = std::getenv(v)) return std::max(1, std::atoi(s));
  }
  return std::getenv("PMIX_RANK") ? 2 : 1;  // PMIx without a size: assume parallel
}

MpiSession::MpiSession([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
#if TAIHU_CAFFE_PARALLEL
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (rank_ != 0) {
    const std::string prefix = "[rank " + std::to_string(rank_) + "] ";
    set_log_sink([prefix](const std::string& line) {
      if (!line.empty() && line[0] == 'I') return;  // info lines: rank 0 only
      std::fprintf(stderr, "%s%s\n", prefix.c_str(), line.c_str());
    });
  }
#else
  if (launched_by_mpi() && launcher_world_size() > 1) {
    throw Error("this taihu-caffe was built without MPI (TAIHU_HAVE_MPI=0 or TAIHU_BUILD_COMM=OFF), so it cannot "
                "train data-parallel; run it without mpirun, or rebuild with libopenmpi-dev installed");
  }
#endif
}

MpiSession::~MpiSession() {
#if TAIHU_CAFFE_PARALLEL
  if (active_) {
    set_log_sink({});
    MPI_Finalize();
  }
#endif
}

int MpiSession::finish(int rc) {
#if TAIHU_CAFFE_PARALLEL
  if (active_ && rc != 0 && size_ > 1) {
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, rc);  // one rank's failure stops them all
  }
#endif
  return rc;
}

}  // namespace taihu::caffe::cli
