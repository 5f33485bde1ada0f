// Sources and receivers at arbitrary (off-grid) positions. A position is spread to
// (injection) or gathered from (sampling) the grid with Kaiser-windowed sinc weights
// (Hicks 2002, radius 4, b = 6.31), separable per axis; points outside the grid are
// dropped. On a grid node the weights reduce to that node alone.
#pragma once
#include <array>
#include <vector>

#include "taihu/stencil/grid.hpp"

namespace taihu::stencil {

struct Position {
  double z = 0, x = 0, y = 0;  // metres from the grid origin (first node)
};

inline constexpr int kSincRadius = 4;

// Per-axis weights for one position: first index and 2*kSincRadius weights (axes
// beyond the grid's dimension get one weight 1 at index 0).
struct PointStencil {
  std::array<long, 3> first{0, 0, 0};
  std::array<int, 3> count{1, 1, 1};
  std::array<std::array<float, 2 * kSincRadius>, 3> w{};
};

// Throws taihu::Error if the position lies outside the grid.
PointStencil point_stencil(const Grid& grid, const Position& p);

// A line of receivers from `first` to `last` (inclusive) every `step` metres.
std::vector<Position> receiver_line(const Position& first, const Position& last, double step);

}  // namespace taihu::stencil
