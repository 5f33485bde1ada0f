// Atomic output: write to "<path>.tmp.<pid>" then rename over <path>, so a reader (or a
// crash) never sees a half-written file (private).
#pragma once
#include <string>

namespace taihu::stencil::io {

std::string temp_path_for(const std::string& path);
// Renames temp over path; throws taihu::Error naming both on failure (and removes temp).
void commit_temp(const std::string& temp, const std::string& path);
// Removes temp (after a failure); never throws.
void discard_temp(const std::string& temp) noexcept;

}  // namespace taihu::stencil::io
