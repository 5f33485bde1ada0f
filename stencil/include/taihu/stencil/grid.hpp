// Grid geometry and padded wavefield storage for taihu's stencils.
// Axis convention (everywhere in stencil/): axis 0 is depth z and is the fastest
// (contiguous) axis, axis 1 is x, axis 2 is y (size 1 in 2D). A Field stores every
// active axis with kPad zero cells on each side, so stencils up to space order 16
// read their neighbours without bounds checks; the fast axis is padded to a multiple
// of 16 floats so every line starts 64-byte aligned.
#pragma once
#include <array>
#include <cstddef>
#include <string>

#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::stencil {

inline constexpr int kPad = 8;  // halo cells per side: enough for space order 16

struct Grid {
  int dim = 2;                          // 2 or 3
  std::array<long, 3> n{1, 1, 1};       // points along z, x, y
  std::array<double, 3> h{1., 1., 1.};  // spacing in metres along z, x, y

  long points() const { return n[0] * n[1] * n[2]; }
  int slow_axis() const { return dim == 3 ? 2 : 1; }
  // "1601x401 (z x x) at 7.5 m" style description for logs and errors.
  std::string describe() const;
};

// Throws taihu::Error naming the bad field (dimension, size, spacing).
void validate(const Grid& grid);

// Layout of a padded field over a (possibly local) grid.
struct Layout {
  std::array<long, 3> n{1, 1, 1};
  std::array<long, 3> pad{0, 0, 0};
  long s1 = 0, s2 = 0;  // strides of axes 1 and 2 (axis 0 stride is 1)
  long total = 0;

  static Layout for_grid(int dim, const std::array<long, 3>& n);
  long index(long i0, long i1, long i2) const {
    return (i2 + pad[2]) * s2 + (i1 + pad[1]) * s1 + (i0 + pad[0]);
  }
};

// A zero-initialised padded float field.
class Field {
 public:
  Field() = default;
  explicit Field(const Layout& layout);
  const Layout& layout() const { return layout_; }
  float* data() { return buf_.data(); }
  const float* data() const { return buf_.data(); }
  float& at(long i0, long i1, long i2 = 0) { return buf_[layout_.index(i0, i1, i2)]; }
  float at(long i0, long i1, long i2 = 0) const { return buf_[layout_.index(i0, i1, i2)]; }
  void fill(float value);
  bool empty() const { return buf_.size() == 0; }

 private:
  Layout layout_;
  arch::AlignedBuffer<float> buf_;
};

}  // namespace taihu::stencil
