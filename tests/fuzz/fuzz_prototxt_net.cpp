// libFuzzer harness: prototxt text format -> NetParameter, the path taihu-caffe takes
// for --model (taihu::caffe::parse_text). A taihu::Error is a clean rejection; a crash,
// ASan or UBSan report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/proto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  taihu::caffe::proto::NetParameter net;
  try {
    taihu::caffe::parse_text(text, "fuzz.prototxt", &net);
  } catch (const taihu::Error&) {
  }
  return 0;
}
