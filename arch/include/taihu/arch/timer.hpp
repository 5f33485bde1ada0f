// Monotonic wall-clock time for measurements.
#pragma once
#include <chrono>

namespace taihu::arch {

// Seconds since an arbitrary fixed point; monotonic, sub-microsecond resolution.
inline double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

class Stopwatch {
 public:
  Stopwatch() : start_(now_seconds()) {}
  void restart() { start_ = now_seconds(); }
  double seconds() const { return now_seconds() - start_; }

 private:
  double start_;
};

}  // namespace taihu::arch
