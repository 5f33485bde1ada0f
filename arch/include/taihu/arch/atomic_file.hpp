// Atomic output, the project's one temp + fsync + rename rule: a file (or a directory
// such as an LMDB database) appears under its final name whole or not at all.
//
// Everything is written to a temporary beside the target, "<path>.tmp.<pid>" (or
// "<path>.tmp.<pid>.<n>" when that name is taken, e.g. by another thread of this
// process writing the same path; the temporary is created exclusively, never shared).
// commit() makes the bytes durable (fsync) and renames the temporary over <path>.
// Until commit() succeeds the final name is untouched (an existing file keeps its old
// contents); a temporary that is not committed (a failed write, an exception, early
// destruction, discard()) is removed. Errors are taihu::Error naming <path> and the
// OS's reason (strerror); destructors never throw.
//
//   AtomicOutputFile   streams bytes through write() (buffered) - most writers.
//   AtomicTempPath     only the temporary's name and the commit/discard rule, for a
//                      library that opens the file itself (segyio, liblmdb).
//   write_file_atomic  one whole buffer.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace taihu {

class AtomicTempPath {
 public:
  enum class Kind { file, directory };
  // Creates an empty temporary (a file, or a directory for Kind::directory) beside
  // `path`; throws taihu::Error "cannot create '<path>': <reason>".
  explicit AtomicTempPath(std::string path, Kind kind = Kind::file);
  ~AtomicTempPath();  // discard() unless committed
  AtomicTempPath(const AtomicTempPath&) = delete;
  AtomicTempPath& operator=(const AtomicTempPath&) = delete;

  const std::string& path() const noexcept { return path_; }
  const std::string& temp_path() const noexcept { return temp_; }
  bool committed() const noexcept { return committed_; }

  // A file: fsyncs what its writer left in temp_path() (closed by then), then renames
  // it over path(). A directory: renames it (its writer syncs its own files, as liblmdb's
  // transaction commit does). On failure the temporary is removed and taihu::Error names
  // path() and the reason; a second commit() is an Error too.
  void commit();
  // Removes the temporary (recursively for a directory) unless committed; never throws.
  void discard() noexcept;

 private:
  friend class AtomicOutputFile;
  AtomicTempPath(std::string path, Kind kind, int* open_fd);
  void rename_into_place();

  std::string path_;
  std::string temp_;
  Kind kind_;
  bool committed_ = false;
  bool discarded_ = false;
};

class AtomicOutputFile {
 public:
  // Creates the temporary; throws taihu::Error "cannot create '<path>': <reason>".
  explicit AtomicOutputFile(std::string path);
  ~AtomicOutputFile();  // discard() unless committed
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  // Appends bytes (small pieces are gathered in a 64 KiB buffer, large ones go straight
  // to the file). A failed write removes the temporary and throws "cannot write
  // '<path>': <reason>"; the object is then spent (later calls throw).
  void write(const void* data, std::size_t size);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }

  // Writes the buffer, fsyncs, closes and renames over path(). A full disk or failing
  // device often shows only at fsync/close: those failures are errors too.
  void commit();
  void discard() noexcept;

  const std::string& path() const noexcept { return temp_.path(); }
  const std::string& temp_path() const noexcept { return temp_.temp_path(); }

 private:
  void write_through(const char* data, std::size_t size);
  void flush_buffer();
  [[noreturn]] void fail(const char* what, int err);
  void require_open(const char* operation) const;

  int fd_ = -1;
  AtomicTempPath temp_;
  std::vector<char> buffer_;
};

// The bytes reach <path> whole or not at all (AtomicOutputFile, one write, commit).
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace taihu
