// Kaiser-windowed sinc interpolation weights for off-grid sources and receivers
// (Hicks, Geophysics 67, 2002).
#include <cmath>
#include <cstdio>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/acquisition.hpp"

namespace taihu::stencil {
namespace {

constexpr double kKaiserB = 6.31;

double windowed_sinc(double x) {
  if (std::abs(x) > kSincRadius) return 0.0;
  const double r = x / kSincRadius;
  const double window = std::cyl_bessel_i(0.0, kKaiserB * std::sqrt(1.0 - r * r)) /
                        std::cyl_bessel_i(0.0, kKaiserB);
  const double s = x == 0.0 ? 1.0 : std::sin(M_PI * x) / (M_PI * x);
  return s * window;
}

}  // namespace

PointStencil point_stencil(const Grid& grid, const Position& p) {
  const double coord[3] = {p.z, p.x, p.y};
  static const char* names[3] = {"z", "x", "y"};
  PointStencil st;
  for (int a = grid.dim; a < 3; ++a) st.w[a][0] = 1.f;
  for (int a = 0; a < grid.dim; ++a) {
    const double pos = coord[a] / grid.h[a];
    const double extent = double(grid.n[a] - 1);
    if (!(pos >= -1e-9 && pos <= extent + 1e-9) || !std::isfinite(pos)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "taihu: position %s = %g m lies outside the grid (0 .. %g m)", names[a],
                    coord[a], extent * grid.h[a]);
      throw Error(buf);
    }
    const long nearest = std::lround(pos);
    if (std::abs(pos - double(nearest)) < 1e-6) {  // on a node: the node alone
      st.first[a] = nearest;
      st.count[a] = 1;
      st.w[a][0] = 1.f;
      continue;
    }
    const long lo = static_cast<long>(std::floor(pos)) - kSincRadius + 1;
    st.first[a] = lo;
    st.count[a] = 2 * kSincRadius;
    for (int k = 0; k < 2 * kSincRadius; ++k) {
      const long idx = lo + k;
      st.w[a][k] = (idx < 0 || idx >= grid.n[a]) ? 0.f : static_cast<float>(windowed_sinc(double(idx) - pos));
    }
  }
  return st;
}

std::vector<Position> receiver_line(const Position& first, const Position& last, double step) {
  const double dz = last.z - first.z, dx = last.x - first.x, dy = last.y - first.y;
  const double len = std::sqrt(dz * dz + dx * dx + dy * dy);
  if (!(step > 0)) throw Error("taihu: receiver spacing must be > 0 m");
  const long count = static_cast<long>(std::floor(len / step + 1e-9)) + 1;
  std::vector<Position> out;
  for (long i = 0; i < count; ++i) {
    const double f = len > 0 ? double(i) * step / len : 0.0;
    out.push_back({first.z + f * dz, first.x + f * dx, first.y + f * dy});
  }
  return out;
}

}  // namespace taihu::stencil
