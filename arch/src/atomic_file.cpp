// Temp + fsync + rename (see taihu/arch/atomic_file.hpp).
#include "taihu/arch/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "taihu/arch/error.hpp"

namespace taihu {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{64} << 10;
// Names tried after "<path>.tmp.<pid>" is taken before giving up (EEXIST each time
// means something keeps creating them: report it rather than loop).
constexpr int kNameAttempts = 1000;

[[noreturn]] void throw_os(const char* what, const std::string& path, int err) {
  throw Error("taihu: " + std::string(what) + " '" + path + "': " + std::strerror(err ? err : EIO));
}

}  // namespace

AtomicTempPath::AtomicTempPath(std::string path, Kind kind) : AtomicTempPath(std::move(path), kind, nullptr) {}

AtomicTempPath::AtomicTempPath(std::string path, Kind kind, int* open_fd) : path_(std::move(path)), kind_(kind) {
  const std::string base = path_ + ".tmp." + std::to_string(::getpid());
  for (int n = 0;; ++n) {
    temp_ = n == 0 ? base : base + "." + std::to_string(n);
    // Exclusive creation: two writers of one path (threads of this process, or a stale
    // temporary of an earlier process with the same pid) never share a temporary.
    int rc = 0;
    if (kind_ == Kind::directory) {
      rc = ::mkdir(temp_.c_str(), 0777);
    } else {
      const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      rc = fd < 0 ? -1 : 0;
      if (fd >= 0 && open_fd) *open_fd = fd;
      else if (fd >= 0) ::close(fd);
    }
    if (rc == 0) return;
    if (errno != EEXIST || n + 1 == kNameAttempts) throw_os("cannot create", path_, errno);
  }
}

AtomicTempPath::~AtomicTempPath() { discard(); }

void AtomicTempPath::commit() {
  if (committed_ || discarded_)
    throw Error("taihu: '" + path_ + "': atomic output " + (committed_ ? "committed twice" : "committed after it was discarded"));
  if (kind_ == Kind::file) {
    // fsync works on any descriptor of the file: whoever wrote it, its pages reach the disk.
    const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      discard();
      throw_os("cannot write", path_, err);
    }
    ::close(fd);  // read-only: nothing left for close to report
  }
  rename_into_place();
}

void AtomicTempPath::rename_into_place() {
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    discard();
    throw_os("cannot rename into", path_, err);
  }
  committed_ = true;
}

void AtomicTempPath::discard() noexcept {
  if (committed_ || discarded_) return;
  discarded_ = true;
  if (kind_ == Kind::file) {
    ::unlink(temp_.c_str());
    return;
  }
  try {
    std::error_code ignored;
    std::filesystem::remove_all(temp_, ignored);
  } catch (...) {  // only bad_alloc can get here; a leftover temporary is all it costs
  }
}

AtomicOutputFile::AtomicOutputFile(std::string path) : temp_(std::move(path), AtomicTempPath::Kind::file, &fd_) {
  buffer_.reserve(kBufferBytes);
}

AtomicOutputFile::~AtomicOutputFile() { discard(); }

void AtomicOutputFile::require_open(const char* operation) const {
  if (fd_ < 0)
    throw Error("taihu: '" + path() + "': " + operation + " after the atomic output was " +
                (temp_.committed() ? "committed" : "discarded (an earlier error)"));
}

void AtomicOutputFile::fail(const char* what, int err) {
  discard();
  throw_os(what, path(), err);
}

void AtomicOutputFile::write_through(const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void AtomicOutputFile::flush_buffer() {
  write_through(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void AtomicOutputFile::write(const void* data, std::size_t size) {
  require_open("write");
  const char* bytes = static_cast<const char*>(data);
  if (buffer_.size() + size > kBufferBytes) flush_buffer();
  if (size >= kBufferBytes) {
    write_through(bytes, size);
  } else {
    buffer_.insert(buffer_.end(), bytes, bytes + size);
  }
}

void AtomicOutputFile::commit() {
  require_open("commit");
  flush_buffer();
  if (::fsync(fd_) != 0) fail("cannot write", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write", errno);
  temp_.rename_into_place();
}

void AtomicOutputFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  temp_.discard();
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicOutputFile out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace taihu
