// .npy writer (see npy.hpp): magic "\x93NUMPY", version 1.0, a little-endian uint16
// header length, a Python dict literal padded with spaces to a 64-byte boundary and
// ending in '\n', then the raw little-endian float32 data.
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "io/atomic_file.hpp"
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
  const std::string tmp = io::temp_path_for(path);
  auto fail = [&](const char* what) {
    const int err = errno;
    io::discard_temp(tmp);
    throw Error("taihu: cannot write '" + path + "' (" + what + "): " + std::strerror(err ? err : EIO));
  };
  errno = 0;
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("create");
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(len, 1, 2, f) == 2 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(data, sizeof(float), std::size_t(count), f) == std::size_t(count);
  ok = std::fflush(f) == 0 && ok;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    errno = err ? err : errno;
    fail("write");
  }
  io::commit_temp(tmp, path);
}

}  // namespace taihu::stencil
