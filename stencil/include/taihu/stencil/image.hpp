// PNG pictures of wavefield snapshots and shot gathers: the seismic red-white-blue
// colour map (negative blue, zero white, positive red), symmetric clipping at a
// percentile of |amplitude|, axes with ticks and labels in metres and seconds drawn
// with the bitmap font of taihu/arch/png.hpp, a title. Written atomically by taihu::png::write.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "taihu/stencil/grid.hpp"
#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

struct PlotAxis {
  std::string label;  // e.g. "x (m)"
  double origin = 0;  // value at the first sample
  double step = 1;    // value per sample
};

struct Picture {
  long width = 0, height = 0;  // samples: columns, rows
  std::vector<float> values;   // row-major: values[row * width + col]
  PlotAxis horizontal, vertical;   // vertical increases downwards (depth, time)
  std::string title;
  double clip_percentile = 99.0;
  bool sequential = false;  // a velocity model: grey-to-yellow ramp instead of red-white-blue
};

// Renders and writes the picture; the plot is scaled up to at least ~600 pixels wide.
void write_png(const std::string& path, const Picture& picture);

// The 2D pressure field (or the y = middle slice in 3D) as a picture in metres.
Picture wavefield_picture(const Field& field, const Grid& grid, const std::string& title);
// A shot gather: receivers across (by index or x in metres), time down in seconds.
Picture gather_picture(const ShotRecord& record, const std::string& title);
// Values over the grid's points (z fastest, like Model::vp; the middle y slice in 3D):
// a migrated image.
Picture image_picture(const Grid& grid, const std::vector<float>& values, const std::string& title);
// A model's vp (2D, or the middle y slice in 3D).
Picture model_picture(const Model& model, const std::string& title);

}  // namespace taihu::stencil
