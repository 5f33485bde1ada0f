// The one test-side way to read an error: run a callable and return the message of the
// taihu::Error it throws, or "" when it throws none. Tests then check the message names
// the offending file, argument or position. Any other exception propagates, so a test
// that expects taihu's error and gets something else fails loudly.
#pragma once
#include <string>
#include <utility>

#include "taihu/arch/error.hpp"

namespace taihu_test {

template <class F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const taihu::Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace taihu_test
