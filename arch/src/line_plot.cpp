// Line charts on a Canvas (see taihu/arch/line_plot.hpp).
#include "taihu/arch/line_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "taihu/arch/error.hpp"

namespace taihu::png {
namespace {

const Rgb kBlack{0, 0, 0}, kGrid{221, 221, 221}, kText{51, 51, 51};
constexpr int kFont = 2;  // font scale: 12x16-pixel cells

// One axis mapped onto [p0, p1] pixels (p1 < p0 for y, which grows downwards).
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;
  double p0 = 0, p1 = 1;
  bool usable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double pixel(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return p0 + std::clamp(t, 0.0, 1.0) * (p1 - p0);
  }
  std::vector<double> ticks(int target, double* step) const {
    if (!log) return nice_ticks(lo, hi, target, step);
    std::vector<double> t;
    for (double e = std::round(std::log10(lo)); e <= std::log10(hi) + 1e-9; ++e) t.push_back(std::pow(10.0, e));
    return t;
  }
  std::string label(double v, double step) const {
    if (!log) return tick_label(v, step);
    char b[32];
    std::snprintf(b, sizeof b, v >= 1e-3 && v < 1e6 ? "%g" : "%.0e", v);
    return b;
  }
};

// The range of an axis from the data of the series on it.
Scale fit(const PlotAxis& axis, const std::vector<const std::vector<double>*>& data) {
  Scale s;
  s.log = axis.log;
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (const auto* d : data)
    for (double v : *d)
      if (s.usable(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (std::isfinite(axis.min)) lo = axis.min;
  if (std::isfinite(axis.max)) hi = axis.max;
  if (!(lo <= hi)) lo = s.log ? 1 : 0, hi = s.log ? 10 : 1;
  if (s.log) {
    lo = std::pow(10.0, std::floor(std::log10(lo)));
    hi = std::pow(10.0, std::max(std::log10(lo) + 1, std::ceil(std::log10(hi))));
  } else if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.5;
    lo -= pad, hi += pad;
  }
  s.lo = lo, s.hi = hi;
  return s;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target, double* step_out) {
  std::vector<double> ticks;
  if (!(lo < hi) || !std::isfinite(hi - lo) || target < 1) return ticks;
  const double raw = (hi - lo) / target;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  if (step_out) *step_out = step;
  for (double k = std::ceil(lo / step); k * step <= hi + 1e-9 * step; ++k) ticks.push_back(k * step);
  return ticks;
}

std::string tick_label(double value, double step) {
  char buf[32];
  const int decimals = step >= 1 ? 0 : std::min(4, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::abs(value) < step * 1e-6 ? 0.0 : value);
  return buf;
}

Canvas draw_line_plot(const LinePlot& plot, const std::string& what) {
  bool any_point = false, any_right = false, any_legend = false;
  std::vector<const std::vector<double>*> xs, ys, y2s;
  for (const auto& s : plot.series) {
    if (s.x.size() != s.y.size())
      throw Error("taihu: plot '" + what + "': series '" + s.label + "' has " + std::to_string(s.x.size()) +
                  " x values but " + std::to_string(s.y.size()) + " y values");
    xs.push_back(&s.x);
    (s.right_axis ? y2s : ys).push_back(&s.y);
    any_right |= s.right_axis;
    any_legend |= !s.label.empty();
    const PlotAxis& ya = s.right_axis ? plot.y2 : plot.y;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      any_point |= std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && (!plot.x.log || s.x[i] > 0) && (!ya.log || s.y[i] > 0);
  }
  if (!any_point) throw Error("taihu: plot '" + what + "': no data point to draw");
  const long left = 100, top = 50, bottom = 70;
  long legend_text = 0;
  for (const auto& s : plot.series) legend_text = std::max(legend_text, text_width(s.label, kFont));
  const long right = (any_legend ? 15 + 33 + legend_text + 10 : 30) + (any_right ? 80 : 0);
  if (plot.width - left - right < 50 || plot.height - top - bottom < 50)
    throw Error("taihu: plot '" + what + "': " + std::to_string(plot.width) + "x" + std::to_string(plot.height) +
                " leaves no room for the plot area");
  Canvas c(plot.width, plot.height);
  const long pw = plot.width - left - right, ph = plot.height - top - bottom;
  const long x1 = left + pw, y1 = top + ph;
  Scale sx = fit(plot.x, xs), sy = fit(plot.y, ys), sy2 = fit(plot.y2, y2s);
  // The frame's edges as pixel coordinates for drawing.
  const double L = static_cast<double>(left), T = static_cast<double>(top);
  const double X1 = static_cast<double>(x1), Y1 = static_cast<double>(y1);
  sx.p0 = L, sx.p1 = X1;
  sy.p0 = sy2.p0 = Y1, sy.p1 = sy2.p1 = T;

  double step = 1;
  for (double v : sx.ticks(6, &step)) {
    const double p = sx.pixel(v);
    c.line(p, T, p, Y1, kGrid);
    c.line(p, Y1, p, Y1 + 5, kBlack);
    const std::string l = sx.label(v, step);
    draw_text(c, std::lround(p) - text_width(l, kFont) / 2, y1 + 10, l, kFont, kText);
  }
  for (double v : sy.ticks(5, &step)) {
    const double p = sy.pixel(v);
    c.line(L, p, X1, p, kGrid);
    c.line(L - 5, p, L, p, kBlack);
    const std::string l = sy.label(v, step);
    draw_text(c, left - 10 - text_width(l, kFont), std::lround(p) - 7, l, kFont, kText);
  }
  if (any_right)
    for (double v : sy2.ticks(5, &step)) {
      const double p = sy2.pixel(v);
      c.line(X1, p, X1 + 5, p, kBlack);
      draw_text(c, x1 + 10, std::lround(p) - 7, sy2.label(v, step), kFont, kText);
    }
  c.line(L, T, X1, T, kBlack);
  c.line(L, Y1, X1, Y1, kBlack);
  c.line(L, T, L, Y1, kBlack);
  c.line(X1, T, X1, Y1, kBlack);
  draw_text(c, left, 12, plot.title, kFont, kBlack);
  draw_text(c, left + pw / 2 - text_width(plot.x.label, kFont) / 2, plot.height - 28, plot.x.label, kFont, kBlack);
  draw_text(c, 8, top - 24, plot.y.label, kFont, kBlack);
  if (any_right) draw_text(c, x1 + 10 - text_width(plot.y2.label, kFont) / 2, top - 24, plot.y2.label, kFont, kBlack);

  long legend_y = top + 10;
  const long legend_x = x1 + (any_right ? 80 : 0) + 15;
  for (const auto& s : plot.series) {
    const Scale& ys_ = s.right_axis ? sy2 : sy;
    bool have_prev = false;
    double px = 0, py = 0;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!sx.usable(s.x[i]) || !ys_.usable(s.y[i])) {
        have_prev = false;  // a gap: do not bridge missing points
        continue;
      }
      const double qx = sx.pixel(s.x[i]), qy = ys_.pixel(s.y[i]);
      if (have_prev) c.line(px, py, qx, qy, s.colour, s.thickness);
      if (s.markers) c.fill_rect(std::lround(qx) - 2, std::lround(qy) - 2, 5, 5, s.colour);
      px = qx, py = qy, have_prev = true;
    }
    if (!s.label.empty()) {
      const double lx = static_cast<double>(legend_x), ly = static_cast<double>(legend_y + 7);
      c.line(lx, ly, lx + 25, ly, s.colour, 3);
      draw_text(c, legend_x + 33, legend_y, s.label, kFont, kBlack);
      legend_y += 24;
    }
  }
  return c;
}

}  // namespace taihu::png
