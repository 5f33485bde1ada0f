// The thread-control functions libtaihu_blas exports: taihu's own and the names
// applications and threadpoolctl call on OpenBLAS, MKL and BLIS, with those libraries'
// signatures. All set taihu's count (arch/threads.hpp: a value < 1 returns to the
// default, as OpenBLAS falls back to its start-up count), and the setters also call
// the next library's function of the same name where one is loaded after taihu
// (dlsym RTLD_NEXT), so with LD_PRELOAD=libtaihu_blas.so in front of OpenBLAS or MKL
// an application's openblas_set_num_threads(1) limits both taihu's GEMM and the
// system BLAS's other routines. Getters report taihu's count.
#include <dlfcn.h>

#include <cstdint>

#include "taihu/arch/threads.hpp"

#include "blas_report.hpp"
#include "taihu_cblas.h"

namespace taihu::blas {
namespace {

constexpr int kMaxThreads = 1 << 16;  // TAIHU_NUM_THREADS's bound

void set_process_threads(long long n) noexcept {
  run_guarded("set_num_threads", [n] {
    arch::set_num_threads(n < 1 ? 0 : static_cast<int>(n > kMaxThreads ? kMaxThreads : n));
  });
}

// The same symbol in the next object of the lookup order, or null (RTLD_NEXT never
// returns this library's own definition).
template <typename Fn>
Fn next_definition(const char* symbol) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, symbol));
}

}  // namespace
}  // namespace taihu::blas

using taihu::blas::next_definition;
using taihu::blas::set_process_threads;

extern "C" {

void taihu_set_num_threads(int n) { set_process_threads(n); }

int taihu_get_num_threads(void) { return taihu::arch::num_threads(); }

void openblas_set_num_threads(int n) {
  set_process_threads(n);
  static const auto next = next_definition<void (*)(int)>("openblas_set_num_threads");
  if (next != nullptr) next(n);
}

int openblas_get_num_threads(void) { return taihu::arch::num_threads(); }

void goto_set_num_threads(int n) {
  set_process_threads(n);
  static const auto next = next_definition<void (*)(int)>("goto_set_num_threads");
  if (next != nullptr) next(n);
}

void mkl_set_num_threads(int n) {
  set_process_threads(n);
  static const auto next = next_definition<void (*)(int)>("mkl_set_num_threads");
  if (next != nullptr) next(n);
}

void MKL_Set_Num_Threads(int n) {
  set_process_threads(n);
  static const auto next = next_definition<void (*)(int)>("MKL_Set_Num_Threads");
  if (next != nullptr) next(n);
}

// MKL's rule: n > 0 sets this thread's count, 0 removes it (the process count applies
// again), n < 0 changes nothing; returns the previous thread-local count, 0 if none.
int mkl_set_num_threads_local(int n) {
  int previous = 0;
  taihu::blas::run_guarded("mkl_set_num_threads_local", [&] {
    if (n < 0) {
      previous = taihu::arch::set_num_threads_local(0);
      taihu::arch::set_num_threads_local(previous);
    } else {
      previous = taihu::arch::set_num_threads_local(n > (1 << 16) ? (1 << 16) : n);
    }
  });
  static const auto next = next_definition<int (*)(int)>("mkl_set_num_threads_local");
  if (next != nullptr) next(n);
  return previous;
}

int mkl_get_max_threads(void) { return taihu::arch::num_threads(); }

void bli_thread_set_num_threads(int64_t n) {
  set_process_threads(n);
  static const auto next = next_definition<void (*)(int64_t)>("bli_thread_set_num_threads");
  if (next != nullptr) next(n);
}

}  // extern "C"
