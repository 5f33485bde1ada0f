// LinePrefetch: the cache lines of a list of row segments (rows of an NCHW tensor a
// plane apart, say), pulled into L2 a few lines per call of issue(), so that a loop of
// tiles can spread the prefetches of the data its next step reads over its own steps
// (a burst would take every L1 miss buffer at once and stall the FMAs). A hint only:
// nothing is read or written.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "conv_algorithm.hpp"

namespace taihu::dnn::conv {

class LinePrefetch {
 public:
  void clear() {
    rows_.clear();
    lines_ = 0;
    row_ = 0;
    line_ = 0;
  }
  void add(const float* begin, index_t floats) {
    const auto first = reinterpret_cast<std::uintptr_t>(begin) / 64;
    const auto last = (reinterpret_cast<std::uintptr_t>(begin + floats) - 1) / 64;
    rows_.push_back({first, static_cast<index_t>(last - first + 1)});
    lines_ += static_cast<index_t>(last - first + 1);
  }
  index_t lines() const { return lines_; }
  void issue(index_t count) {
    for (; count > 0 && row_ < rows_.size(); --count) {
      // (locality 2: prefetcht1, into L2)
      __builtin_prefetch(reinterpret_cast<const void*>((rows_[row_].first + static_cast<std::uintptr_t>(line_)) * 64), 0, 2);
      if (++line_ == rows_[row_].lines) line_ = 0, ++row_;
    }
  }

 private:
  struct Row {
    std::uintptr_t first;  // line number
    index_t lines;
  };
  std::vector<Row> rows_;
  index_t lines_ = 0, line_ = 0;
  std::size_t row_ = 0;
};

}  // namespace taihu::dnn::conv
