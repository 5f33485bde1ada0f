// Tuning records: measured best algorithms that steer dnn's `automatic` choice.
// autotune/ writes them; dnn reads the file named by TAIHU_TUNING_RECORDS (once, at
// the first lookup). Format: JSON lines, one measurement per line, for example
//
//   {"format":2,"op":"conv2d","key":"mb1ic64ih56oc64oh56kh3ph1","dir":"forward","isa":"avx2","threads":2,"algo":"winograd_4x4","median_s":0.00031}
//
//   format    2: algo names an entry of dnn's implementation list (to_string(ConvAlgo)).
//             Absent: format 1, written before the direct kernels were separate entries;
//             its "direct" means conv_direct_family_entry() (conv.hpp), the kernel the
//             one direct object ran for that shape. Other values are an error.
//   op        "conv2d" (other ops may add their own)
//   key       ConvDesc::str() of the problem
//   dir       "forward" | "backward_data" | "backward_weights" (optional: absent means forward)
//   isa       arch::isa_name() of the level in force when measured ("generic"|"avx2"|"avx512")
//   threads   thread count when measured (integer >= 1)
//   algo      the entry's name (to_string(ConvAlgo)); an unknown name is an error
//   median_s  median run time in seconds (number > 0)
//
// Several lines may share (op, key, dir, isa, threads): the one with the smallest
// median_s wins. bench_conv --tune, taihu-tune best --dnn-records and programs calling
// conv_tuning_record() all write this format through format_tuning_record(). Blank lines and lines starting with '#' are ignored; any other
// malformed line throws taihu::Error naming file:line. Unknown extra fields are ignored.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "taihu/dnn/conv.hpp"

namespace taihu::dnn {

struct TuningRecord {
  std::string op = "conv2d";
  std::string key;
  std::string dir = "forward";
  std::string isa;
  int threads = 1;
  std::string algo;
  double median_s = 0.0;
  int format = 2;  // 1: read from a line without "format" (see above)
};

// The record of one measured entry for (d, dir) at the ISA and thread count given.
TuningRecord conv_tuning_record(const ConvDesc& d, ConvDirection dir, const std::string& isa, int threads,
                                ConvAlgo algo, double median_s);

class TuningRecords {
 public:
  // Parses a JSON-lines file; throws taihu::Error ("path:line: ...") on bad input or
  // an unreadable file.
  static TuningRecords load(const std::string& path);
  // Parses text (source names the origin in error messages).
  static TuningRecords parse(const std::string& text, const std::string& source);

  // Keeps the faster of two records with the same (op, key, dir, isa, threads).
  void add(const TuningRecord& r);
  // The best record for the lookup key, if any.
  std::optional<TuningRecord> best(const std::string& op, const std::string& key,
                                   const std::string& dir, const std::string& isa,
                                   int threads) const;
  std::size_t size() const { return records_.size(); }
  const std::vector<TuningRecord>& records() const { return records_; }

 private:
  std::vector<TuningRecord> records_;  // one per distinct lookup key
};

// One line of the format above (no trailing newline).
std::string format_tuning_record(const TuningRecord& r);

// Writes the records to `path` atomically (temp file + rename), one line each.
void save_tuning_records(const TuningRecords& records, const std::string& path);

// The records named by TAIHU_TUNING_RECORDS (empty when unset), loaded once per
// process. Throws taihu::Error if the variable names a bad file.
const TuningRecords& tuning_records_from_env();

}  // namespace taihu::dnn
