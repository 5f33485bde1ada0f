// NumPy .npy files (format version 1.0) of float32 arrays, the numeric twin of the PNGs:
// numpy.load(path) returns the array with the given shape, C order, dtype '<f4'.
// Written atomically (temp file + rename); OS errors name the file and the reason.
#pragma once
#include <string>
#include <vector>

namespace taihu::stencil {

// `shape` lists the axes slowest first (C order); the product must equal data.size().
void write_npy(const std::string& path, const float* data, const std::vector<long>& shape);

}  // namespace taihu::stencil
