// A small log-log line chart written as PNG (libpng), used by taihu-allreduce-sim to
// plot predicted time against node count. Text uses a built-in 3x5 pixel font
// (upper-case letters, digits and a few symbols). Written atomically (temp + rename).
#pragma once
#include <string>
#include <vector>

namespace taihu::comm::sim {

struct Series {
  std::string label;
  std::vector<double> x, y;  // positive values (log axes)
  unsigned color = 0;        // 0xRRGGBB
};

// Throws taihu::Error if the file cannot be written.
void write_loglog_png(const std::string& path, const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Series>& series);

}  // namespace taihu::comm::sim
