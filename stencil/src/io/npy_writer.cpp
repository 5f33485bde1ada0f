// .npy writer (see npy.hpp): magic "\x93NUMPY", version 1.0, a little-endian uint16
// header length, a Python dict literal padded with spaces to a 64-byte boundary and
// ending in '\n', then the raw little-endian float32 data; written atomically
// (taihu/arch/atomic_file.hpp).
#include <bit>
#include <cstddef>
#include <string>
#include <vector>

#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/npy.hpp"

namespace taihu::stencil {

void write_npy(const std::string& path, const float* data, const std::vector<long>& shape) {
  static_assert(std::endian::native == std::endian::little, "the .npy writer writes native floats as '<f4'");
  long count = 1;
  std::string dims;
  for (long n : shape) {
    if (n < 0) throw Error("taihu: write_npy '" + path + "': negative dimension " + std::to_string(n));
    count *= n;
    dims += std::to_string(n) + ", ";
  }
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // "(3,)" keeps its comma, "(3, 4)" does not
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t preamble = 10;  // magic (6) + version (2) + header length (2)
  header.append((64 - (preamble + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  AtomicOutputFile out(path);
  out.write(magic, sizeof magic);
  out.write(len, sizeof len);
  out.write(header);
  out.write(data, sizeof(float) * std::size_t(count));
  out.commit();
}

}  // namespace taihu::stencil
