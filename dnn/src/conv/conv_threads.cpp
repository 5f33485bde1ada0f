// The serial rule of conv_threads.hpp.
#include "conv_threads.hpp"

#include <atomic>
#include <cmath>
#include <string>

#include "taihu/arch/threads.hpp"
#include "taihu/arch/error.hpp"

namespace taihu::dnn::conv {
namespace {
std::atomic<double> g_serial_below{1.0e6};
}  // namespace

double serial_below_flops() { return g_serial_below.load(std::memory_order_relaxed); }

double set_serial_below_flops(double flops) {
  if (!std::isfinite(flops) || flops < 0)
    throw Error("taihu: conv: serial threshold = " + std::to_string(flops) + " FLOP must be finite and >= 0");
  return g_serial_below.exchange(flops, std::memory_order_relaxed);
}

bool runs_serial(const ConvDesc& d) { return d.forward_flops() < serial_below_flops() && arch::threads_for_call() > 1; }

CallThreads::CallThreads(const ConvDesc& d) : pinned_(runs_serial(d)) {
  if (pinned_) previous_ = arch::set_num_threads_local(1);
}

CallThreads::~CallThreads() {
  if (pinned_) arch::set_num_threads_local(previous_);
}

}  // namespace taihu::dnn::conv

namespace taihu::dnn {

int conv_call_threads(const ConvDesc& d) { return conv::runs_serial(d) ? 1 : arch::threads_for_call(); }

}  // namespace taihu::dnn
