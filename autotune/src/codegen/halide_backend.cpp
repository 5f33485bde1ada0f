// The Halide backend: JIT kernels for measuring, Halide's autoschedulers as anchors,
// AOT static libraries (see backend.hpp). Compiled only when TAIHU_HAVE_HALIDE.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "codegen/halide_lower.hpp"
#include "codegen/halide_ocvec.hpp"
#include "codegen/halide_winograd.hpp"
#include "taihu/arch/atomic_file.hpp"
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
    return guarded("halide jit (winograd)", [&] { return halide::make_winograd_kernel(p, s, threads); });
  if (p.is_ocvec(s.algorithm)) return guarded("halide jit (ocvec)", [&] { return halide::make_ocvec_kernel(p, s, threads); });
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

namespace {

std::vector<std::string> compile_aot(const Problem& p, const Schedule& s, const std::string& dir, const std::string& function) {
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

// The child's last words: LLVM ends with "IO failure on output stream: <strerror>"
// (returned in *io_reason), taihu's own errors with their message.
std::string failure_reason(const std::string& child_stderr, int status, std::string* io_reason) {
  const std::string io = "IO failure on output stream: ";
  if (const auto at = child_stderr.rfind(io); at != std::string::npos) {
    *io_reason = child_stderr.substr(at + io.size());
    *io_reason = io_reason->substr(0, io_reason->find('\n'));
    return *io_reason;
  }
  std::string r = child_stderr;
  while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
  if (!r.empty()) return r.substr(r.rfind('\n') + 1);
  if (WIFSIGNALED(status)) return std::string("the Halide compiler died with ") + strsignal(WTERMSIG(status));
  return "the Halide compiler exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

// LLVM aborts the process when a write of its output fails ("IO failure on output
// stream"), which no handler can catch. So the library is compiled by a child process
// into a temporary folder beside the target, and the parent moves the files into place
// only when the child succeeded: a full disk is an error naming the OS's reason, and
// nothing partial is left under the final names.
std::vector<std::string> emit_halide_aot(const Problem& p, const Schedule& s, const std::string& dir,
                                         const std::string& function) {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::path(dir) / (".taihu-emit.tmp." + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec)) throw Error("emit: cannot create '" + tmp.string() + "': " + ec.message());
  int err_pipe[2];
  if (::pipe(err_pipe) != 0) throw Error(std::string("emit: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) throw Error(std::string("emit: fork: ") + std::strerror(errno));
  if (child == 0) {
    ::close(err_pipe[0]);
    ::dup2(err_pipe[1], STDERR_FILENO);
    try {
      compile_aot(p, s, tmp.string(), function);
      std::fflush(nullptr);
      ::_exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::fflush(stderr);
      ::_exit(1);
    }
  }
  ::close(err_pipe[1]);
  std::string child_stderr;
  char buf[4096];
  for (ssize_t n; (n = ::read(err_pipe[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    child_stderr.append(buf, static_cast<std::size_t>(n));
  }
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove_all(tmp, ec);
    std::string io_reason;
    const std::string why = failure_reason(child_stderr, status, &io_reason);
    if (!io_reason.empty())
      throw Error("emit: cannot write the Halide library '" + (fs::path(dir) / function).string() + ".a': " + io_reason);
    throw Error("emit: " + why);
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(tmp)) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  // Each file into place by arch's rule (temp + fsync + rename): moved over an
  // AtomicTempPath's temporary beside its final name, which commit() makes durable
  // before the rename, so a crash never leaves a library with unwritten pages.
  for (auto& name : files) {
    const fs::path to = fs::path(dir) / name;
    try {
      AtomicTempPath out(to.string());
      fs::rename(tmp / name, out.temp_path(), ec);
      if (ec) throw Error("emit: cannot move '" + name + "' into '" + dir + "': " + ec.message());
      out.commit();
    } catch (...) {
      fs::remove_all(tmp, ec);
      throw;
    }
    name = to.string();
  }
  fs::remove_all(tmp, ec);
  return files;
}

}  // namespace taihu::autotune
