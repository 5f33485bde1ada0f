// Temp-file-plus-rename helpers (see atomic_file.hpp).
#include "io/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "taihu/arch/error.hpp"

namespace taihu::stencil::io {

std::string temp_path_for(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

void commit_temp(const std::string& temp, const std::string& path) {
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    discard_temp(temp);
    throw Error("taihu: cannot write '" + path + "': " + std::strerror(err));
  }
}

void discard_temp(const std::string& temp) noexcept { std::remove(temp.c_str()); }

}  // namespace taihu::stencil::io
