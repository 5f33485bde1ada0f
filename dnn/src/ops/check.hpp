// Argument checks shared by the operators: each throws taihu::Error whose message
// names the operator (`what`) and the argument, e.g.
//   "taihu::dnn::pooling_forward: kernel_h is 0, expected >= 1".
#pragma once
#include <initializer_list>
#include <string>
#include <utility>

#include "taihu/arch/error.hpp"
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn::ops {

[[noreturn]] inline void fail(const char* what, const std::string& message) {
  throw Error(std::string("taihu::dnn::") + what + ": " + message);
}

inline void check_positive(const char* what, const char* name, index_t value) {
  if (value < 1) fail(what, std::string(name) + " is " + std::to_string(value) + ", expected >= 1");
}

inline void check_non_negative(const char* what, const char* name, index_t value) {
  if (value < 0) fail(what, std::string(name) + " is " + std::to_string(value) + ", expected >= 0");
}

inline void check_pointer(const char* what, const char* name, const void* p) {
  if (p == nullptr) fail(what, std::string(name) + " is null");
}

// Checks each named pointer is non-null (nothing to check when count == 0).
inline void check_pointers(const char* what, index_t count,
                           std::initializer_list<std::pair<const char*, const void*>> ptrs) {
  check_non_negative(what, "count", count);
  if (count == 0) return;
  for (const auto& [name, p] : ptrs) check_pointer(what, name, p);
}

}  // namespace taihu::dnn::ops
