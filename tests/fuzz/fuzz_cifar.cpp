// libFuzzer harness: a CIFAR-10 binary batch through taihu::caffe::read_cifar10.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = taihu::fuzz::scratch_file(data, size, "cifar", ".bin");
  try {
    taihu::caffe::ImageSet set = taihu::caffe::read_cifar10(path);
    if (set.pixels.size() != set.count() * set.image_size()) __builtin_trap();  // inconsistent set
  } catch (const taihu::Error&) {
  }
  return 0;
}
