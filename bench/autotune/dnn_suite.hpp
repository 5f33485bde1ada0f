// bench_autotune --suite dnn: the swATOP-style layer suite. Every forward convolution
// layer of bench_conv's set (bench/conv/conv_layers.hpp) that autotune's conv2d spec
// expresses (stride 1, one group, dense, the same padding on both axes) is tuned by
// taihu-tune for a fixed budget, then timed in a fresh process against every NCHW entry
// of dnn's implementation list that supports it (dnn's timed selection: the fastest
// entry is "dnn best"), and against TVM MetaSchedule given the same budget where the
// anchor is installed. Prints a table and "tuned >= dnn best on X/Y layers (Z%)",
// writes a CSV and dnn's tuning records (taihu/dnn/tuning_records.hpp) of the measured
// entries, which TAIHU_TUNING_RECORDS makes dnn's automatic choice read.
//   bench_autotune --suite dnn [--budget-per-layer 20s] [--layers lenet_conv2,...]
//                  [--batch 1,32] [--threads N] [--rounds 6] [--anchors tvm|none]
//                  [--log FILE] [--csv FILE] [--dnn-records FILE] [--seed S]
//   bench_autotune --suite-compare PROBLEM --schedule RECORD.jsonl [--threads N] [--rounds R]
//     (the suite's timing child: PROBLEM is dnn's ConvDesc string; prints
//      "time NAME SECONDS" for "tuned" and "dnn:<entry>", "auto NAME" for dnn's
//      automatic choice, "note TEXT")
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace taihu::bench::dnn_suite {

// A peer's result for one layer (TVM MetaSchedule): seconds (NAN: not run, INFINITY:
// failed), its algorithm, trials, tuning seconds and the peer's whole JSON object.
struct PeerTiming {
  bool ran = false;
  double seconds = 0;
  std::string what, json;
  int trials = 0;
  double tune_s = 0;
};

// What the suite borrows from bench_autotune's main program.
struct Hooks {
  // Runs bench_autotune with `args` in a fresh process on `threads` CPUs; returns its
  // standard output and sets *status to its wait status (-1: not started).
  std::function<std::string(const std::vector<std::string>& args, int threads, int* status)> run_self;
  // TVM MetaSchedule on conv2d with `shape` (autotune's --shape text) for `budget_s`;
  // empty when the anchor is not installed.
  std::function<PeerTiming(const std::string& shape, double budget_s, int threads)> run_tvm;
};

// `args`: the command line after "--suite dnn". Returns the exit status.
int run_suite(const std::vector<std::string>& args, const Hooks& hooks);
// `args`: the command line after "--suite-compare PROBLEM" (PROBLEM first).
int run_child(const std::vector<std::string>& args);

}  // namespace taihu::bench::dnn_suite
