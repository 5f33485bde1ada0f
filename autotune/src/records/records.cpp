// JSON-lines tuning log (see records.hpp), written with nlohmann::json.
#include "taihu/autotune/records.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <unistd.h>

#include "taihu/arch/error.hpp"

namespace taihu::autotune {

using nlohmann::json;

std::string Record::key() const {
  return op + "|" + spec_hash + "|" + shape + "|" + isa + "|" + std::to_string(threads) + "|" + backend;
}

std::string to_json_line(const Record& r) {
  json j;
  j["format"] = kRecordFormat;
  j["op"] = r.op;
  j["spec_hash"] = r.spec_hash;
  j["shape"] = r.shape;
  j["isa"] = r.isa;
  j["threads"] = r.threads;
  j["backend"] = r.backend;
  j["schedule"] = r.schedule;
  j["ok"] = r.ok;
  if (!r.ok) j["error"] = r.error;
  j["median_s"] = r.median_s;
  j["spread"] = r.spread;
  j["repeats"] = r.repeats;
  if (r.predicted_s >= 0) j["predicted_s"] = r.predicted_s;
  j["gflops"] = r.gflops;
  j["seed"] = r.seed;
  j["trial"] = r.trial;
  j["versions"] = {{"taihu", r.taihu_version}, {"halide", r.halide_version}, {"compiler", r.compiler}};
  j["time"] = r.time;
  return j.dump();
}

Record from_json_line(const std::string& line, const std::string& where) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    throw Error(where + ": not valid JSON (" + e.what() + ")");
  }
  try {
    if (!j.is_object()) throw Error(where + ": a record must be a JSON object");
    const std::string format = j.at("format").get<std::string>();
    if (format != kRecordFormat) throw Error(where + ": unknown record format '" + format + "' (this taihu-tune reads " + kRecordFormat + ")");
    Record r;
    r.op = j.at("op").get<std::string>();
    r.spec_hash = j.at("spec_hash").get<std::string>();
    r.shape = j.at("shape").get<std::string>();
    r.isa = j.at("isa").get<std::string>();
    r.threads = j.at("threads").get<int>();
    r.backend = j.at("backend").get<std::string>();
    r.schedule = j.at("schedule").get<std::map<std::string, std::string>>();
    r.ok = j.at("ok").get<bool>();
    r.error = j.value("error", "");
    r.median_s = j.at("median_s").get<double>();
    r.spread = j.value("spread", 0.0);
    r.repeats = j.value("repeats", 0);
    r.predicted_s = j.value("predicted_s", -1.0);
    r.gflops = j.value("gflops", 0.0);
    r.seed = j.value("seed", std::uint64_t{0});
    r.trial = j.value("trial", 0);
    if (j.contains("versions")) {
      const auto& v = j["versions"];
      r.taihu_version = v.value("taihu", "");
      r.halide_version = v.value("halide", "");
      r.compiler = v.value("compiler", "");
    }
    r.time = j.value("time", "");
    if (r.ok && !(r.median_s > 0 && std::isfinite(r.median_s))) throw Error(where + ": median_s must be > 0 for a successful record");
    if (r.ok && !(r.gflops <= kMaxPlausibleGflopsPerThread * std::max(1, r.threads)))
      throw Error(where + ": implausible successful record (" + std::to_string(r.gflops) + " GFLOP/s)");
    return r;
  } catch (const json::exception& e) {
    throw Error(where + ": bad record (" + e.what() + ")");
  }
}

std::vector<Record> load_log(const std::string& path) {
  std::vector<Record> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    out.push_back(from_json_line(line, path + ":" + std::to_string(n)));
  }
  return out;
}

void append_record(const std::string& path, const Record& r) {
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error("cannot append to log '" + path + "'");
  out << to_json_line(r) << '\n';
  out.flush();
  if (!out) throw Error("write to log '" + path + "' failed");
}

std::vector<Record> best_records(const std::vector<Record>& all) {
  std::vector<Record> best;
  std::map<std::string, std::size_t> at;
  for (const auto& r : all) {
    if (!r.ok) continue;
    auto it = at.find(r.key());
    if (it == at.end()) {
      at[r.key()] = best.size();
      best.push_back(r);
    } else if (r.median_s < best[it->second].median_s) {
      best[it->second] = r;
    }
  }
  return best;
}

void write_lines_atomic(const std::string& path, const std::vector<std::string>& lines) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw Error("cannot write '" + tmp + "'");
    for (const auto& l : lines) out << l << '\n';
    out.flush();
    if (!out) throw Error("write to '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

std::string spec_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace taihu::autotune
