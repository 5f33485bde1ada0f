// write_loglog_png: the series as a taihu::png log-log line plot (see sim_plot.hpp).
#include "taihu/arch/error.hpp"
#include "taihu/arch/line_plot.hpp"
#include "taihu/comm/sim_plot.hpp"

#include <utility>

namespace taihu::comm::sim {

void write_loglog_png(const std::string& path, const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Series>& series) {
  png::LinePlot plot;
  plot.width = 960;
  plot.height = 640;
  plot.title = title;
  plot.x = {x_label, true};
  plot.y = {y_label, true};
  for (const auto& s : series) {
    if (s.x.size() != s.y.size())
      throw Error("plot '" + path + "': series '" + s.label + "' has " + std::to_string(s.x.size()) + " x values but " +
                  std::to_string(s.y.size()) + " y values");
    png::PlotSeries p{s.label, s.x, s.y, png::hex(s.color)};
    plot.series.push_back(std::move(p));
  }
  png::write(path, png::draw_line_plot(plot, path));
}

}  // namespace taihu::comm::sim
