// How taihu treats its TAIHU_* environment variables: a library never lets one turn
// a computation into a no-op or an exception, a command-line tool rejects a bad one.
//   Library read (lenient): each reader parses its variable once; a bad value is
//     reported once on stderr ("taihu: warning: TAIHU_ISA='avx9' is not a known ISA
//     level ...; using avx512 (the default)") and the default is used.
//   Tool start-up (strict): check_environment() runs every registered check and throws
//     taihu::Error with the first problem; the tools print it and exit with status 2.
// Each module registers the strict check of the variables it reads (arch: TAIHU_ISA,
// TAIHU_NUM_THREADS; gemm: TAIHU_GEMM_BLOCKS, TAIHU_GEMM_THREADING, ...) at load time.
// A variable that names one of a few words is an EnvironmentChoice, which does both.
#pragma once
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace taihu::arch {

// A strict check: "" when its variable is unset or valid, else the problem, worded as
// the error a tool prints (e.g. "taihu: TAIHU_NUM_THREADS='x' must be a positive integer").
using EnvironmentCheck = std::function<std::string()>;

// Adds a check that check_environment() runs; returns true (for static initializers).
bool register_environment_check(EnvironmentCheck check);

// Throws taihu::Error with the first problem any registered check finds.
void check_environment();

// The lenient library read's report: prints "taihu: warning: <problem>; using
// <fallback>" on stderr. Callers print it once (they parse their variable once).
void warn_environment(const std::string& problem, const std::string& fallback);

// A TAIHU_* variable whose value is one of a few words (TAIHU_GEMM_ORDER=a|b).
// Constructing it registers its strict check, so keep it in a function-local static
// that a namespace-scope initializer touches (tools check at start-up; a library read
// before that initializer still finds it constructed).
class EnvironmentChoice {
 public:
  // `fallback`: what decides while the variable is unset or bad, for the warning
  // ("the loop-order model's choice").
  EnvironmentChoice(const char* variable, std::vector<std::string> words, std::string fallback);
  EnvironmentChoice(const EnvironmentChoice&) = delete;
  EnvironmentChoice& operator=(const EnvironmentChoice&) = delete;

  // The lenient read: the position of the value among the words, -1 when the variable
  // is unset or empty. Read once; a bad value is warned about once and reads as -1.
  int index() const;
  // The strict check: "" when unset, empty or one of the words, else
  // "VAR='value': use w1, w2 or w3".
  std::string problem() const;

 private:
  int parse() const;  // -2: a value that is none of the words

  const char* variable_;
  std::vector<std::string> words_;
  std::string fallback_;
  mutable std::once_flag read_once_;
  mutable int index_ = -1;
};

}  // namespace taihu::arch
