// anchors.env lookup and the child-process runner for Python anchors.
#include "anchor_registry.hpp"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include <omp.h>

namespace taihu::bench {
namespace {

std::string env_file() {
  if (const char* d = std::getenv("TAIHU_ANCHORS_DIR"); d != nullptr && *d != 0)
    return std::string(d) + "/anchors.env";
  std::array<char, 4096> exe{};
  const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0) return "";
  std::string path(exe.data(), static_cast<std::size_t>(n));
  // <build>/bin/<exe> -> <build>/anchors/anchors.env
  for (int up = 0; up < 2; ++up) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return "";
    path.resize(slash);
  }
  return path + "/anchors/anchors.env";
}

const std::map<std::string, std::string>& env_values() {
  static const std::map<std::string, std::string> values = [] {
    std::map<std::string, std::string> v;
    std::ifstream in(env_file());
    std::string line;
    while (std::getline(in, line)) {
      const auto eq = line.find('=');
      if (eq == std::string::npos || line[0] == '#') continue;
      v[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return v;
  }();
  return values;
}

}  // namespace

std::string anchor_setting(const std::string& key) {
  if (const char* e = std::getenv(key.c_str()); e != nullptr) return e;
  const auto& v = env_values();
  const auto it = v.find(key);
  return it == v.end() ? std::string() : it->second;
}

bool missing_anchor(const std::string& what, const std::string& fallback) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(what).second)
    std::fprintf(stderr, "anchor %s not installed: run scripts/anchors%s%s%s\n", what.c_str(),
                 fallback.empty() ? "" : " (falling back to ", fallback.c_str(),
                 fallback.empty() ? "" : ")");
  return false;
}

std::string anchor_python() {
  const std::string py = anchor_setting("TAIHU_ANCHORS_PYTHON");
  return !py.empty() && access(py.c_str(), X_OK) == 0 ? py : std::string();
}

std::string bench_source_dir() { return TAIHU_BENCH_SOURCE_DIR; }

cpu_set_t openmp_places_cpus(int threads) {
  // The CPUs of the OpenMP places (what this process's threads run on), else every
  // online CPU; the first `threads` of them.
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int place = 0; place < omp_get_num_places(); ++place) {
    std::vector<int> ids(static_cast<std::size_t>(omp_get_place_num_procs(place)));
    omp_get_place_proc_ids(place, ids.data());
    for (int id : ids) CPU_SET(id, &all);
  }
  if (CPU_COUNT(&all) == 0)
    for (long c = 0, online = sysconf(_SC_NPROCESSORS_ONLN); c < online && c < CPU_SETSIZE; ++c)
      CPU_SET(static_cast<int>(c), &all);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int c = 0, taken = 0; c < CPU_SETSIZE && (threads <= 0 || taken < threads); ++c)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &mask);
      ++taken;
    }
  return mask;
}

void enter_anchor_child(int threads) {
  const cpu_set_t mask = openmp_places_cpus(threads);
  sched_setaffinity(0, sizeof mask, &mask);  // inherited by every thread the child starts
  const std::string lib = anchor_setting("TAIHU_ANCHORS_LIB");
  if (!lib.empty()) {
    const char* old = std::getenv("LD_LIBRARY_PATH");
    setenv("LD_LIBRARY_PATH", (old != nullptr && *old != 0 ? lib + ":" + old : lib).c_str(), 1);
  }
  const std::string icd = anchor_setting("TAIHU_ANCHOR_OPENCL_ICD");
  if (!icd.empty()) setenv("OCL_ICD_FILENAMES", icd.c_str(), 1);
}

ChildResult run_anchor_python(const std::string& script, const std::vector<std::string>& args, int threads) {
  ChildResult result;
  const std::string py = anchor_python();
  if (py.empty()) return result;
  int fds[2];
  if (pipe(fds) != 0) return result;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    enter_anchor_child(threads);
    std::vector<std::string> argv_s{py, script};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(py.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::array<char, 4096> buf{};
  ssize_t n;
  while ((n = read(fds[0], buf.data(), buf.size())) > 0) result.out.append(buf.data(), static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace taihu::bench
