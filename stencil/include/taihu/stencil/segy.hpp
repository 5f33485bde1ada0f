// Shot gathers as SEG-Y (rev 1, IEEE float32 samples, big-endian) through segyio, with
// the trace headers a processing package reads: field record (shot number), trace
// numbers, source and receiver x/y (with a -100 scalar: centimetre precision) and
// depth/elevation, offset, sample count and interval (microseconds).
#pragma once
#include <string>
#include <vector>

#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

// Writes every shot's traces into one file, atomically (temp file + rename).
void write_segy(const std::string& path, const std::vector<ShotRecord>& shots);

struct SegyTraces {
  int samples = 0;
  double dt = 0;  // seconds
  std::vector<float> data;  // trace-major
  std::vector<int> field_record, offset;
  std::vector<double> source_x, source_y, group_x, group_y, source_depth, group_depth;  // metres
  std::size_t traces() const { return field_record.size(); }
};

// Reads any SEG-Y file of IEEE or IBM float samples. Errors name the file.
SegyTraces read_segy(const std::string& path);

}  // namespace taihu::stencil
