// A line chart on a taihu::png::Canvas: a frame, a light grid at "nice" ticks (1-2-5 steps
// on linear axes, decades on log axes) with labels, a title, axis labels, several series
// as polylines (optionally with point markers, optionally against a second, right-hand
// y axis) and a legend. Used by caffe's training curves and comm's allreduce figures;
// stencil's pictures use nice_ticks()/tick_label() for their axes.
// Points that are not finite (or not positive on a log axis) break the line there;
// values outside a fixed axis range are drawn at the frame.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "taihu/arch/png.hpp"

namespace taihu::png {

struct PlotAxis {
  std::string label;
  bool log = false;
  // Fixed range; NaN means "from the data" (log axes round out to whole decades).
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
};

struct PlotSeries {
  std::string label;  // empty: not in the legend
  std::vector<double> x, y;
  Rgb colour{0, 0, 0};
  int thickness = 2;
  bool markers = false;      // a small square at every point
  bool right_axis = false;   // against LinePlot::y2 instead of y
};

struct LinePlot {
  long width = 960, height = 640;
  std::string title;
  PlotAxis x, y;
  PlotAxis y2;  // drawn only if a series uses it
  std::vector<PlotSeries> series;
};

// The legend (series with a label) takes the right margin, as wide as the longest label.
// Throws taihu::Error (naming `what`, e.g. the output path) if no series has a point
// to draw, if a series' x and y differ in length, or if the size leaves no plot area
// (at least 50x50 pixels inside the margins).
Canvas draw_line_plot(const LinePlot& plot, const std::string& what);

// Ticks at multiples of a 1-2-5 step covering [lo, hi] with about `target` intervals;
// the step is returned through `step`. lo < hi required (else empty).
std::vector<double> nice_ticks(double lo, double hi, int target, double* step = nullptr);
// A tick value printed with as many decimals as the step needs ("0.25", "1500").
std::string tick_label(double value, double step);

}  // namespace taihu::png
