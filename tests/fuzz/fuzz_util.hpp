// Shared helpers for the libFuzzer harnesses in tests/fuzz/: the readers under test take
// file paths, so each input is written to one scratch file per process and read back.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

namespace taihu::fuzz {

// The scratch files this process wrote, removed when it exits normally (libFuzzer returns
// from main after -max_total_time and after a corpus replay), so runs leave no files in
// TMPDIR. A crashing input keeps its file, beside libFuzzer's own crash-* copy.
struct ScratchFiles {
  std::set<std::string> paths;
  ~ScratchFiles() {
    for (const auto& p : paths) ::unlink(p.c_str());
  }
};

inline ScratchFiles& scratch_files() {
  static ScratchFiles files;
  return files;
}

// Writes [data, data+size) to a per-process scratch file (suffix kept, e.g. ".gz"
// matters to the IDX reader) and returns its path; the file is reused on every call and
// removed at exit.
inline std::string scratch_file(const std::uint8_t* data, std::size_t size, const std::string& tag,
                                const std::string& suffix = "") {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/taihu-fuzz-" + tag + "-" +
                     std::to_string(::getpid()) + suffix;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::abort();  // the harness's own failure, not the reader's
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  scratch_files().paths.insert(path);
  return path;
}

}  // namespace taihu::fuzz
