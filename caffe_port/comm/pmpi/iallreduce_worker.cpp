// iallreduce_worker.cpp: one communicator's MPI_Iallreduce worker thread (see
// iallreduce_worker.hpp for the contract).
#include "iallreduce_worker.hpp"

#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include "pmpi_shared.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/comm/communicator.hpp"

namespace taihu_pmpi {

namespace {

// Generalized-request callbacks. extra_state is a heap int holding the error code the
// worker stored before MPI_Grequest_complete; MPI frees the request (free_fn) after query.
int query_fn(void* extra_state, MPI_Status* status) {
  const int error = *static_cast<int*>(extra_state);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = error;
  return error;
}

int free_fn(void* extra_state) {
  delete static_cast<int*>(extra_state);
  return MPI_SUCCESS;
}

// A running collective cannot be cancelled; MPI_Cancel then has no effect.
int cancel_fn(void*, int) { return MPI_SUCCESS; }

void print_error(const std::string& message) {
  std::fprintf(stderr, "taihu-pmpi (rank %d): %s\n", world_rank_or_minus_one(), message.c_str());
  std::fflush(stderr);
}

}  // namespace

IallreduceWorker::IallreduceWorker(MPI_Comm user_comm) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  PMPI_Comm_get_name(user_comm, name, &len);
  name_.assign(name, static_cast<std::size_t>(len > 0 ? len : 0));
  if (PMPI_Comm_idup(user_comm, &dup_, &idup_request_) != MPI_SUCCESS)
    throw taihu::Error("MPI_Comm_idup failed");
  thread_ = std::thread([this] { run(); });
}

IallreduceWorker::~IallreduceWorker() {
  request_stop();
  join();
}

int IallreduceWorker::post(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Request* request) {
  auto* error = new int(MPI_SUCCESS);
  const int rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, error, request);
  if (rc != MPI_SUCCESS) {
    delete error;
    return rc;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(Job{sendbuf, recvbuf, count, type, *request, error});
  }
  wake_.notify_one();
  return MPI_SUCCESS;
}

void IallreduceWorker::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
}

void IallreduceWorker::join() {
  if (thread_.joinable()) thread_.join();
}

void IallreduceWorker::execute(Job& job) {
  if (!taihu_) {
    print_error("MPI_Iallreduce: " + setup_error_);
    *job.error = MPI_ERR_OTHER;
    return;
  }
  try {
    const std::size_t elem = job.type == MPI_FLOAT ? sizeof(float) : sizeof(double);
    const std::size_t n = static_cast<std::size_t>(job.count);
    if (taihu::arch::verbose_enabled())
      log_path("MPI_Iallreduce", dup_, job.type, MPI_SUM, job.count,
               "taihu " + std::string(taihu::comm::to_string(taihu_->choose(n * elem).algorithm)) +
                   " (worker thread)");
    if (job.sendbuf != MPI_IN_PLACE) std::memcpy(job.recvbuf, job.sendbuf, n * elem);
    if (job.type == MPI_FLOAT) taihu_->allreduce(static_cast<float*>(job.recvbuf), n, taihu::comm::Op::sum);
    else taihu_->allreduce(static_cast<double*>(job.recvbuf), n, taihu::comm::Op::sum);
  } catch (const std::exception& ex) {
    print_error(std::string("MPI_Iallreduce: taihu allreduce failed: ") + ex.what());
    *job.error = MPI_ERR_OTHER;
  }
}

void IallreduceWorker::run() {
  inside_taihu = true;  // every MPI call on this thread is taihu's own
  if (PMPI_Wait(&idup_request_, MPI_STATUS_IGNORE) != MPI_SUCCESS || dup_ == MPI_COMM_NULL) {
    setup_error_ = "MPI_Comm_idup failed";
    dup_ = MPI_COMM_NULL;
  } else {
    if (!name_.empty()) PMPI_Comm_set_name(dup_, name_.c_str());
    try {
      taihu_ = std::make_unique<taihu::comm::Communicator>(dup_);
    } catch (const std::exception& ex) {
      setup_error_ = std::string("making the taihu communicator failed: ") + ex.what();
    }
  }
  for (;;) {
    Job job{};
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) break;  // stopping, and everything posted is done
      job = jobs_.front();
      jobs_.pop_front();
    }
    execute(job);
    PMPI_Grequest_complete(job.request);  // the application may free the request from here on
  }
  // Collective over the duplicate: every rank's worker gets here after the same jobs, as
  // every rank frees the user communicator or finalizes.
  try {
    taihu_.reset();
  } catch (const std::exception& ex) {
    print_error(std::string("freeing the Iallreduce worker's taihu state failed: ") + ex.what());
  }
  if (dup_ != MPI_COMM_NULL) PMPI_Comm_free(&dup_);
}

}  // namespace taihu_pmpi
