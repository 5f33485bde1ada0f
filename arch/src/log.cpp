// TAIHU_VERBOSE logging to stderr.
#include "taihu/arch/log.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace taihu::arch {

bool verbose_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TAIHU_VERBOSE");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void log_verbose(const char* format, ...) {
  if (!verbose_enabled()) return;
  char line[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  std::fprintf(stderr, "taihu: %s\n", line);
}

}  // namespace taihu::arch
