// Seismic pictures as PNG (see image.hpp): colour mapping, nearest-neighbour scaling to a
// readable size, axes with "nice" ticks, labels in a built-in bitmap font, libpng output.
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <functional>

#include "io/atomic_file.hpp"
#include "io/bitmap_font.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/image.hpp"

namespace taihu::stencil {
namespace {

using io::Canvas;
using io::Rgb;

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

double nice_step(double range, int target) {
  const double raw = range / target;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string tick_label(double v, double step) {
  char buf[32];
  const int decimals = step >= 1 ? 0 : std::min(4, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::abs(v) < step * 1e-6 ? 0.0 : v);
  return buf;
}

// libpng's own writer and error handler lose errno (png_error prints "Write Error" to
// stderr and longjmps): these keep the OS's reason for the message.
struct PngSink {
  FILE* file = nullptr;
  int error = 0;         // errno of the failed fwrite/fflush
  const char* libpng_message = nullptr;
};

void png_sink_write(png_structp png, png_bytep data, png_size_t length) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  errno = 0;
  if (std::fwrite(data, 1, length, sink->file) != length) {
    sink->error = errno ? errno : EIO;
    png_error(png, "write failed");
  }
}

void png_sink_flush(png_structp png) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  errno = 0;
  if (std::fflush(sink->file) != 0) {
    sink->error = errno ? errno : EIO;
    png_error(png, "flush failed");
  }
}

void png_sink_error(png_structp png, png_const_charp message) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  if (!sink->libpng_message) sink->libpng_message = message;
  png_longjmp(png, 1);
}

void png_sink_warning(png_structp, png_const_charp) {}

void write_canvas(const std::string& path, const Canvas& c) {
  const std::string tmp = io::temp_path_for(path);
  errno = 0;
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("taihu: cannot create PNG '" + path + "': " + std::strerror(errno ? errno : EIO));
  PngSink sink;
  sink.file = f;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_sink_error, png_sink_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    io::discard_temp(tmp);
    if (sink.error) throw Error("taihu: cannot write PNG '" + path + "': " + std::strerror(sink.error));
    throw Error("taihu: libpng failed writing '" + path + "'" +
                (sink.libpng_message ? std::string(": ") + sink.libpng_message : std::string()));
  }
  png_set_write_fn(png, &sink, png_sink_write, png_sink_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(c.width), static_cast<png_uint_32>(c.height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (long y = 0; y < c.height; ++y)
    png_write_row(png, reinterpret_cast<png_const_bytep>(c.pixels.data() + y * c.width * 3));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  // The last buffered bytes reach the file here: a full disk often shows up only now.
  int err = 0;
  errno = 0;
  if (std::fflush(f) != 0) err = errno ? errno : EIO;
  errno = 0;
  if (std::fclose(f) != 0 && err == 0) err = errno ? errno : EIO;
  if (err != 0) {
    io::discard_temp(tmp);
    throw Error("taihu: cannot write PNG '" + path + "': " + std::strerror(err));
  }
  io::commit_temp(tmp, path);
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
    const double step = nice_step(range, horizontal ? 6 : 5);
    for (double v = std::ceil(std::min(first, last) / step) * step; v <= std::max(first, last) + 1e-9 * step; v += step) {
      const double frac = (v - first) / (last - first);
      const long p = std::lround(frac * double(pixels - 1));
      const std::string label = tick_label(v, step);
      if (horizontal) {
        for (int k = 0; k < 6; ++k) c.set(left + p, top + ph + k, black);
        draw_text(c, left + p - io::text_width(label, font) / 2, top + ph + 10, label, font, black);
      } else {
        for (int k = 0; k < 6; ++k) c.set(left - 1 - k, top + p, black);
        draw_text(c, left - 10 - io::text_width(label, font), top + p - 7, label, font, black);
      }
    }
  };
  ticks(pic.horizontal, pic.width, pw, true);
  ticks(pic.vertical, pic.height, ph, false);
  draw_text(c, left + pw / 2 - io::text_width(pic.horizontal.label, font) / 2, top + ph + 40, pic.horizontal.label, font, black);
  draw_text(c, 8, top - 22, pic.vertical.label, font, black);
  draw_text(c, left, 10, pic.title, font, black);
  char scale[96];
  std::snprintf(scale, sizeof scale, pic.sequential ? "%.4g .. %.4g" : "clip +-%.3g", pic.sequential ? lo : hi, hi);
  draw_text(c, left + pw - io::text_width(scale, font), top - 22, scale, font, {90, 90, 90});
  write_canvas(path, c);
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
