// The registry of strict TAIHU_* checks and the lenient read's warning (environment.hpp).
#include "taihu/arch/environment.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
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
  r.checks.push_back(std::move(check));
  return true;
}

void check_environment() {
  std::vector<EnvironmentCheck> checks;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    checks = r.checks;
  }
  for (const EnvironmentCheck& check : checks) {
    const std::string problem = check();
    if (!problem.empty()) throw Error(problem);
  }
}

void warn_environment(const std::string& problem, const std::string& fallback) {
  // Not behind TAIHU_VERBOSE: the user asked for something taihu is not doing.
  const std::string& p = problem.rfind("taihu: ", 0) == 0 ? problem.substr(7) : problem;
  std::fprintf(stderr, "taihu: warning: %s; using %s\n", p.c_str(), fallback.c_str());
}

EnvironmentChoice::EnvironmentChoice(const char* variable, std::vector<std::string> words,
                                     std::string fallback)
    : variable_(variable), words_(std::move(words)), fallback_(std::move(fallback)) {
  register_environment_check([this] { return problem(); });
}

int EnvironmentChoice::parse() const {
  const char* env = std::getenv(variable_);
  if (env == nullptr || *env == '\0') return -1;
  for (std::size_t i = 0; i < words_.size(); ++i)
    if (words_[i] == env) return static_cast<int>(i);
  return -2;
}

std::string EnvironmentChoice::problem() const {
  if (parse() != -2) return {};
  std::string p = std::string(variable_) + "='" + std::getenv(variable_) + "': use";
  for (std::size_t i = 0; i < words_.size(); ++i)
    p += (i == 0 ? " " : i + 1 == words_.size() ? " or " : ", ") + words_[i];
  return p;
}

int EnvironmentChoice::index() const {
  std::call_once(read_once_, [this] {
    index_ = parse();
    if (index_ == -2) {
      warn_environment(problem(), fallback_);
      index_ = -1;
    }
  });
  return index_;
}

}  // namespace taihu::arch
