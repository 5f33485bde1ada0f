// Training-curve PNG: a taihu::png line plot, written atomically. See taihu/caffe/curve_png.hpp.
#include "taihu/caffe/curve_png.hpp"

#include <algorithm>

#include "taihu/arch/error.hpp"
#include "taihu/arch/line_plot.hpp"

namespace taihu::caffe {

void write_curve_png(const std::string& path, const std::vector<float>& iter, const std::vector<float>& loss,
                     const std::vector<float>& test_iter, const std::vector<float>& test_value, int width, int height) {
  if (width < 480 || height < 240)
    throw Error(path + ": curve image " + std::to_string(width) + "x" + std::to_string(height) +
                " is too small (at least 480x240)");
  png::LinePlot plot;
  plot.width = width;
  plot.height = height;
  plot.title = "training curve";
  plot.x = {"iteration", false, 0.0};
  plot.y = {"loss", false, 0.0};
  plot.y2 = {"test", false, 0.0, 1.0};
  const std::size_t n = std::min(iter.size(), loss.size()), m = std::min(test_iter.size(), test_value.size());
  png::PlotSeries train{"train loss", {iter.begin(), iter.begin() + static_cast<long>(n)},
                        {loss.begin(), loss.begin() + static_cast<long>(n)}, {30, 80, 200}};
  png::PlotSeries test{"test", {test_iter.begin(), test_iter.begin() + static_cast<long>(m)},
                       {test_value.begin(), test_value.begin() + static_cast<long>(m)}, {210, 40, 40}};
  test.markers = true;
  test.right_axis = true;
  plot.series = {train, test};
  png::write(path, png::draw_line_plot(plot, path));
}

}  // namespace taihu::caffe
