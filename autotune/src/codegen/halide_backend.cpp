// The Halide backend: JIT kernels for measuring, Halide's autoschedulers as anchors,
// AOT static libraries (see backend.hpp). Compiled only when TAIHU_HAVE_HALIDE.
#include <cstdlib>
#include <mutex>
#include <set>

#include "codegen/halide_lower.hpp"
#include "codegen/halide_ocvec.hpp"
#include "codegen/halide_winograd.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/autotune/backend.hpp"

namespace taihu::autotune {
namespace {

void set_halide_threads(int threads) {
  // Halide's JIT runtime reads HL_NUM_THREADS when its thread pool starts.
  static std::once_flag once;
  std::call_once(once, [&] { setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 0); });
}

std::vector<int> halide_sizes(const std::vector<std::int64_t>& shape) {
  std::vector<int> s;
  for (auto it = shape.rbegin(); it != shape.rend(); ++it) s.push_back(static_cast<int>(*it));
  return s;
}

class HalideKernel final : public Kernel {
 public:
  HalideKernel(const Problem& p, halide::Lowered l) : lowered_(std::move(l)) {
    for (const auto& n : p.inputs()) in_sizes_.push_back(halide_sizes(p.tensor(n).shape));
    out_sizes_ = halide_sizes(p.tensor(p.output()).shape);
    lowered_.pipeline.compile_jit(halide::target_for_this_cpu());
  }
  void run(const std::vector<const float*>& inputs, float* output) override {
    for (std::size_t i = 0; i < inputs.size(); ++i)
      lowered_.inputs[i].set(Halide::Buffer<float>(const_cast<float*>(inputs[i]), in_sizes_[i]));
    Halide::Buffer<float> out(output, out_sizes_);
    try {
      lowered_.pipeline.realize(out);
    } catch (const Halide::Error& e) {
      throw Error(std::string("halide kernel failed: ") + e.what());
    }
  }

 private:
  halide::Lowered lowered_;
  std::vector<std::vector<int>> in_sizes_;
  std::vector<int> out_sizes_;
};

template <class F>
auto guarded(const char* what, F&& f) {
  try {
    return f();
  } catch (const Halide::CompileError& e) {
    throw Error(std::string(what) + ": Halide rejected the schedule: " + e.what());
  } catch (const Halide::RuntimeError& e) {
    throw Error(std::string(what) + ": Halide runtime error: " + e.what());
  } catch (const Halide::InternalError& e) {
    throw Error(std::string(what) + ": Halide internal error: " + e.what());
  }
}

}  // namespace

bool halide_available() { return true; }
std::string halide_version() {
  return TAIHU_HALIDE_VERSION;
}

std::unique_ptr<Kernel> make_halide_kernel(const Problem& p, const Schedule& s, int threads) {
  set_halide_threads(threads);
  if (p.is_winograd(s.algorithm))
    return guarded("halide jit (winograd)", [&] { return halide::make_winograd_kernel(p, s); });
  if (p.is_ocvec(s.algorithm)) return guarded("halide jit (ocvec)", [&] { return halide::make_ocvec_kernel(p, s); });
  return guarded("halide jit", [&] {
    return std::unique_ptr<Kernel>(new HalideKernel(p, halide::lower(p, s.algorithm, &s, threads)));
  });
}

std::unique_ptr<Kernel> make_halide_autoscheduled(const Problem& p, int algorithm, const std::string& name, int threads) {
  set_halide_threads(threads);
  static const std::map<std::string, std::string> plugin = {{"Mullapudi2016", "libautoschedule_mullapudi2016.so"},
                                                            {"Li2018", "libautoschedule_li2018.so"},
                                                            {"Adams2019", "libautoschedule_adams2019.so"}};
  if (name != "default" && !plugin.count(name))
    throw Error("unknown autoscheduler '" + name + "' (use default, Mullapudi2016, Li2018 or Adams2019)");
  return guarded("halide autoschedule", [&] {
    halide::Lowered l = halide::lower(p, algorithm, nullptr, threads, name == "default");
    if (name != "default") {
      static std::set<std::string> loaded;
      static std::mutex mu;
      std::lock_guard<std::mutex> lock(mu);
      if (!loaded.count(name)) {
        const char* dir = std::getenv("TAIHU_HALIDE_PLUGIN_DIR");
        std::string path = std::string(dir ? dir : "/usr/lib/x86_64-linux-gnu/halide14") + "/" + plugin.at(name);
        Halide::load_plugin(path);
        loaded.insert(name);
      }
      // Zen 3: 32 MiB L3 shared; balance 40 is Halide's documented default ratio.
      Halide::MachineParams mp(threads, 32ull << 20, 40);
      auto results = l.pipeline.auto_schedule(name, halide::target_for_this_cpu(), mp);
      arch::log_verbose("halide %s schedule:\n%s\n", name.c_str(), results.schedule_source.c_str());
    }
    return std::unique_ptr<Kernel>(new HalideKernel(p, std::move(l)));
  });
}

std::vector<std::string> emit_halide_aot(const Problem& p, const Schedule& s, const std::string& dir,
                                         const std::string& function) {
  if (p.is_winograd(s.algorithm))
    return guarded("halide aot (winograd)", [&] { return halide::emit_winograd_aot(p, s, dir, function); });
  if (p.is_ocvec(s.algorithm)) return guarded("halide aot (ocvec)", [&] { return halide::emit_ocvec_aot(p, s, dir, function); });
  return guarded("halide aot", [&] {
    halide::Lowered l = halide::lower(p, s.algorithm, &s, 0);
    std::vector<Halide::Argument> args;
    for (auto& ip : l.inputs) args.push_back(ip);
    const std::string prefix = dir + "/" + function;
    l.pipeline.compile_to_static_library(prefix, args, function, halide::target_for_this_cpu());
    return std::vector<std::string>{prefix + ".a", prefix + ".h"};
  });
}

}  // namespace taihu::autotune
