// Seismic pictures as PNG (see image.hpp): colour mapping, nearest-neighbour scaling to a
// readable size, axes with "nice" ticks; drawn and written by taihu/arch/png.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "taihu/arch/error.hpp"
#include "taihu/arch/line_plot.hpp"
#include "taihu/arch/png.hpp"
#include "taihu/stencil/image.hpp"

namespace taihu::stencil {
namespace {

using png::Canvas;
using png::Rgb;
using png::draw_text;
using png::text_width;

Rgb lerp(Rgb a, Rgb b, double t) {
  auto m = [t](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(std::lround(x + (double(y) - x) * t));
  };
  return {m(a.r, b.r), m(a.g, b.g), m(a.b, b.b)};
}

// Seismic red-white-blue: -1 dark blue, -0.5 blue, 0 white, 0.5 red, 1 dark red.
Rgb seismic(double v) {
  v = std::clamp(v, -1.0, 1.0);
  const Rgb dark_blue{0, 0, 77}, blue{0, 0, 255}, white{255, 255, 255}, red{255, 0, 0}, dark_red{128, 0, 0};
  if (v < -0.5) return lerp(dark_blue, blue, (v + 1) * 2);
  if (v < 0) return lerp(blue, white, (v + 0.5) * 2);
  if (v < 0.5) return lerp(white, red, v * 2);
  return lerp(red, dark_red, (v - 0.5) * 2);
}

// A perceptual-ish ramp for velocity models (0 slow .. 1 fast).
Rgb ramp(double t) {
  static const Rgb stops[] = {{48, 18, 59}, {40, 120, 230}, {30, 200, 160}, {190, 220, 50}, {250, 180, 40}, {180, 30, 10}};
  t = std::clamp(t, 0.0, 1.0) * 5.0;
  const int i = std::min(4, static_cast<int>(t));
  return lerp(stops[i], stops[i + 1], t - i);
}

// Plot size in pixels for n samples: integer upscale below lo, downscale above hi.
long plot_pixels(long n, long lo, long hi) {
  if (n < lo) return n * ((lo + n - 1) / n);
  return std::min(n, hi);
}

}  // namespace

void write_png(const std::string& path, const Picture& pic) {
  if (pic.width < 1 || pic.height < 1 || pic.values.size() != static_cast<std::size_t>(pic.width * pic.height))
    throw Error("taihu: write_png: the picture's size and values disagree ('" + path + "')");
  const long pw = plot_pixels(pic.width, 600, 1600);
  long ph = plot_pixels(pic.height, 300, 1000);
  const int font = 2;
  const long left = 90, top = 60, right = 30, bottom = 70;
  Canvas c(left + pw + right, top + ph + bottom, {255, 255, 255});
  // Colour scale.
  double lo = 0, hi = 0;
  std::vector<float> mags;
  mags.reserve(pic.values.size());
  for (float v : pic.values)
    if (std::isfinite(v)) mags.push_back(pic.sequential ? v : std::abs(v));
  if (!mags.empty()) {
    if (pic.sequential) {
      const auto [mn, mx] = std::minmax_element(mags.begin(), mags.end());
      lo = *mn;
      hi = *mx;
    } else {
      const auto k = static_cast<std::size_t>(std::clamp(pic.clip_percentile, 0.0, 100.0) / 100.0 * double(mags.size() - 1));
      std::nth_element(mags.begin(), mags.begin() + static_cast<long>(k), mags.end());
      hi = mags[k];
      lo = -hi;
    }
  }
  const double span = hi > lo ? hi - lo : 1.0;
  for (long y = 0; y < ph; ++y) {
    const long row = std::min(pic.height - 1, y * pic.height / ph);
    for (long x = 0; x < pw; ++x) {
      const long col = std::min(pic.width - 1, x * pic.width / pw);
      const float v = pic.values[static_cast<std::size_t>(row * pic.width + col)];
      Rgb colour{128, 128, 128};
      if (std::isfinite(v)) colour = pic.sequential ? ramp((v - lo) / span) : seismic(hi > 0 ? v / hi : 0.0);
      c.set(left + x, top + y, colour);
    }
  }
  const Rgb black{0, 0, 0};
  // Frame.
  for (long x = left - 1; x <= left + pw; ++x) {
    c.set(x, top - 1, black);
    c.set(x, top + ph, black);
  }
  for (long y = top - 1; y <= top + ph; ++y) {
    c.set(left - 1, y, black);
    c.set(left + pw, y, black);
  }
  // Horizontal axis ticks (below the plot).
  auto ticks = [&](const PlotAxis& ax, long samples, long pixels, bool horizontal) {
    const double first = ax.origin, last = ax.origin + ax.step * double(samples - 1);
    const double range = std::abs(last - first);
    if (!(range > 0)) return;
    double step = 1;
    for (double v : png::nice_ticks(std::min(first, last), std::max(first, last), horizontal ? 6 : 5, &step)) {
      const double frac = (v - first) / (last - first);
      const long p = std::lround(frac * double(pixels - 1));
      const std::string label = png::tick_label(v, step);
      if (horizontal) {
        for (int k = 0; k < 6; ++k) c.set(left + p, top + ph + k, black);
        draw_text(c, left + p - text_width(label, font) / 2, top + ph + 10, label, font, black);
      } else {
        for (int k = 0; k < 6; ++k) c.set(left - 1 - k, top + p, black);
        draw_text(c, left - 10 - text_width(label, font), top + p - 7, label, font, black);
      }
    }
  };
  ticks(pic.horizontal, pic.width, pw, true);
  ticks(pic.vertical, pic.height, ph, false);
  draw_text(c, left + pw / 2 - text_width(pic.horizontal.label, font) / 2, top + ph + 40, pic.horizontal.label, font, black);
  draw_text(c, 8, top - 22, pic.vertical.label, font, black);
  draw_text(c, left, 10, pic.title, font, black);
  char scale[96];
  std::snprintf(scale, sizeof scale, pic.sequential ? "%.4g .. %.4g" : "clip +-%.3g", pic.sequential ? lo : hi, hi);
  draw_text(c, left + pw - text_width(scale, font), top - 22, scale, font, {90, 90, 90});
  png::write(path, c);
}

namespace {
Picture slice_picture(const Grid& g, const std::function<float(long, long)>& at) {
  Picture p;
  p.width = g.n[1];
  p.height = g.n[0];
  p.values.resize(static_cast<std::size_t>(p.width * p.height));
  for (long z = 0; z < g.n[0]; ++z)
    for (long x = 0; x < g.n[1]; ++x) p.values[static_cast<std::size_t>(z * p.width + x)] = at(z, x);
  p.horizontal = {"x (m)", 0.0, g.h[1]};
  p.vertical = {"z (m)", 0.0, g.h[0]};
  return p;
}
}  // namespace

Picture wavefield_picture(const Field& field, const Grid& grid, const std::string& title) {
  const long ymid = field.layout().n[2] / 2;
  Picture p = slice_picture(grid, [&](long z, long x) { return field.at(z, x, ymid); });
  p.title = title;
  return p;
}

Picture image_picture(const Grid& g, const std::vector<float>& values, const std::string& title) {
  if (values.size() != static_cast<std::size_t>(g.points())) throw Error("taihu: image_picture: the values do not match the grid");
  const long ymid = g.n[2] / 2;
  Picture p = slice_picture(g, [&](long z, long x) { return values[static_cast<std::size_t>((ymid * g.n[1] + x) * g.n[0] + z)]; });
  p.title = title;
  return p;
}

Picture model_picture(const Model& model, const std::string& title) {
  const Grid& g = model.grid;
  const long ymid = g.n[2] / 2;
  Picture p = slice_picture(g, [&](long z, long x) { return model.vp[static_cast<std::size_t>((ymid * g.n[1] + x) * g.n[0] + z)]; });
  p.title = title;
  p.sequential = true;
  return p;
}

Picture gather_picture(const ShotRecord& rec, const std::string& title) {
  Picture p;
  p.width = static_cast<long>(rec.receivers.size());
  p.height = rec.nt;
  p.values.resize(static_cast<std::size_t>(p.width * p.height));
  for (long r = 0; r < p.width; ++r)
    for (long t = 0; t < p.height; ++t) p.values[static_cast<std::size_t>(t * p.width + r)] = rec.trace(static_cast<std::size_t>(r))[t];
  const double x0 = rec.receivers.empty() ? 0.0 : rec.receivers.front().x;
  const double dx = rec.receivers.size() > 1 ? (rec.receivers.back().x - x0) / double(rec.receivers.size() - 1) : 1.0;
  p.horizontal = {"receiver x (m)", x0, dx};
  p.vertical = {"t (s)", 0.0, rec.dt};
  p.title = title;
  p.clip_percentile = 98.0;
  return p;
}

}  // namespace taihu::stencil
