// libFuzzer harness: the taihu-tune DSL, lexer + parser (taihu::autotune::parse_spec)
// and the analysis that binds it (taihu::autotune::Problem, dims from the text only).
// A taihu::Error is a clean rejection (file:line:column); a crash is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/autotune/parser.hpp"
#include "taihu/autotune/problem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    taihu::autotune::Spec spec = taihu::autotune::parse_spec(text, "fuzz.tdsl");
    taihu::autotune::Problem problem(std::move(spec), {}, {});
  } catch (const taihu::Error&) {
  }
  return 0;
}
