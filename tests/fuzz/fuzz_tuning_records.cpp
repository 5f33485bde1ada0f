// libFuzzer harness: a dnn tuning-records file (JSON lines, TAIHU_TUNING_RECORDS)
// through taihu::dnn::TuningRecords::parse, then every record written back with
// format_tuning_record and parsed again: the round trip must give the same record
// (a silent change of algorithm or timing would steer dnn wrongly). A taihu::Error is
// a clean rejection of the input; a crash or a round-trip mismatch is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace {
bool same(const taihu::dnn::TuningRecord& a, const taihu::dnn::TuningRecord& b) {
  return a.op == b.op && a.key == b.key && a.dir == b.dir && a.isa == b.isa && a.threads == b.threads &&
         a.algo == b.algo && a.median_s == b.median_s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  taihu::dnn::TuningRecords records;
  try {
    records = taihu::dnn::TuningRecords::parse(text, "fuzz.jsonl");
  } catch (const taihu::Error&) {
    return 0;
  }
  for (const auto& r : records.records()) {
    const auto found = records.best(r.op, r.key, r.dir, r.isa, r.threads);
    if (!found || !same(*found, r)) std::abort();
    taihu::dnn::TuningRecords again;
    try {
      again = taihu::dnn::TuningRecords::parse(taihu::dnn::format_tuning_record(r), "round-trip");
    } catch (const taihu::Error&) {
      std::abort();  // a record the reader accepted must survive its own writer
    }
    if (again.size() != 1 || !same(again.records()[0], r)) std::abort();
  }
  return 0;
}
