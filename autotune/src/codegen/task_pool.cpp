// The task pool behind the Winograd kernels' parallel loops (see task_pool.hpp).
// Tickets: one 64-bit atomic holds (loop generation << 32 | next task index); a thread
// takes a task by compare-and-swap, so a thread still looking at an old loop can never
// take (or lose) a task of a newer one, and the caller only waits for tasks taken. A
// new loop first publishes a closed generation, then its fields, then its own ticket.
#include "codegen/task_pool.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "taihu/arch/threads.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace taihu::autotune::halide {
namespace {

thread_local bool t_in_task = false;

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& t : helpers_) t.join();
  }

  int run(int threads, int extent, const std::function<int(int)>& fn) {
    std::lock_guard<std::mutex> one_loop(run_mu_);
    while (static_cast<int>(helpers_.size()) < threads - 1) {
      const int index = static_cast<int>(helpers_.size());
      helpers_.emplace_back([this, index] { helper(index); });
    }
    // Close the previous loop's ticket before touching its fields: a thread that read
    // the old ticket when its tasks were all taken must not then see this loop's larger
    // extent and take a task under the old generation (that ran one task twice and
    // counted it twice in done_). The closed generation offers no task.
    ticket_.store((std::uint64_t{++generation_} << 32) | kClosed);
    fn_.store(&fn);
    extent_.store(extent);
    workers_.store(threads);
    done_.store(0);
    result_.store(0);
    const std::uint64_t gen = ++generation_;
    ticket_.store(gen << 32);  // publishes the loop (seq_cst: pairs with sleepers_)
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
    take_tasks(gen);
    for (int spins = 0; done_.load(std::memory_order_acquire) < extent; ++spins) {
      if (spins < 4096) cpu_relax();
      else std::this_thread::yield();  // a helper was descheduled inside a task
    }
    return result_.load();
  }

 private:
  void take_tasks(std::uint64_t gen) {
    std::uint64_t t = ticket_.load(std::memory_order_acquire);
    for (;;) {
      if ((t >> 32) != gen || static_cast<int>(t & 0xffffffffu) >= extent_.load(std::memory_order_acquire)) return;
      if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      // The loop is still `gen` (its ticket was free): fn_ is this loop's.
      t_in_task = true;
      const int r = (*fn_.load(std::memory_order_acquire))(static_cast<int>(t & 0xffffffffu));
      t_in_task = false;
      if (r != 0) {
        int zero = 0;
        result_.compare_exchange_strong(zero, r);
      }
      done_.fetch_add(1, std::memory_order_release);
      t = ticket_.load(std::memory_order_acquire);
    }
  }

  void helper(int index) {
    // Helper i stays on the (i+1)-th CPU of the process (see task_pool.hpp): unpinned,
    // this VM's scheduler packed the helper onto the caller's CPU for whole 60 ms rounds,
    // and the caller then ran every task itself. The caller is left unpinned.
    taihu::arch::ThreadPin pin(index + 1);
    std::uint64_t seen = 0;
    for (;;) {
      // Spin ~200 us for the next loop (a kernel's loops follow each other), then sleep.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
      for (int spins = 0; (ticket_.load(std::memory_order_acquire) >> 32) == seen && !stop_.load(std::memory_order_relaxed); ++spins) {
        cpu_relax();
        if ((spins & 63) == 63 && std::chrono::steady_clock::now() > until) {
          sleepers_.fetch_add(1);
          {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [&] { return (ticket_.load() >> 32) != seen || stop_.load(); });
          }
          sleepers_.fetch_sub(1);
          break;
        }
      }
      if (stop_.load()) return;
      const std::uint64_t gen = ticket_.load(std::memory_order_acquire) >> 32;
      if (gen == seen) continue;
      if (index < workers_.load(std::memory_order_acquire) - 1) take_tasks(gen);
      seen = gen;
    }
  }

  std::mutex run_mu_;  // one loop at a time
  std::mutex mu_;      // the sleepers' condition variable
  std::condition_variable cv_;
  std::vector<std::thread> helpers_;
  static constexpr std::uint64_t kClosed = 0x7fffffffu;  // a task index no extent reaches
  std::uint32_t generation_ = 0;  // wraps with the ticket's 32 generation bits
  std::atomic<std::uint64_t> ticket_{0};
  std::atomic<const std::function<int(int)>*> fn_{nullptr};
  std::atomic<int> extent_{0}, workers_{1}, done_{0}, result_{0}, sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace

int pool_run(int threads, int extent, const std::function<int(int)>& fn) {
  if (threads <= 1 || extent <= 1 || t_in_task) {
    for (int i = 0; i < extent; ++i)
      if (const int r = fn(i); r != 0) return r;
    return 0;
  }
  static Pool pool;
  return pool.run(threads, extent, fn);
}

}  // namespace taihu::autotune::halide
