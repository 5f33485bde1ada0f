// Where scripts/anchors put today's strongest peers, for every benchmark. One place
// reads build/anchors/anchors.env (KEY=VALUE lines the script writes) so no benchmark
// hard-codes a venv path, and one place prints the fallback notice.
//
// Lookup order for a key such as TAIHU_ANCHOR_MKL:
//   1. the process environment (a user may point at their own MKL);
//   2. $TAIHU_ANCHORS_DIR/anchors.env, else <build>/anchors/anchors.env found from
//      the running binary (<build>/bin/<exe>).
// An empty result means "not installed".
#pragma once
#include <sched.h>

#include <string>
#include <vector>

namespace taihu::bench {

// The value of `key`, or "" when the anchor is not installed.
std::string anchor_setting(const std::string& key);

// Prints once per `what`: "anchor <what> not installed: run scripts/anchors
// (falling back to <fallback>)" on stderr. Returns false so callers can write
// `if (path.empty()) return missing_anchor(...)`.
bool missing_anchor(const std::string& what, const std::string& fallback);

// The anchors' Python (build/anchors/venv/bin/python), or "" when not installed.
std::string anchor_python();

// The first `threads` CPUs (0: all) of the OpenMP places, the CPUs this process's
// threads run on; every online CPU where OpenMP reports no places. Not the calling
// thread's mask: OMP_PROC_BIND=true narrows the initial thread to one CPU.
cpu_set_t openmp_places_cpus(int threads);

// Call in a forked anchor child before exec: gives it the first `threads` CPUs this
// process may run on (0: all of them) and the anchors' environment (the venv's lib/
// first on LD_LIBRARY_PATH, OCL_ICD_FILENAMES for oneDNN's SYCL build). A child would
// otherwise inherit the calling thread's mask, and OMP_PROC_BIND=true pins the initial
// thread to one CPU: a peer asked for 2 threads would run them on one core.
void enter_anchor_child(int threads);

// Runs `python script args...` from the anchors' venv in a child process set up by
// enter_anchor_child(threads), and returns its standard output (stderr passes
// through, so the child's progress shows). exit_status is the child's status, or
// -1 when it could not be started. Used for the Python peers (PyTorch, Devito, TVM,
// Halide 21), which are timed in their own process.
struct ChildResult {
  int exit_status = -1;
  std::string out;
};
ChildResult run_anchor_python(const std::string& script, const std::vector<std::string>& args, int threads);

// The source tree's bench/ folder (where the anchor scripts live), compiled in.
std::string bench_source_dir();

}  // namespace taihu::bench
