// The registry of strict TAIHU_* checks and the lenient read's warning (environment.hpp).
#include "taihu/arch/environment.hpp"

#include <cstdio>
#include <mutex>
#include <vector>

#include "taihu/arch/error.hpp"

namespace taihu::arch {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<EnvironmentCheck> checks;
};

// Constructed on first use: modules register from their static initializers, whose
// order across libraries is not known.
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

bool register_environment_check(EnvironmentCheck check) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.checks.push_back(check);
  return true;
}

void check_environment() {
  std::vector<EnvironmentCheck> checks;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    checks = r.checks;
  }
  for (EnvironmentCheck check : checks) {
    const std::string problem = check();
    if (!problem.empty()) throw Error(problem);
  }
}

void warn_environment(const std::string& problem, const std::string& fallback) {
  // Not behind TAIHU_VERBOSE: the user asked for something taihu is not doing.
  const std::string& p = problem.rfind("taihu: ", 0) == 0 ? problem.substr(7) : problem;
  std::fprintf(stderr, "taihu: warning: %s; using %s\n", p.c_str(), fallback.c_str());
}

}  // namespace taihu::arch
