// The training curve as a PNG (libpng): smoothed train loss (blue, left axis scaled
// to its range) and the test metric (red, 0..1 axis) against iteration, on a light
// grid. Written atomically; throws taihu::Error naming the file on failure.
#pragma once
#include <string>
#include <vector>

namespace taihu::caffe {

void write_curve_png(const std::string& path, const std::vector<float>& iter,
                     const std::vector<float>& loss, const std::vector<float>& test_iter,
                     const std::vector<float>& test_value, int width = 800, int height = 480);

}  // namespace taihu::caffe
