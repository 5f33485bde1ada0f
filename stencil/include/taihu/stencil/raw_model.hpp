// Velocity (or density, epsilon, delta) models from raw binary float32 files and from
// SEG-Y files (one trace per depth column).
//
//   RawFieldSpec spec{"vp_marmousi_bi", {1601, 401}, "z,x", {7.5}};  // nx x nz, z fastest on disk
//   spec.scale = 1000;                                               // km/s -> m/s
//   Model m = read_raw_model(spec);
#pragma once
#include <string>
#include <vector>

#include "taihu/stencil/model.hpp"

namespace taihu::stencil {

struct RawFieldSpec {
  std::string path;
  std::vector<long> shape;      // nx x nz (2D) or nx x ny x nz (3D), whatever the disk order
  std::string order = "z,x";    // axis names from fastest to slowest on disk: z,x[,y] in any order
  std::vector<double> spacing;  // metres: 1 value for all axes, or one per shape entry
  bool big_endian = false;
  double scale = 1.0;           // multiplies every value (e.g. 1000 for km/s -> m/s)
};

// The grid the spec describes (z, x, y convention).
Grid grid_of(const RawFieldSpec& spec);

// Reads the file and returns its values reordered to z fastest, x, then y. Errors
// (taihu::Error) name the file and say what disagrees: missing file, size versus shape,
// unknown axis names, non-finite values.
std::vector<float> read_raw_field(const RawFieldSpec& spec);

// Writes values (z fastest) as little-endian float32, atomically.
void write_raw_field(const std::string& path, const std::vector<float>& values);

// A model whose vp comes from a raw file.
Model read_raw_model(const RawFieldSpec& spec);

// A 2D model from a SEG-Y file: trace i is the depth column at x = i * dx, its sample
// count is nz; dz is taken from `dz` (SEG-Y stores time intervals, not depths).
Model read_segy_model(const std::string& path, double dx, double dz, double scale = 1.0);

}  // namespace taihu::stencil
