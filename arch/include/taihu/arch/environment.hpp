// How taihu treats its TAIHU_* environment variables: a library never lets one turn
// a computation into a no-op or an exception, a command-line tool rejects a bad one.
//   Library read (lenient): each reader parses its variable once; a bad value is
//     reported once on stderr ("taihu: warning: TAIHU_ISA='avx9' is not a known ISA
//     level ...; using avx512 (the default)") and the default is used.
//   Tool start-up (strict): check_environment() runs every registered check and throws
//     taihu::Error with the first problem; the tools print it and exit with status 2.
// Each module registers the strict check of the variables it reads (arch: TAIHU_ISA,
// TAIHU_NUM_THREADS; gemm: TAIHU_GEMM_BLOCKS, TAIHU_GEMM_THREADING) at load time.
#pragma once
#include <string>

namespace taihu::arch {

// A strict check: "" when its variable is unset or valid, else the problem, worded as
// the error a tool prints (e.g. "taihu: TAIHU_NUM_THREADS='x' must be a positive integer").
using EnvironmentCheck = std::string (*)();

// Adds a check that check_environment() runs; returns true (for static initializers).
bool register_environment_check(EnvironmentCheck check);

// Throws taihu::Error with the first problem any registered check finds.
void check_environment();

// The lenient library read's report: prints "taihu: warning: <problem>; using
// <fallback>" on stderr. Callers print it once (they parse their variable once).
void warn_environment(const std::string& problem, const std::string& fallback);

}  // namespace taihu::arch
