// Thread-count ownership (threads.hpp), fork safety of the OpenMP pool, and pinning.
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

#include "taihu/arch/environment.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::arch {
namespace {

std::atomic<int> g_override{0};  // set_num_threads(); 0: not set
thread_local int t_local = 0;    // set_num_threads_local(); 0: not set

// Parses TAIHU_NUM_THREADS: 0 when unset or empty, -1 when invalid, else the count.
long parse_env_threads(const char* env) {
  if (env == nullptr || *env == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(env, &end, 10);
  if (errno != 0 || *end != '\0' || n < 1 || n > 1 << 16) return -1;
  return n;
}

std::string env_threads_problem() {
  const char* env = std::getenv("TAIHU_NUM_THREADS");
  if (parse_env_threads(env) >= 0) return {};
  return std::string("taihu: TAIHU_NUM_THREADS='") + env + "' must be a positive integer";
}

[[maybe_unused]] const bool g_check_registered = register_environment_check(&env_threads_problem);

// TAIHU_NUM_THREADS, read once: 0 when unset (or invalid: reported once, then ignored).
int env_threads() {
  static const int value = [] {
    const long n = parse_env_threads(std::getenv("TAIHU_NUM_THREADS"));
    if (n < 0) {
      warn_environment(env_threads_problem(),
                       "the default (" + std::to_string(topology().cores) + " physical cores)");
      return 0;
    }
    if (n > 0) log_verbose("threads: %ld (TAIHU_NUM_THREADS)", n);
    return static_cast<int>(n);
  }();
  return value;
}

// The default: the physical cores, capped by the calling thread's OpenMP nthreads-var
// when that was lowered (OMP_NUM_THREADS, omp_set_num_threads, threadpoolctl's
// threadpool_limits) as MKL and OpenBLAS's OpenMP build honour it; its unset value is
// the logical CPUs, which never caps the physical cores.
int default_threads() {
  static const int cores = [] {
    const int c = topology().cores > 0 ? topology().cores : 1;
    log_verbose("threads: %d physical cores (the default; TAIHU_NUM_THREADS unset)", c);
    return c;
  }();
  const int omp = omp_get_max_threads();
  return omp >= 1 && omp < cores ? omp : cores;
}

// fork(): libgomp's thread pool belongs to the thread that opened it and is not
// rebuilt in a child, whose first multi-threaded region then waits forever for
// workers that were not copied. So before every fork the forking thread's pool is
// released (OpenMP 5.0 omp_pause_resource_all; the next region starts a new one, as
// OpenBLAS shuts its workers down in its pthread_atfork handler). Where that cannot
// be done (fork from inside a parallel region, a runtime that refuses), the child
// runs every taihu call on one thread.
std::atomic<int> g_pause_result{0};
std::atomic<bool> g_single_after_fork{false};

void before_fork() {
  g_pause_result.store(omp_in_parallel() ? -1 : omp_pause_resource_all(omp_pause_hard),
                       std::memory_order_relaxed);
}
void in_child() {
  if (g_pause_result.load(std::memory_order_relaxed) != 0)
    g_single_after_fork.store(true, std::memory_order_relaxed);
}
[[maybe_unused]] const bool g_fork_handlers = pthread_atfork(&before_fork, nullptr, &in_child) == 0;

}  // namespace

int num_threads() {
  if (t_local > 0) return t_local;
  const int o = g_override.load(std::memory_order_relaxed);
  if (o > 0) return o;
  const int e = env_threads();
  return e > 0 ? e : default_threads();
}

void set_num_threads(int n) {
  if (n < 0) throw Error("taihu: set_num_threads(" + std::to_string(n) + "): n must be >= 0");
  g_override.store(n, std::memory_order_relaxed);
}

int set_num_threads_local(int n) {
  if (n < 0)
    throw Error("taihu: set_num_threads_local(" + std::to_string(n) + "): n must be >= 0");
  const int previous = t_local;
  t_local = n;
  return previous;
}

int threads_for_call() {
  if (omp_in_parallel() || g_single_after_fork.load(std::memory_order_relaxed)) return 1;
  return num_threads();
}

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
