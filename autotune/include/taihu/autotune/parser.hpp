// Parsing taihu-tune operator specs. Errors throw taihu::Error whose message starts
// with "file:line:column: " and says what was expected.
#pragma once
#include <string>

#include "taihu/autotune/ast.hpp"

namespace taihu::autotune {

// Parses spec text; `file` names the origin in error messages.
Spec parse_spec(const std::string& text, const std::string& file);

// Reads and parses a file (taihu::Error if it cannot be read).
Spec parse_spec_file(const std::string& path);

}  // namespace taihu::autotune
