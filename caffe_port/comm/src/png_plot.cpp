// write_loglog_png: rasterises axes, decade grid, labelled ticks, polylines and a
// legend into an RGB buffer and writes it with libpng.
#include <png.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "taihu/arch/error.hpp"
#include "taihu/comm/sim_plot.hpp"

namespace taihu::comm::sim {

namespace {

// 3x5 glyphs, rows top to bottom, 3 bits per row (bit 2 = left column).
const std::map<char, std::array<unsigned char, 5>>& font() {
  static const std::map<char, std::array<unsigned char, 5>> f = {
      {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
      {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 2, 2}},
      {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'A', {2, 5, 7, 5, 5}}, {'B', {6, 5, 6, 5, 6}},
      {'C', {7, 4, 4, 4, 7}}, {'D', {6, 5, 5, 5, 6}}, {'E', {7, 4, 6, 4, 7}}, {'F', {7, 4, 6, 4, 4}},
      {'G', {7, 4, 5, 5, 7}}, {'H', {5, 5, 7, 5, 5}}, {'I', {7, 2, 2, 2, 7}}, {'J', {1, 1, 1, 5, 7}},
      {'K', {5, 5, 6, 5, 5}}, {'L', {4, 4, 4, 4, 7}}, {'M', {5, 7, 7, 5, 5}}, {'N', {6, 5, 5, 5, 5}},
      {'O', {7, 5, 5, 5, 7}}, {'P', {7, 5, 7, 4, 4}}, {'Q', {7, 5, 5, 7, 1}}, {'R', {7, 5, 6, 5, 5}},
      {'S', {7, 4, 7, 1, 7}}, {'T', {7, 2, 2, 2, 2}}, {'U', {5, 5, 5, 5, 7}}, {'V', {5, 5, 5, 5, 2}},
      {'W', {5, 5, 7, 7, 5}}, {'X', {5, 5, 2, 5, 5}}, {'Y', {5, 5, 2, 2, 2}}, {'Z', {7, 1, 2, 4, 7}},
      {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}}, {'/', {1, 1, 2, 4, 4}}, {'(', {1, 2, 2, 2, 1}},
      {')', {4, 2, 2, 2, 4}}, {':', {0, 2, 0, 2, 0}}, {'=', {0, 7, 0, 7, 0}}, {'+', {0, 2, 7, 2, 0}},
      {'_', {0, 0, 0, 0, 7}}, {',', {0, 0, 0, 2, 4}}, {'%', {5, 1, 2, 4, 5}}, {'^', {2, 5, 0, 0, 0}},
  };
  return f;
}

struct Canvas {
  int w, h;
  std::vector<unsigned char> rgb;
  Canvas(int width, int height) : w(width), h(height), rgb(static_cast<std::size_t>(width) * height * 3, 255) {}
  void set(int x, int y, unsigned c) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    unsigned char* p = &rgb[(static_cast<std::size_t>(y) * w + x) * 3];
    p[0] = static_cast<unsigned char>(c >> 16);
    p[1] = static_cast<unsigned char>(c >> 8);
    p[2] = static_cast<unsigned char>(c);
  }
  void line(double x0, double y0, double x1, double y1, unsigned c, int thick = 1) {
    const int steps = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; ++i) {
      const double t = static_cast<double>(i) / steps;
      const int x = static_cast<int>(std::lround(x0 + (x1 - x0) * t)), y = static_cast<int>(std::lround(y0 + (y1 - y0) * t));
      for (int dx = 0; dx < thick; ++dx)
        for (int dy = 0; dy < thick; ++dy) set(x + dx, y + dy, c);
    }
  }
  // Text at scale s; returns the width drawn.
  int text(int x, int y, const std::string& s, unsigned c, int scale = 2) {
    int cx = x;
    for (char ch : s) {
      const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      auto it = font().find(u);
      if (it != font().end())
        for (int row = 0; row < 5; ++row)
          for (int col = 0; col < 3; ++col)
            if (it->second[row] & (4 >> col))
              for (int a = 0; a < scale; ++a)
                for (int b = 0; b < scale; ++b) set(cx + col * scale + a, y + row * scale + b, c);
      cx += 4 * scale;
    }
    return cx - x;
  }
};

std::string tick_label(double v) {
  char b[32];
  if (v >= 1) std::snprintf(b, sizeof(b), "%g", v);
  else std::snprintf(b, sizeof(b), "%.0e", v);
  return b;
}

