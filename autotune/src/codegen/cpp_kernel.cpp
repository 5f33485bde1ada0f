// The C++ backend's kernel: emit, compile into a shared object, dlopen (see backend.hpp).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/autotune/backend.hpp"
#include "taihu/autotune/cpp_emitter.hpp"
#include "taihu/autotune/records.hpp"

namespace taihu::autotune {
namespace {

class CppKernel final : public Kernel {
 public:
  CppKernel(void* handle, void (*fn)(const float* const*, float*)) : handle_(handle), fn_(fn) {}
  ~CppKernel() override { dlclose(handle_); }
  void run(const std::vector<const float*>& inputs, float* output) override { fn_(inputs.data(), output); }

 private:
  void* handle_;
  void (*fn_)(const float* const*, float*);
};

}  // namespace

std::unique_ptr<Kernel> make_cpp_kernel(const Problem& p, const Schedule& s, int threads, const std::string& workdir) {
  const std::string fn = "taihu_tuned";
  const std::string src = emit_cpp(p, s, fn, threads);
  std::filesystem::create_directories(workdir);
  const std::string base = workdir + "/k" + spec_hash(src + cpp_march_flags()) + "_" + std::to_string(::getpid());
  {
    std::ofstream out(base + ".cpp");
    if (!out) throw Error("cannot write '" + base + ".cpp'");
    out << src;
  }
  const char* cxx = std::getenv("CXX");
  const std::string cmd = std::string(cxx && *cxx ? cxx : "g++") + " -std=c++17 -O3 " + cpp_march_flags() +
                          " -fopenmp -fPIC -shared -o " + base + ".so " + base + ".cpp 2> " + base + ".log";
  arch::log_verbose("taihu-tune: %s\n", cmd.c_str());
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(base + ".log");
    std::string first;
    std::getline(log, first);
    throw Error("compiling generated C++ failed (" + base + ".cpp): " + first);
  }
  void* h = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error(std::string("dlopen of generated kernel failed: ") + dlerror());
  auto* f = reinterpret_cast<void (*)(const float* const*, float*)>(dlsym(h, (fn + "_packed").c_str()));
  if (!f) {
    dlclose(h);
    throw Error("generated kernel lacks " + fn + "_packed");
  }
  std::remove((base + ".so").c_str());  // stays mapped; keeps workdir small
  std::remove((base + ".log").c_str());
  std::remove((base + ".cpp").c_str());
  return std::make_unique<CppKernel>(h, f);
}

}  // namespace taihu::autotune
