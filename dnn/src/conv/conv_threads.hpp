// How many threads one convolution call runs on: the one place that decides that a
// problem too small to share runs on a single thread, for the entry choice and for
// every direction's call (Convolution constructs, executes and times under it).
//
// Below serial_below_flops() (1 MFLOP, about 10-25 us on one Zen 4 core) the barriers
// and the lines the two cores trade cost more than the half of the work a second thread
// takes: LeNet conv1 at batch 1 (0.58 MFLOP) gains nothing from a second thread
// (forward a little faster, backward-data level, backward-weights slower). oneDNN
// likewise sizes its team by the work. (The threshold was 4 MFLOP while conv_cputime's cache
// flush ran on the calling thread alone and the OpenMP worker slept through it, so each
// 2-thread call paid a wake-up: with the workers awake between calls, as between a
// network's layers, LeNet conv2 at batch 1 (3.2 MFLOP) runs 20-45% faster on two threads
// in every direction, interleaved A/B on Zen 4.) Tests lower the threshold to keep the
// threaded paths of small shapes tested (conv_test_support.cpp).
#pragma once
#include "taihu/dnn/conv.hpp"

namespace taihu::dnn::conv {

// The threshold in FLOPs (forward_flops(): the three directions do the same work).
double serial_below_flops();
// Sets it (0: never serial) and returns the previous value. Process-wide; for tests
// and measurements. Throws taihu::Error for a negative or non-finite value.
double set_serial_below_flops(double flops);

// Whether a call on d, made now from this thread, runs on one thread by this rule
// (more than one thread available and d below the threshold).
bool runs_serial(const ConvDesc& d);

// For its lifetime, taihu calls from this thread run on one thread when runs_serial(d)
// (the kernels and the GEMMs they call read the count themselves); otherwise nothing.
class CallThreads {
 public:
  explicit CallThreads(const ConvDesc& d);
  ~CallThreads();
  CallThreads(const CallThreads&) = delete;
  CallThreads& operator=(const CallThreads&) = delete;

 private:
  bool pinned_ = false;
  int previous_ = 0;
};

}  // namespace taihu::dnn::conv
