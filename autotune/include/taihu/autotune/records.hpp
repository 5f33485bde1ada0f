// The tuning log: JSON lines, one measurement per line, versioned ("format":
// "taihu-tune/1"). A line carries its key (operator, spec hash, shape, ISA, threads,
// backend), the schedule (knob -> value), its statistic (median) with its spread
// (interquartile range / median, and the lowest and highest sample), which statistic
// it is ("stat": "search" -- the median of one block of repeats, as the search ranks
// by; "confirmed" -- the median of the round medians of the final interleaved
// re-measurement), the seed and trial, and the tool versions. Lines are appended as
// trials finish, so an interrupted run loses nothing and a later run with the same --log resumes from it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace taihu::autotune {

inline constexpr const char* kRecordFormat = "taihu-tune/1";

// No machine this runs on reaches 100 TFLOP/s per thread (the fastest CPU cores do
// ~0.2): a faster "measurement" is a broken timer or a kernel that skipped its work,
// and is neither recorded nor read back as a successful record. The margin leaves
// room for specs whose flop count a code generator simplifies away (A+A+A -> 3*A).
inline constexpr double kMaxPlausibleGflopsPerThread = 1e5;

struct Record {
  std::string op;
  std::string spec_hash;  // fnv1a-64 of the spec text, hex
  std::string shape;      // "M=1024,N=1024,K=1024"
  std::string isa;
  int threads = 1;
  std::string backend;    // "halide" | "cpp"
  std::map<std::string, std::string> schedule;
  bool ok = true;
  std::string error;      // why a candidate failed (ok == false)
  double median_s = 0;
  double spread = 0;      // (75th - 25th percentile) / median of the samples
  double min_s = 0, max_s = 0;  // the lowest and highest sample (0: not recorded)
  int repeats = 0;        // samples: calls in one block (search) or rounds (confirmed)
  std::string stat = "search";  // "search" | "confirmed" (see above)
  double predicted_s = -1;  // cost model prediction (-1: none)
  double gflops = 0;
  std::uint64_t seed = 0;
  int trial = 0;
  std::string taihu_version, halide_version, compiler, time;

  // op|spec_hash|shape|isa|threads|backend: records with equal keys are comparable.
  std::string key() const;
};

std::string to_json_line(const Record& r);
// Throws taihu::Error "where: ..." for malformed JSON, a missing field or an unknown format.
Record from_json_line(const std::string& line, const std::string& where);

// All records of a log; a missing file is an empty log. A bad line (a torn last line
// without its newline, invalid JSON, a missing field, another format version) is
// skipped: its "path:line: why" goes to *skipped, or without `skipped` to stderr as a
// warning (at most 5). Throws taihu::Error when the file cannot be read (strerror) or
// holds bad lines and no record at all (not a log).
std::vector<Record> load_log(const std::string& path, std::vector<std::string>* skipped = nullptr);
// Appends one line (after a '\n' when the file does not end with one); taihu::Error
// with strerror when the write fails, which leaves no fragment of the line behind.
void append_record(const std::string& path, const Record& r);
// The best successful record per key, in first-seen key order: the last "confirmed"
// record of the key when it has one (each confirmation re-measures the previous one's
// pick beside its own candidates), else the fastest "search" record -- the lowest of
// many one-block medians, which reads low (see autotune/README.md).
std::vector<Record> best_records(const std::vector<Record>& all);
// Writes lines (each + '\n') atomically with taihu::write_file_atomic (PATH.tmp.PID,
// fsync, rename); a failed write removes the temp file and throws taihu::Error naming
// PATH and the OS's reason.
void write_lines_atomic(const std::string& path, const std::vector<std::string>& lines);

std::string spec_hash(const std::string& text);
std::string utc_timestamp();

// Lines in the format dnn/ reads (dnn/include/taihu/dnn/tuning_records.hpp) for the
// conv2d spec's algorithm choice: key = ConvDesc::str(), algo direct | explicit_gemm
// (im2col). Records of other operators give no line (empty string).
std::string dnn_conv_line(const Record& r);

}  // namespace taihu::autotune
