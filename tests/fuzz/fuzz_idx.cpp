// libFuzzer harness: MNIST IDX images + labels through taihu::caffe::read_idx (the
// reader of the MNIST data layer and convert_mnist). The input is split in two files:
// its first byte (mod 2) picks plain or gzip names, the next two bytes (little-endian)
// give the image file's length, the rest after it is the label file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const bool gz = data[0] & 1;
  std::size_t image_len = static_cast<std::size_t>(data[1]) | (static_cast<std::size_t>(data[2]) << 8);
  data += 3;
  size -= 3;
  image_len = std::min(image_len, size);
  const std::string suffix = gz ? ".gz" : "";
  const std::string images = taihu::fuzz::scratch_file(data, image_len, "idx-images", suffix);
  const std::string labels =
      taihu::fuzz::scratch_file(data + image_len, size - image_len, "idx-labels", suffix);
  try {
    taihu::caffe::ImageSet set = taihu::caffe::read_idx(images, labels);
    if (set.pixels.size() != set.count() * set.image_size()) __builtin_trap();  // inconsistent set
  } catch (const taihu::Error&) {
  }
  return 0;
}
