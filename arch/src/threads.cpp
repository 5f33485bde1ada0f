// Thread-count ownership and pinning.
#include "taihu/arch/threads.hpp"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::arch {
namespace {

std::atomic<int> g_override{0};

int env_threads() {
  static std::once_flag once;
  static int value = 0;
  static std::string error;
  std::call_once(once, [] {
    const char* env = std::getenv("TAIHU_NUM_THREADS");
    if (env == nullptr || *env == '\0') {
      value = topology().cores;
      log_verbose("threads: %d (physical cores; TAIHU_NUM_THREADS unset)", value);
      return;
    }
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(env, &end, 10);
    if (errno != 0 || *end != '\0' || n < 1 || n > 1 << 16) {
      error = std::string("taihu: TAIHU_NUM_THREADS='") + env + "' must be a positive integer";
      return;
    }
    value = static_cast<int>(n);
    log_verbose("threads: %d (TAIHU_NUM_THREADS)", value);
  });
  if (!error.empty()) throw Error(error);
  return value;
}

}  // namespace

int num_threads() {
  const int o = g_override.load(std::memory_order_relaxed);
  return o > 0 ? o : env_threads();
}

void set_num_threads(int n) {
  if (n < 0) throw Error("taihu: set_num_threads(" + std::to_string(n) + "): n must be >= 0");
  g_override.store(n, std::memory_order_relaxed);
}

int threads_for_call() { return omp_in_parallel() ? 1 : num_threads(); }

namespace {
// The CPUs the process may use, read before taihu pins anything.
const cpu_set_t& process_cpus() {
  static const cpu_set_t allowed = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) CPU_ZERO(&s);
    return s;
  }();
  return allowed;
}
}  // namespace

ThreadPin::ThreadPin(int index) {
  CPU_ZERO(&previous_);
  if (pthread_getaffinity_np(pthread_self(), sizeof previous_, &previous_) != 0) return;
  // Under OMP_PROC_BIND the runtime has already narrowed the initial thread to one
  // place, so the process mask no longer lists every CPU: use the places instead.
  const int places = omp_get_num_places();
  if (places > 0) {
    const int place = index % places;
    const int procs = omp_get_place_num_procs(place);
    if (procs > 0) {
      std::vector<int> ids(static_cast<std::size_t>(procs));
      omp_get_place_proc_ids(place, ids.data());
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(ids[0], &one);
      pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
      return;
    }
  }
  const cpu_set_t& allowed = process_cpus();
  const int count = CPU_COUNT(&allowed);
  if (count == 0) return;
  int want = index % count;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || want-- != 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
    return;
  }
}

ThreadPin::~ThreadPin() {
  if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof previous_, &previous_);
}

}  // namespace taihu::arch
