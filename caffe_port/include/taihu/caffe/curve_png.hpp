// The training curve as a PNG (taihu/arch/line_plot.hpp): train loss (blue, left axis
// from 0 to its maximum) and the test metric (red, with markers, right axis 0..1)
// against iteration, with a grid, ticks and a legend. Written atomically; throws
// taihu::Error naming the file on failure, when there is no point to plot, or when the
// size is below 480x240.
#pragma once
#include <string>
#include <vector>

namespace taihu::caffe {

void write_curve_png(const std::string& path, const std::vector<float>& iter,
                     const std::vector<float>& loss, const std::vector<float>& test_iter,
                     const std::vector<float>& test_value, int width = 800, int height = 480);

}  // namespace taihu::caffe
