// Tuning records: JSON-lines reader/writer and the TAIHU_TUNING_RECORDS cache
// (format documented in taihu/dnn/tuning_records.hpp). Parsing uses nlohmann::json.
#include "taihu/dnn/tuning_records.hpp"

#include "taihu/arch/atomic_file.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "taihu/arch/error.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::dnn {

namespace {
bool same_key(const TuningRecord& a, const TuningRecord& b) {
  return a.op == b.op && a.key == b.key && a.dir == b.dir && a.isa == b.isa &&
         a.threads == b.threads;
}

TuningRecord parse_line(const std::string& line, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw Error("taihu: " + where + ": not a JSON object: " + e.what());
  }
  if (!j.is_object()) throw Error("taihu: " + where + ": not a JSON object");
  auto str = [&](const char* name, bool required, const std::string& fallback) {
    if (!j.contains(name)) {
      if (required) throw Error("taihu: " + where + ": missing field \"" + name + "\"");
      return fallback;
    }
    if (!j[name].is_string()) throw Error("taihu: " + where + ": field \"" + name + "\" must be a string");
    return j[name].get<std::string>();
  };
  TuningRecord r;
  r.op = str("op", true, "");
  r.key = str("key", true, "");
  r.dir = str("dir", false, "forward");
  r.isa = str("isa", true, "");
  r.algo = str("algo", true, "");
  // A count past INT_MAX would wrap in the int below (4294967297 -> 1: a silent wrong key).
  if (!j.contains("threads") || !j["threads"].is_number_integer() || j["threads"].get<long>() < 1 ||
      j["threads"].get<long>() > std::numeric_limits<int>::max())
    throw Error("taihu: " + where + ": field \"threads\" must be an integer from 1 to " +
                std::to_string(std::numeric_limits<int>::max()));
  r.threads = static_cast<int>(j["threads"].get<long>());
  if (!j.contains("median_s") || !j["median_s"].is_number() || !(j["median_s"].get<double>() > 0))
    throw Error("taihu: " + where + ": field \"median_s\" must be a number > 0");
  r.median_s = j["median_s"].get<double>();
  if (j.contains("format")) {
    if (!j["format"].is_number_integer() || (j["format"].get<long>() != 1 && j["format"].get<long>() != 2))
      throw Error("taihu: " + where + ": field \"format\" must be 1 or 2");
    r.format = static_cast<int>(j["format"].get<long>());
  } else {
    r.format = 1;
  }
  if (r.op == "conv2d") {
    try {
      if (parse_conv_algo(r.algo) == ConvAlgo::automatic) throw Error("not an entry");
    } catch (const Error&) {
      throw Error("taihu: " + where + ": unknown convolution algorithm \"" + r.algo + "\"");
    }
  }
  return r;
}
}  // namespace

TuningRecords TuningRecords::parse(const std::string& text, const std::string& source) {
  TuningRecords recs;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    recs.add(parse_line(line, source + ":" + std::to_string(lineno)));
  }
  return recs;
}

TuningRecords TuningRecords::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("taihu: cannot read tuning records file '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

void TuningRecords::add(const TuningRecord& r) {
  for (auto& e : records_)
    if (same_key(e, r)) {
      if (r.median_s < e.median_s) e = r;
      return;
    }
  records_.push_back(r);
}

std::optional<TuningRecord> TuningRecords::best(const std::string& op, const std::string& key,
                                                const std::string& dir, const std::string& isa,
                                                int threads) const {
  for (const auto& e : records_)
    if (e.op == op && e.key == key && e.dir == dir && e.isa == isa && e.threads == threads) return e;
  return std::nullopt;
}

std::string format_tuning_record(const TuningRecord& r) {
  nlohmann::ordered_json j;
  j["format"] = r.format;
  j["op"] = r.op;
  j["key"] = r.key;
  j["dir"] = r.dir;
  j["isa"] = r.isa;
  j["threads"] = r.threads;
  j["algo"] = r.algo;
  j["median_s"] = r.median_s;
  return j.dump();
}

TuningRecord conv_tuning_record(const ConvDesc& d, ConvDirection dir, const std::string& isa, int threads,
                                ConvAlgo algo, double median_s) {
  if (algo == ConvAlgo::automatic) throw Error("taihu: conv_tuning_record: algo must name an entry, not auto");
  TuningRecord r;
  r.key = d.str();
  r.dir = to_string(dir);
  r.isa = isa;
  r.threads = threads;
  r.algo = to_string(algo);
  r.median_s = median_s;
  return r;
}

void save_tuning_records(const TuningRecords& records, const std::string& path) {
  std::string text;
  for (const auto& r : records.records()) text += format_tuning_record(r) + '\n';
  write_file_atomic(path, text);
}

const TuningRecords& tuning_records_from_env() {
  static std::once_flag once;
  static TuningRecords records;
  std::call_once(once, [] {
    const char* path = std::getenv("TAIHU_TUNING_RECORDS");
    if (path == nullptr || *path == '\0') return;
    records = TuningRecords::load(path);
    arch::log_verbose("dnn: loaded %zu tuning records from %s", records.size(), path);
  });
  return records;
}

}  // namespace taihu::dnn
