// Temp-file-plus-rename writer (see taihu/arch/atomic_file.hpp).
#include "taihu/arch/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "taihu/arch/error.hpp"

namespace taihu {

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("taihu: cannot create '" + path + "': " + std::strerror(errno));
  auto fail = [&](const char* what, int err) {
    ::unlink(tmp.c_str());
    throw Error("taihu: " + std::string(what) + " '" + path + "': " + std::strerror(err));
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail("cannot write", err);
    }
    done += static_cast<std::size_t>(n);
  }
  // A full disk or a failing device often shows up only at fsync/close.
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail("cannot write", err);
  }
  if (::close(fd) != 0) fail("cannot write", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename into", errno);
}

}  // namespace taihu
