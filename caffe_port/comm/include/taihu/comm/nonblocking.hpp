// Nonblocking allreduce, for overlapping communication with computation.
//
// Progress model (documented choice): when MPI provides MPI_THREAD_MULTIPLE, a helper
// thread owned by the AsyncAllreducer runs the queued allreduces, in submission order,
// with taihu's algorithms on its own Communicator (own duplicate, own shm windows); the
// caller's thread keeps computing and only touches the buffer again after wait().
// Otherwise (MPI_THREAD_SERIALIZED or lower) each request becomes an MPI_Iallreduce
// (MPI's own nonblocking algorithm) progressed by MPI_Test whenever the caller calls
// progress() or test() from its compute loop, and completed in wait(); requests with an
// explicit algorithm and submit()ted work then run (blocking) inside their wait(), so
// wait in submission order on every rank.
//
// Contract: collective; all ranks submit the same sequence of (count, type, op). The
// buffer must stay alive and untouched until wait() returns. Errors raised on the
// helper thread are rethrown by wait().
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "taihu/comm/communicator.hpp"

namespace taihu::comm {

class AsyncAllreducer;

class Request {
 public:
  Request() = default;
  bool valid() const { return state_ != nullptr; }
  bool test();   // true when complete (never blocks)
  void wait();   // blocks; rethrows the allreduce's error

  struct State;
 private:
  friend class AsyncAllreducer;
  explicit Request(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

class AsyncAllreducer {
 public:
  // `comm` is duplicated; options as for Communicator.
  explicit AsyncAllreducer(MPI_Comm comm = MPI_COMM_WORLD, Options options = {});
  ~AsyncAllreducer();  // waits for queued work
  AsyncAllreducer(const AsyncAllreducer&) = delete;
  AsyncAllreducer& operator=(const AsyncAllreducer&) = delete;

  bool uses_helper_thread() const;
  Request iallreduce(float* data, std::size_t count, Op op = Op::sum,
                     Algorithm algorithm = Algorithm::automatic);
  Request iallreduce(double* data, std::size_t count, Op op = Op::sum,
                     Algorithm algorithm = Algorithm::automatic);
  // Any collective work on the helper's communicator, run in submission order (the
  // bucketer's sparse allgather uses this). Without a helper thread it runs in wait().
  Request submit(std::function<void(Communicator&)> work);
  // MPI_Test-driven progress for the no-helper-thread mode; cheap no-op otherwise.
  void progress();
  void wait_all();

  struct Impl;
 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace taihu::comm
