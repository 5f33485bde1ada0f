// A 5x7 bitmap font (printable ASCII) for axis labels and titles in PNG output (private).
#pragma once
#include <cstdint>
#include <string>

namespace taihu::stencil::io {

struct Rgb {
  std::uint8_t r, g, b;
};

// An RGB canvas, row-major, 3 bytes per pixel.
struct Canvas {
  long width = 0, height = 0;
  std::string pixels;  // width * height * 3 bytes
  Canvas(long w, long h, Rgb fill);
  void set(long x, long y, Rgb c);
};

inline constexpr int kGlyphWidth = 6;  // 5 columns + 1 spacing, times the scale
inline constexpr int kGlyphHeight = 8;

// Draws text with its top-left corner at (x, y), each font pixel `scale` canvas pixels.
void draw_text(Canvas& canvas, long x, long y, const std::string& text, int scale, Rgb colour);
long text_width(const std::string& text, int scale);

}  // namespace taihu::stencil::io
