// The part the hand-structured Halide conv kernels (Winograd, ocvec) share (private to
// the Halide backend): two pipelines, `weights_` (W -> packed_, a repacked or
// transformed copy of the weights) and `main_` (X, packed_ -> Y), and how they are run
// and compiled ahead of time.
//   run(): packs the weights once per weight pointer (as dnn prepacks / caches its
//          transformed weights: callers must not change weights in place), then runs
//          main_ on the kernel's own thread count (autotune's task pool reads
//          taihu::arch::threads_for_call(); a thread-local override holds it to
//          `threads` during the call, so a kernel built for 1 thread runs on 1 thread
//          whatever the process default is).
//   compile_aot(dir, fn): <dir>/<fn>_weights.{a,h}: fn_weights(W, packed) and
//          <dir>/<fn>.{a,h}: fn(X, packed, Y), the second without a Halide runtime of
//          its own (the first carries it), so both link into one program.
// A derived kernel's constructor fills every protected member, then install_jit_hooks()
// and compile_jit() on both pipelines unless it is built for compile_aot only.
#pragma once
#include <Halide.h>

#include <cstddef>
#include <string>
#include <vector>

#include "taihu/autotune/backend.hpp"

namespace taihu::autotune::halide {

class PrepackedConvKernel : public Kernel {
 public:
  void run(const std::vector<const float*>& inputs, float* output) override;
  std::vector<std::string> compile_aot(const std::string& dir, const std::string& fn);

 protected:
  // what: the kernel's name in errors ("winograd"); threads: its parallel loops' threads
  // (0: the process's taihu::arch::threads_for_call()).
  PrepackedConvKernel(const char* what, int threads) : what_(what), threads_(threads) {}

  std::size_t image_ = 0, weight_ = 1;  // positions among the problem's inputs
  std::vector<int> x_sizes_, w_sizes_, y_sizes_, packed_sizes_;  // dense extents, innermost first
  Halide::ImageParam w_in_, x_in_, packed_in_;
  Halide::Pipeline weights_, main_;
  Halide::Buffer<float> packed_;  // allocated by a JIT kernel's constructor

 private:
  const char* what_;
  int threads_;
  const float* cached_weights_ = nullptr;
};

}  // namespace taihu::autotune::halide
