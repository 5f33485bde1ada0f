// MPI for taihu-caffe: initialised only when the process was started by a launcher
// (mpirun / srun set OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK or MPI_LOCALNRANKS), so a
// plain run never needs or pays for MPI. Requests MPI_THREAD_MULTIPLE so the gradient
// allreduces run on taihu::comm's helper thread. Non-root ranks log only warnings and
// errors (prefixed with their rank). A failing rank aborts the job (MPI_Abort) so the
// others never hang in a collective. Without the parallel feature (no MPI at build
// time) a run under a launcher with more than one rank is refused with a clear error.
#pragma once

namespace taihu::caffe::cli {

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return active_; }   // MPI initialised
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Call with the command's exit code: aborts every rank when it is non-zero and the
  // job has several ranks; returns the code otherwise.
  int finish(int rc);

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

// The launcher's rank count from its environment (1 when not under a launcher).
int launcher_world_size();

}  // namespace taihu::caffe::cli
