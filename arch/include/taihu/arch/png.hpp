// The project's one PNG writer: an RGB canvas with lines and text in one 5x7 bitmap
// font (printable ASCII), encoded by libpng and written atomically (write_file_atomic:
// temp + rename, so no truncated PNG ever sits under the final name). Plot layouts
// (stencil's seismic pictures, caffe's training curves, comm's log-log figures) are
// drawn by their modules onto this canvas.
// Why libpng: it is already a dependency of stencil and caffe_port (Debian libpng-dev),
// it is what the tests decode with, and its deflate output is what every viewer reads;
// a hand-rolled encoder would be one more copy to maintain.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace taihu::png {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(Rgb lhs, Rgb rhs) { return lhs.r == rhs.r && lhs.g == rhs.g && lhs.b == rhs.b; }
};

// 0xRRGGBB -> Rgb.
constexpr Rgb hex(unsigned c) {
  return {static_cast<std::uint8_t>(c >> 16), static_cast<std::uint8_t>(c >> 8), static_cast<std::uint8_t>(c)};
}

// An RGB image, row-major, 3 bytes per pixel. Drawing outside it is clipped silently.
class Canvas {
 public:
  // Throws taihu::Error unless 1 <= width, height <= 65535.
  Canvas(long width, long height, Rgb fill = {255, 255, 255});
  long width() const { return width_; }
  long height() const { return height_; }
  const std::vector<std::uint8_t>& pixels() const { return pixels_; }

  void set(long x, long y, Rgb c);
  Rgb at(long x, long y) const;  // throws taihu::Error outside the canvas
  // A straight line from (x0, y0) to (x1, y1), `thick` pixels wide (centred).
  void line(double x0, double y0, double x1, double y1, Rgb c, int thick = 1);
  void fill_rect(long x, long y, long w, long h, Rgb c);

 private:
  long width_, height_;
  std::vector<std::uint8_t> pixels_;
};

// The font: each glyph is 5x7 in a 6x8 cell, times `scale` canvas pixels.
inline constexpr int kGlyphWidth = 6;
inline constexpr int kGlyphHeight = 8;

// Draws text with its top-left corner at (x, y); characters outside printable ASCII
// draw as '?'.
void draw_text(Canvas& canvas, long x, long y, const std::string& text, int scale, Rgb colour);
long text_width(const std::string& text, int scale);

// The PNG bytes of the canvas (8-bit RGB). Throws taihu::Error if libpng fails.
std::string encode(const Canvas& canvas);
// encode() then write_file_atomic(); errors name the path and the OS's reason.
void write(const std::string& path, const Canvas& canvas);

}  // namespace taihu::png
