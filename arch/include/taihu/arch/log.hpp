// TAIHU_VERBOSE=1 logging: decisions (ISA, algorithm, block sizes, thread count) go to
// stderr prefixed "taihu:", so a user can see why something is fast or slow.
#pragma once

namespace taihu::arch {

// True when TAIHU_VERBOSE is set to a non-zero value (read once).
bool verbose_enabled();

// printf-style; prints only when verbose_enabled().
void log_verbose(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace taihu::arch
