// libFuzzer harness: binary protobuf -> NetParameter and SolverState through
// taihu::caffe::read_binary, the reader behind --weights (.caffemodel) and --snapshot
// (.solverstate). A taihu::Error is a clean rejection; a crash is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/proto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = taihu::fuzz::scratch_file(data, size, "caffemodel", ".caffemodel");
  try {
    taihu::caffe::proto::NetParameter net;
    taihu::caffe::read_binary(path, "caffemodel", &net);
  } catch (const taihu::Error&) {
  }
  try {
    taihu::caffe::proto::SolverState state;
    taihu::caffe::read_binary(path, "solverstate", &state);
  } catch (const taihu::Error&) {
  }
  return 0;
}
