// A small pool for the parallel loops of JIT-compiled Halide kernels (installed as
// their custom_do_par_for). Contract: run(extent, fn) calls fn(i) once for every i in
// [0, extent) and returns when all calls have finished; the first non-zero result is
// returned. The calling thread takes tasks too, and it never waits for a helper that
// has not started: tasks are handed out by an atomic counter, so if a helper is
// descheduled (another process on its core) the caller simply runs the remaining
// tasks itself and only waits for tasks already taken. An OpenMP `parallel for` instead
// joins at a barrier every thread must reach: on a loaded machine each of a kernel's
// loops then waited for a time slice (Winograd: 40 ms instead of 0.3 ms per call).
// Helpers spin briefly between loops (back-to-back loops stay hot), then sleep; helper
// i is pinned to the (i+1)-th CPU of the process's set (arch::ThreadPin), the caller is
// not pinned.
// One loop at a time per pool (a mutex); a nested call from a task runs serially.
#pragma once
#include <cstdint>
#include <functional>

namespace taihu::autotune::halide {

// The pool with `threads` - 1 helper threads (created on first use, grown as needed).
int pool_run(int threads, int extent, const std::function<int(int)>& fn);

}  // namespace taihu::autotune::halide
