// taihu::Error: the one exception type taihu throws for user errors (bad arguments,
// bad environment variables, bad files). The message names what was wrong.
#pragma once
#include <stdexcept>
#include <string>

namespace taihu {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace taihu
