// AsyncAllreducer: a helper thread running queued collectives in order (with
// MPI_THREAD_MULTIPLE), or MPI_Iallreduce progressed by MPI_Test (without it).
#include "taihu/comm/nonblocking.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "detail.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::comm {

struct Request::State {
  std::function<void(Communicator&)> work;  // helper thread, or deferred to wait()
  std::vector<MPI_Request> pieces;          // MPI_Iallreduce mode
  std::function<void()> finish;             // after the pieces complete (average)
  AsyncAllreducer::Impl* owner = nullptr;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
};

struct AsyncAllreducer::Impl {
  Communicator comm;
  bool threaded = false;
  std::thread worker;
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Request::State>> queue;
  std::vector<std::shared_ptr<Request::State>> outstanding;  // for wait_all
  bool stopping = false;

  Impl(MPI_Comm c, Options o) : comm(c, std::move(o)) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    threaded = provided == MPI_THREAD_MULTIPLE;
    if (comm.rank() == 0)
      arch::log_verbose("comm: nonblocking allreduce via %s\n",
                        threaded ? "a helper thread (MPI_THREAD_MULTIPLE)"
                                 : "MPI_Iallreduce + MPI_Test progress (no MPI_THREAD_MULTIPLE)");
    if (threaded) worker = std::thread([this] { loop(); });
  }
  ~Impl() {
    if (threaded) {
      {
        std::lock_guard lock(mutex);
        stopping = true;
      }
      cv.notify_all();
      worker.join();
    }
  }
  void loop() {
    for (;;) {
      std::shared_ptr<Request::State> s;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        s = queue.front();
        queue.pop_front();
      }
      try {
        s->work(comm);
      } catch (...) {
        s->error = std::current_exception();
      }
      {
        std::lock_guard lock(s->mutex);
        s->done = true;
      }
      s->cv.notify_all();
    }
  }
  Request enqueue(std::shared_ptr<Request::State> s) {
    s->owner = this;
    // Forget finished requests (their owners hold them), so a long training run that
    // only waits on its own requests does not accumulate them here.
    std::erase_if(outstanding, [](const std::shared_ptr<Request::State>& o) {
      std::lock_guard lock(o->mutex);
      return o->done && !o->error;
    });
    if (threaded) {
      {
        std::lock_guard lock(mutex);
        queue.push_back(s);
      }
      cv.notify_one();
    }
    outstanding.push_back(s);
    return Request(s);
  }
  template <class T>
  Request iallreduce(T* data, std::size_t count, Op op, Algorithm algorithm) {
    auto s = std::make_shared<Request::State>();
    if (threaded || algorithm != Algorithm::automatic) {
      s->work = [=](Communicator& c) { c.allreduce(data, count, op, algorithm); };
    } else {
      for (std::size_t done = 0; done < count;) {
        const std::size_t n = std::min(detail::kMaxMessageElems, count - done);
        MPI_Request req;
        detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + done, static_cast<int>(n), detail::mpi_type<T>(),
                                         MPI_SUM, comm.comm(), &req),
                          "MPI_Iallreduce");
        s->pieces.push_back(req);
        done += n;
      }
      const int p = comm.size();
      if (op == Op::average) s->finish = [=] { detail::divide(data, count, p); };
    }
    return enqueue(s);
  }
};

bool Request::test() {
  if (!state_) return true;
  State& s = *state_;
  if (s.owner && s.owner->threaded) {
    std::lock_guard lock(s.mutex);
    return s.done;
  }
  if (s.done) return true;
  if (s.work) return false;  // deferred collective: runs in wait()
  int flag = 0;
  detail::check_mpi(MPI_Testall(static_cast<int>(s.pieces.size()), s.pieces.data(), &flag, MPI_STATUSES_IGNORE),
                    "MPI_Testall");
  if (flag) {
    if (s.finish) s.finish();
    s.done = true;
  }
  return flag != 0;
}

void Request::wait() {
  if (!state_) return;
  State& s = *state_;
  if (s.owner && s.owner->threaded) {
    std::unique_lock lock(s.mutex);
    s.cv.wait(lock, [&] { return s.done; });
  } else if (!s.done) {
    if (s.work) {
      try {
        s.work(s.owner->comm);
      } catch (...) {
        s.error = std::current_exception();
      }
    } else {
      detail::check_mpi(MPI_Waitall(static_cast<int>(s.pieces.size()), s.pieces.data(), MPI_STATUSES_IGNORE),
                        "MPI_Waitall");
      if (s.finish) s.finish();
    }
    s.done = true;
  }
  if (s.error) {
    auto e = s.error;
    s.error = nullptr;
    std::rethrow_exception(e);
  }
}

AsyncAllreducer::AsyncAllreducer(MPI_Comm comm, Options options)
    : impl_(std::make_unique<Impl>(comm, std::move(options))) {}

AsyncAllreducer::~AsyncAllreducer() {
  try {
    wait_all();
  } catch (...) {
    // Destructors must not throw; the error was the caller's to collect in wait().
  }
}

bool AsyncAllreducer::uses_helper_thread() const { return impl_->threaded; }

Request AsyncAllreducer::iallreduce(float* data, std::size_t count, Op op, Algorithm algorithm) {
  return impl_->iallreduce(data, count, op, algorithm);
}
Request AsyncAllreducer::iallreduce(double* data, std::size_t count, Op op, Algorithm algorithm) {
  return impl_->iallreduce(data, count, op, algorithm);
}

Request AsyncAllreducer::submit(std::function<void(Communicator&)> work) {
  auto s = std::make_shared<Request::State>();
  s->work = std::move(work);
  return impl_->enqueue(s);
}

void AsyncAllreducer::progress() {
  if (impl_->threaded) return;
  for (auto& s : impl_->outstanding) {
    Request r(s);
    if (!s->work) r.test();
  }
}

void AsyncAllreducer::wait_all() {
  auto pending = std::move(impl_->outstanding);
  impl_->outstanding.clear();
  std::exception_ptr first;
  for (auto& s : pending) {
    try {
      Request(s).wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace taihu::comm
