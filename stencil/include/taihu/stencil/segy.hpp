// Shot gathers as SEG-Y (rev 1, IEEE float32 samples, big-endian) through segyio, with
// the trace headers a processing package reads: field record (shot number), trace
// numbers, source and receiver x/y (with a -100 scalar: centimetre precision) and
// depth/elevation, offset, sample count and interval (microseconds).
#pragma once
#include <string>
#include <vector>

#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

// SEG-Y stores the sample interval in whole microseconds and the sample count in 16-bit
// header fields that segyio (and most readers) read as signed: 1..32767 each.
inline constexpr long kSegyMaxSamples = 32767;
inline constexpr long kSegyMaxIntervalUs = 32767;
// Why `samples` samples at `dt` seconds do not fit a SEG-Y trace ("" when they do), so
// a run can refuse before it computes what it could not write. dt must be a whole
// number of microseconds: anything else would be written as a different dt.
std::string segy_sampling_problem(double dt, long samples);

// Writes every shot's traces into one file, atomically (temp file + rename). OS errors
// (a full disk, a file size limit) are reported with the OS's reason.
void write_segy(const std::string& path, const std::vector<ShotRecord>& shots);

// A depth image over `grid` (z fastest, like Model::vp) as SEG-Y: one trace per x (and
// y) column at group x/y, the depth step in millimetres in the sample-interval fields
// (which say microseconds for time data), atomically.
void write_segy_image(const std::string& path, const Grid& grid, const std::vector<float>& image);

// Writes `data` (trace-major, the template's trace and sample counts) with every header
// of the SEG-Y file `like` copied unchanged (text, binary, each trace's 240 bytes) but
// the sample format, which becomes IEEE float32: a synthetic to difference trace by trace
// with the field file. Atomically.
void write_segy_like(const std::string& path, const std::string& like, const std::vector<float>& data);

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
