// A log-log line chart (960x640 PNG) used by taihu-allreduce-sim to plot predicted time
// against node count: drawn by taihu/arch/line_plot.hpp, written atomically by
// taihu::png::write (temp + rename).
#pragma once
#include <string>
#include <vector>

namespace taihu::comm::sim {

struct Series {
  std::string label;
  std::vector<double> x, y;  // positive values (log axes)
  unsigned color = 0;        // 0xRRGGBB
};

// Throws taihu::Error naming the path if the file cannot be written, if no series has a
// positive point, or if a series' x and y differ in length.
void write_loglog_png(const std::string& path, const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Series>& series);

}  // namespace taihu::comm::sim
