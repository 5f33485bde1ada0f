// libFuzzer harness: a taihu-tune log (JSON lines) through taihu::autotune::load_log and
// best_records, the path of `taihu-tune best` and of resuming a run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/autotune/records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = taihu::fuzz::scratch_file(data, size, "tunelog", ".jsonl");
  try {
    std::vector<std::string> skipped;
    std::vector<taihu::autotune::Record> all = taihu::autotune::load_log(path, &skipped);
    taihu::autotune::best_records(all);
  } catch (const taihu::Error&) {
  }
  return 0;
}