// libpng's own fwrite-based writer and stderr error handler lose errno ("Write Error"):
// these keep the OS's reason for the message, as stencil's png_writer.cpp does.
struct PngFile {
  FILE* f;
  int error;
};
void png_file_write(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<PngFile*>(png_get_io_ptr(png));
  errno = 0;
  if (std::fwrite(data, 1, n, out->f) != n) {
    out->error = errno ? errno : EIO;
    png_error(png, "write");
  }
}
void png_file_flush(png_structp png) {
  auto* out = static_cast<PngFile*>(png_get_io_ptr(png));
  errno = 0;
  if (std::fflush(out->f) != 0) {
    out->error = errno ? errno : EIO;
    png_error(png, "flush");
  }
}
void png_quiet_error(png_structp png, png_const_charp) { png_longjmp(png, 1); }

}  // namespace

void write_loglog_png(const std::string& path, const std::string& title, const std::string& x_label,
                      const std::string& y_label, const std::vector<Series>& series) {
  const int W = 960, H = 640, left = 90, right = 250, top = 50, bottom = 70;
  Canvas cv(W, H);
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (s.x[i] > 0 && s.y[i] > 0) {
        xmin = std::min(xmin, s.x[i]);
        xmax = std::max(xmax, s.x[i]);
        ymin = std::min(ymin, s.y[i]);
        ymax = std::max(ymax, s.y[i]);
      }
  if (xmax <= 0) throw Error("plot '" + path + "': no positive data");
  const double lx0 = std::floor(std::log10(xmin)), lx1 = std::max(lx0 + 1, std::ceil(std::log10(xmax)));
  const double ly0 = std::floor(std::log10(ymin)), ly1 = std::max(ly0 + 1, std::ceil(std::log10(ymax)));
  const int pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double x) { return left + (std::log10(x) - lx0) / (lx1 - lx0) * pw; };
  auto py = [&](double y) { return top + ph - (std::log10(y) - ly0) / (ly1 - ly0) * ph; };
  for (double e = lx0; e <= lx1; ++e) {
    const double x = px(std::pow(10, e));
    cv.line(x, top, x, top + ph, 0xdddddd);
    const std::string l = tick_label(std::pow(10, e));
    cv.text(static_cast<int>(x) - static_cast<int>(l.size()) * 4, top + ph + 8, l, 0x333333);
  }
  for (double e = ly0; e <= ly1; ++e) {
    const double y = py(std::pow(10, e));
    cv.line(left, y, left + pw, y, 0xdddddd);
    const std::string l = tick_label(std::pow(10, e));
    cv.text(left - 8 - static_cast<int>(l.size()) * 8, static_cast<int>(y) - 5, l, 0x333333);
  }
  cv.line(left, top, left, top + ph, 0x000000);
  cv.line(left, top + ph, left + pw, top + ph, 0x000000);
  cv.text(left, 15, title, 0x000000, 3);
  cv.text(left + pw / 2 - static_cast<int>(x_label.size()) * 4, H - 30, x_label, 0x000000);
  cv.text(5, top - 22, y_label, 0x000000);
  int legend_y = top + 10;
  for (const auto& s : series) {
    for (std::size_t i = 1; i < s.x.size(); ++i)
      if (s.x[i - 1] > 0 && s.y[i - 1] > 0 && s.x[i] > 0 && s.y[i] > 0)
        cv.line(px(s.x[i - 1]), py(s.y[i - 1]), px(s.x[i]), py(s.y[i]), s.color, 2);
    cv.line(left + pw + 15, legend_y + 5, left + pw + 40, legend_y + 5, s.color, 3);
    cv.text(left + pw + 48, legend_y, s.label, 0x000000);
    legend_y += 22;
  }

  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("plot '" + path + "': cannot open '" + tmp + "' for writing (" + std::strerror(errno) + ")");
  PngFile out{f, 0};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, png_quiet_error, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    std::remove(tmp.c_str());
    throw Error("plot '" + path + "': " + (out.error ? "write failed (" + std::string(std::strerror(out.error)) + ")" : "libpng failed"));
  }
  png_set_write_fn(png, &out, png_file_write, png_file_flush);
  png_set_IHDR(png, info, W, H, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < H; ++y) png_write_row(png, &cv.rgb[static_cast<std::size_t>(y) * W * 3]);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  errno = 0;
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno ? errno : EIO;
    std::remove(tmp.c_str());
    throw Error("plot '" + path + "': write failed (" + std::strerror(err) + ")");
  }
}

}  // namespace taihu::comm::sim
