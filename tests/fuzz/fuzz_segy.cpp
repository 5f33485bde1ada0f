// libFuzzer harness: a SEG-Y file through taihu::stencil::read_segy (the reader of
// recorded shots and of SEG-Y velocity models), via segyio. A taihu::Error is a clean
// rejection; a crash is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/segy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = taihu::fuzz::scratch_file(data, size, "segy", ".segy");
  try {
    taihu::stencil::SegyTraces t = taihu::stencil::read_segy(path);
    (void)t;
  } catch (const taihu::Error&) {
  }
  return 0;
}
