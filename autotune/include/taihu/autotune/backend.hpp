// Code generators that produce runnable kernels for a Problem at a schedule point.
//   Halide (when built with Halide 14): JIT for measuring, AOT static library +
//     header for use from C++, and Halide's own autoschedulers for comparison.
//   C++ (always): standalone C++17 + OpenMP source (cpp_emitter.hpp), compiled with
//     the system compiler into a shared object and loaded (no Halide needed).
// Kernel contract: run(inputs, output) reads the inputs in Problem::inputs() order,
// each dense row-major with the declared shape, and overwrites the whole output.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/space.hpp"

namespace taihu::autotune {

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(const std::vector<const float*>& inputs, float* output) = 0;
};

// True when this build has the Halide backend.
bool halide_available();
std::string halide_version();  // "14.0.0" or "none"

// JIT-compiles the schedule. threads: a `winograd` or `ocvec` kernel runs its parallel
// loops on exactly that many threads of autotune's pool, whatever the process default
// (taihu-tune --threads 1 used to time them on every core); other schedules run on
// Halide's thread pool, sized by the first call in the process (HL_NUM_THREADS).
// Throws taihu::Error without Halide. A `winograd` or `ocvec` algorithm's kernel packs its
// weights on the first run with a given weight pointer and reuses them afterwards
// (like dnn/'s WeightsHint::unchanged): do not change weights in place between runs.
std::unique_ptr<Kernel> make_halide_kernel(const Problem& p, const Schedule& s, int threads);

// Halide's own schedules, the comparison anchors: autoscheduler "default" (no schedule:
// everything inline, reductions at root), "Mullapudi2016", "Li2018" or "Adams2019"
// (the plugins in /usr/lib/x86_64-linux-gnu/halide14, or $TAIHU_HALIDE_PLUGIN_DIR).
std::unique_ptr<Kernel> make_halide_autoscheduled(const Problem& p, int algorithm,
                                                  const std::string& autoscheduler, int threads);

// Ahead-of-time: writes <dir>/<function>.a and <dir>/<function>.h (Halide's
// compile_to_static_library); the function takes the inputs then the output as
// halide_buffer_t*. Returns the paths written. A winograd schedule writes two
// libraries: <function>_weights (W -> U, once per weights) and <function> (X, U -> Y).
std::vector<std::string> emit_halide_aot(const Problem& p, const Schedule& s, const std::string& dir,
                                         const std::string& function);

// The C++ backend: emits (cpp_emitter.hpp), compiles with $CXX (default g++) -O3
// -march=native -fopenmp into a shared object under `workdir`, loads it.
std::unique_ptr<Kernel> make_cpp_kernel(const Problem& p, const Schedule& s, int threads,
                                        const std::string& workdir);

}  // namespace taihu::autotune
