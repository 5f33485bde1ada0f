// Training-curve PNG through libpng, written atomically. See taihu/caffe/curve_png.hpp.
#include "taihu/caffe/curve_png.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/proto.hpp"

namespace taihu::caffe {
namespace {

struct Canvas {
  int w, h;
  std::vector<std::uint8_t> rgb;
  Canvas(int width, int height) : w(width), h(height), rgb(static_cast<std::size_t>(width * height * 3), 255) {}
  void put(int x, int y, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    auto* p = &rgb[static_cast<std::size_t>((y * w + x) * 3)];
    p[0] = r; p[1] = g; p[2] = b;
  }
  void line(double x0, double y0, double x1, double y1, std::uint8_t r, std::uint8_t g, std::uint8_t b, int thick) {
    const int steps = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; ++i) {
      const double t = static_cast<double>(i) / steps;
      const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0))), y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      for (int dy = -thick / 2; dy <= thick / 2; ++dy)
        for (int dx = -thick / 2; dx <= thick / 2; ++dx) put(x + dx, y + dy, r, g, b);
    }
  }
};

void png_write_to_string(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void png_flush_noop(png_structp) {}

std::string encode_png(const Canvas& c) {
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) throw Error("libpng: cannot create the write structures");
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error("libpng: encoding failed");
  }
  png_set_write_fn(png, &out, png_write_to_string, png_flush_noop);
  png_set_IHDR(png, info, static_cast<png_uint_32>(c.w), static_cast<png_uint_32>(c.h), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < c.h; ++y) {
    png_write_row(png, const_cast<png_bytep>(&c.rgb[static_cast<std::size_t>(y * c.w * 3)]));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace

void write_curve_png(const std::string& path, const std::vector<float>& iter, const std::vector<float>& loss,
                     const std::vector<float>& test_iter, const std::vector<float>& test_value, int width, int height) {
  if (width < 64 || height < 64) throw Error(path + ": curve image too small");
  Canvas c(width, height);
  const int left = 40, right = width - 20, top = 20, bottom = height - 30;
  float max_iter = 1;
  for (float v : iter) max_iter = std::max(max_iter, v);
  for (float v : test_iter) max_iter = std::max(max_iter, v);
  float max_loss = 1e-6f;
  for (float v : loss) if (std::isfinite(v)) max_loss = std::max(max_loss, v);
  auto X = [&](float it) { return left + (right - left) * static_cast<double>(it) / max_iter; };
  auto Yl = [&](float v) { return bottom - (bottom - top) * static_cast<double>(std::clamp(v / max_loss, 0.f, 1.f)); };
  auto Ya = [&](float v) { return bottom - (bottom - top) * static_cast<double>(std::clamp(v, 0.f, 1.f)); };
  for (int k = 0; k <= 10; ++k) {  // grid: tenths of each axis
    const double gx = left + (right - left) * k / 10.0, gy = top + (bottom - top) * k / 10.0;
    c.line(gx, top, gx, bottom, 225, 225, 225, 1);
    c.line(left, gy, right, gy, 225, 225, 225, 1);
  }
  c.line(left, bottom, right, bottom, 0, 0, 0, 1);
  c.line(left, top, left, bottom, 0, 0, 0, 1);
  for (std::size_t i = 1; i < iter.size() && i < loss.size(); ++i) {
    c.line(X(iter[i - 1]), Yl(loss[i - 1]), X(iter[i]), Yl(loss[i]), 30, 80, 200, 2);
  }
  for (std::size_t i = 0; i < test_iter.size() && i < test_value.size(); ++i) {
    if (i > 0) c.line(X(test_iter[i - 1]), Ya(test_value[i - 1]), X(test_iter[i]), Ya(test_value[i]), 210, 40, 40, 2);
    c.line(X(test_iter[i]) - 2, Ya(test_value[i]), X(test_iter[i]) + 2, Ya(test_value[i]), 210, 40, 40, 3);
  }
  write_file_atomic(path, encode_png(c));
}

}  // namespace taihu::caffe
