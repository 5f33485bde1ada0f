// oneDNN 3.x convolution anchor, timed in onednn3_conv_server (a child process: 3.x
// and Debian's 2.x export the same dnnl_* symbols, so one process cannot link both).
// Same contract as OnednnConv (one primitive per problem, direction and algorithm,
// format_tag::any, inputs reordered untimed), except that run() returns the seconds the
// server measured around the call, so the pipe round trip is not counted.
//
// Where it comes from: the venv scripts/anchors installs (anchors.env keys
// TAIHU_ANCHOR_DNNL, TAIHU_ANCHORS_LIB, TAIHU_ANCHOR_OPENCL_ICD) and the server binary
// next to the running benchmark (<build>/bin/onednn3_conv_server, built when CMake
// found the venv). When either is missing available() is false and one line says so
// on stderr ("anchor oneDNN 3 not installed: run scripts/anchors (falling back to
// oneDNN 2.x)"); the benchmarks then run as before.
//
// One server per (thread count, clock), started on first use and kept for the process:
//   - its CPU affinity is the first `threads` CPUs of this process (PyPI's oneDNN
//     threads with TBB, which sizes itself from that mask; OMP_NUM_THREADS does not
//     apply), with the venv's lib/ on LD_LIBRARY_PATH and OCL_ICD_FILENAMES naming the
//     venv's libintelocl.so (the SYCL CPU device its CPU engine needs);
//   - cpu_clock: the server times with its process CPU clock (the 1-thread analogue of
//     the thread CPU clock: the primitive runs on a SYCL worker thread), else wall.
// Its times include the SYCL runtime's dispatch of each call (a host task), which the
// PyPI build always pays. On more than one thread, interleaved with other work, TBB's
// workers have gone to sleep by the next call: read 2-thread 3.x figures as a floor
// (back-to-back calls in the server alone run about twice as fast, from about the
// sixth call, ~10 ms in); 1-thread ones are the comparison to quote. Flushing through
// the library's own threads (an in-place 96 MiB eltwise on the server's engine, 1 to 8
// passes, Zen 4, 2026-11-29) did not bring the second worker in: res4 3x3 forward
// stayed at 1.9-2.4 ms a call, the 1-thread time.
#pragma once
#include <memory>
#include <string>

#include "taihu/dnn/conv.hpp"

namespace taihu::bench {

class Onednn3Server;

class Onednn3Conv {
 public:
  // algo: "auto" | "direct".
  Onednn3Conv(const dnn::ConvDesc& d, dnn::ConvDirection dir, const std::string& algo, int threads,
              bool cpu_clock);
  ~Onednn3Conv();
  Onednn3Conv(const Onednn3Conv&) = delete;
  Onednn3Conv& operator=(const Onednn3Conv&) = delete;

  bool available() const { return slot_ >= 0; }
  std::string implementation() const { return impl_; }  // e.g. "brg_conv_fwd:avx512_core"
  std::string layout() const { return layout_; }        // as OnednnConv::layout()
  // One execution, waited for; seconds measured in the server (flush: a 32 MiB cache
  // flush in the server first, untimed). 0 when unavailable or the server died.
  double run(bool flush = false);

 private:
  Onednn3Server* server_ = nullptr;
  int slot_ = -1;
  std::string impl_, layout_;
};

// "oneDNN 3.13.2 sycl" from the server for `threads`, or "" when it is not available
// (the reason has been printed once).
std::string onednn3_version(int threads);

}  // namespace taihu::bench
