// write_file_atomic: the bytes reach <path> whole or not at all. They go to
// "<path>.tmp.<pid>" (written, fsync'ed, closed), which is then renamed over <path>;
// on any failure the temp file is removed and taihu::Error names <path> and the OS's
// reason. A reader (or a crash) never sees a truncated file under the final name.
#pragma once
#include <string>
#include <string_view>

namespace taihu {

void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace taihu
