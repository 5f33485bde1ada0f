// Running and AOT-compiling a two-pipeline conv kernel (see halide_prepacked.hpp).
#include "codegen/halide_prepacked.hpp"

#include "codegen/halide_lower.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::autotune::halide {
namespace {
// Holds the calling thread's taihu thread count at n (n > 0) for a scope.
class LocalThreads {
 public:
  explicit LocalThreads(int n) : set_(n > 0), previous_(set_ ? arch::set_num_threads_local(n) : 0) {}
  ~LocalThreads() {
    if (set_) arch::set_num_threads_local(previous_);
  }
  LocalThreads(const LocalThreads&) = delete;
  LocalThreads& operator=(const LocalThreads&) = delete;

 private:
  bool set_;
  int previous_;
};
}  // namespace

void PrepackedConvKernel::run(const std::vector<const float*>& inputs, float* output) {
  const LocalThreads threads(threads_);
  try {
    if (inputs[weight_] != cached_weights_) {
      w_in_.set(Halide::Buffer<float>(const_cast<float*>(inputs[weight_]), w_sizes_));
      weights_.realize(packed_);
      cached_weights_ = inputs[weight_];
    }
    x_in_.set(Halide::Buffer<float>(const_cast<float*>(inputs[image_]), x_sizes_));
    packed_in_.set(packed_);
    Halide::Buffer<float> y(output, y_sizes_);
    main_.realize(y);
  } catch (const Halide::Error& e) {
    throw Error(std::string("halide ") + what_ + " kernel failed: " + e.what());
  }
}

std::vector<std::string> PrepackedConvKernel::compile_aot(const std::string& dir, const std::string& fn) {
  const Halide::Target t = target_for_this_cpu();
  weights_.compile_to_static_library(dir + "/" + fn + "_weights", {w_in_}, fn + "_weights", t);
  main_.compile_to_static_library(dir + "/" + fn, {x_in_, packed_in_}, fn, t.with_feature(Halide::Target::NoRuntime));
  return {dir + "/" + fn + "_weights.a", dir + "/" + fn + "_weights.h", dir + "/" + fn + ".a", dir + "/" + fn + ".h"};
}

}  // namespace taihu::autotune::halide
