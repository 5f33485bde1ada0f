// iallreduce_worker.hpp: the PMPI preload's MPI_Iallreduce takeover for one communicator.
// Contract:
// - Made by the application thread at the first taken-over MPI_Iallreduce on `user_comm`
//   (the same call on every rank: the path depends only on arguments MPI requires to
//   agree). It posts MPI_Comm_idup(user_comm) there, so the caller never blocks, and starts
//   one thread that waits for that duplicate, builds a taihu::comm::Communicator over it
//   (collective over the duplicate only, which no one else uses) and then runs the
//   posted allreduces one at a time in posting order.
// - One worker per communicator: operations on different communicators never wait for each
//   other, whatever order the ranks post them in.
// - post() returns a generalized request (MPI_Grequest_start) that the worker completes
//   with MPI_Grequest_complete, so MPI_Wait / MPI_Test / MPI_Waitall work unchanged; a
//   taihu failure is printed with the rank and returned through the request's status as
//   MPI_ERR_OTHER.
// - request_stop() (from MPI_Comm_free's attribute callback or MPI_Finalize) lets the worker
//   finish what was posted, free its taihu state and its duplicate, and end; join() waits
//   for that. Needs MPI_THREAD_MULTIPLE (the caller checks it).
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace taihu::comm {
class Communicator;
}

namespace taihu_pmpi {

class IallreduceWorker {
 public:
  // Posts MPI_Comm_idup(user_comm) and starts the thread; throws taihu::Error if MPI refuses.
  explicit IallreduceWorker(MPI_Comm user_comm);
  ~IallreduceWorker();
  IallreduceWorker(const IallreduceWorker&) = delete;
  IallreduceWorker& operator=(const IallreduceWorker&) = delete;

  // Queues a float or double MPI_SUM allreduce; returns MPI_Grequest_start's code.
  int post(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Request* request);

  void request_stop();
  void join();

 private:
  struct Job {
    const void* sendbuf;
    void* recvbuf;
    int count;
    MPI_Datatype type;
    MPI_Request request;
    int* error;  // the generalized request's extra state: the code its query returns
  };

  void run();
  void execute(Job& job);

  MPI_Comm dup_ = MPI_COMM_NULL;
  MPI_Request idup_request_ = MPI_REQUEST_NULL;
  std::string name_;  // the user communicator's name, given to the duplicate for TAIHU_VERBOSE
  std::unique_ptr<taihu::comm::Communicator> taihu_;
  std::string setup_error_;  // set when the taihu state could not be made

  std::mutex mutex_;  // guards jobs_ and stopping_
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace taihu_pmpi
