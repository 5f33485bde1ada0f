// JSON-lines tuning log (see records.hpp), written with nlohmann::json.
#include "taihu/autotune/records.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>

#include "taihu/arch/atomic_file.hpp"
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
  if (r.min_s > 0) j["min_s"] = r.min_s;
  if (r.max_s > 0) j["max_s"] = r.max_s;
  j["repeats"] = r.repeats;
  j["stat"] = r.stat;
  if (r.predicted_s >= 0) j["predicted_s"] = r.predicted_s;
  j["gflops"] = r.gflops;
  j["seed"] = r.seed;
  j["trial"] = r.trial;
  j["versions"] = {{"taihu", r.taihu_version}, {"halide", r.halide_version}, {"compiler", r.compiler}};
  j["time"] = r.time;
  return j.dump();
}

namespace {

// An integer field: nlohmann's get<int>() of a JSON number like 1e300 or -1.5 is a
// plain cast (undefined behaviour out of range), so the value is checked first.
template <class T>
T integer_field(const json& j, const char* key, T fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  const auto bad = [&] { return Error(where + ": '" + key + "' must be an integer in [" + std::to_string(std::numeric_limits<T>::min()) +
                                      ", " + std::to_string(std::numeric_limits<T>::max()) + "], got " + v.dump()); };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) throw bad();
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0 && !std::numeric_limits<T>::is_signed) throw bad();
    if (std::numeric_limits<T>::is_signed && (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                                              i > static_cast<std::int64_t>(std::numeric_limits<T>::max())))
      throw bad();
    return static_cast<T>(i);
  }
  throw bad();  // a float, string, bool, ...: the writer only writes integers here
}

}  // namespace

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
    if (!j.contains("threads")) throw Error(where + ": bad record (key 'threads' not found)");
    r.threads = integer_field<int>(j, "threads", 0, where);
    r.backend = j.at("backend").get<std::string>();
    r.schedule = j.at("schedule").get<std::map<std::string, std::string>>();
    r.ok = j.at("ok").get<bool>();
    r.error = j.value("error", "");
    r.median_s = j.at("median_s").get<double>();
    r.spread = j.value("spread", 0.0);
    r.min_s = j.value("min_s", 0.0);
    r.max_s = j.value("max_s", 0.0);
    r.repeats = integer_field<int>(j, "repeats", 0, where);
    r.stat = j.value("stat", "search");
    if (r.stat != "search" && r.stat != "confirmed") throw Error(where + ": unknown stat '" + r.stat + "' (search or confirmed)");
    r.predicted_s = j.value("predicted_s", -1.0);
    r.gflops = j.value("gflops", 0.0);
    r.seed = integer_field<std::uint64_t>(j, "seed", 0, where);
    r.trial = integer_field<int>(j, "trial", 0, where);
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

std::vector<Record> load_log(const std::string& path, std::vector<std::string>* skipped) {
  std::vector<Record> out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return out;  // no log yet
    throw Error("cannot read log '" + path + "': " + std::strerror(errno));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("cannot read log '" + path + "': " + std::strerror(errno));
  // Records are independent measurements: a bad line (torn by a crash or a full disk,
  // glued by an old appender, written by a newer version) costs that one record, not
  // the log. A file in which nothing but bad lines stands is not a log at all.
  std::vector<std::string> bad;
  std::size_t others = 0;  // bad lines other than a torn last line
  std::size_t start = 0;
  for (int n = 1; start < text.size(); ++n) {
    std::size_t end = text.find('\n', start);
    const bool torn = end == std::string::npos;
    if (torn) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(n);
    try {
      out.push_back(from_json_line(line, where));
    } catch (const Error& e) {
      bad.push_back(torn ? where + ": torn last line (no newline at the end: an interrupted write?)" : e.what());
      if (!torn) ++others;
    }
  }
  if (out.empty() && others > 0) throw Error(path + ": not a taihu-tune log (" + bad.front() + ")");
  if (skipped) {
    skipped->insert(skipped->end(), bad.begin(), bad.end());
  } else {
    for (std::size_t i = 0; i < bad.size() && i < 5; ++i) std::fprintf(stderr, "taihu-tune: warning: %s; line skipped\n", bad[i].c_str());
    if (bad.size() > 5) std::fprintf(stderr, "taihu-tune: warning: %s: %zu more bad lines skipped\n", path.c_str(), bad.size() - 5);
  }
  return out;
}

namespace {
// Writes all of `data` to fd; false with errno set on failure.
bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}
}  // namespace

void append_record(const std::string& path, const Record& r) {
  std::string line = to_json_line(r) + '\n';
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot append to log '" + path + "': " + std::strerror(errno));
  struct stat st {};
  char last = '\n';
  if (::fstat(fd, &st) != 0 || (st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) != 1)) {
    const int err = errno;
    ::close(fd);
    throw Error("cannot append to log '" + path + "': " + std::strerror(err));
  }
  // A log torn by an interrupted write ends mid-line: start a new line, or this
  // record would be glued onto the fragment and lost with it.
  if (last != '\n') line.insert(line.begin(), '\n');
  if (!write_all(fd, line)) {
    const int err = errno;
    // Leave no fragment of this record behind (unless another writer appended since).
    struct stat now {};
    if (::fstat(fd, &now) == 0 && now.st_size > st.st_size && now.st_size <= st.st_size + static_cast<off_t>(line.size()))
      if (::ftruncate(fd, st.st_size) != 0) { /* the reader skips a torn line */ }
    ::close(fd);
    throw Error("write to log '" + path + "' failed: " + std::strerror(err));
  }
  if (::close(fd) != 0) throw Error("write to log '" + path + "' failed: " + std::strerror(errno));
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
      continue;
    }
    Record& b = best[it->second];
    const bool confirmed = r.stat == "confirmed";
    if (confirmed || (b.stat != "confirmed" && r.median_s < b.median_s)) b = r;  // the last confirmation wins
  }
  return best;
}

void write_lines_atomic(const std::string& path, const std::vector<std::string>& lines) {
  // A whole file: arch's writer (temp + fsync + rename; a failure names the path and the
  // OS's reason and leaves no temp file). append_record keeps its own O_APPEND code: a
  // log line is appended in place, not a file replaced.
  std::string data;
  for (const auto& l : lines) data += l + '\n';
  write_file_atomic(path, data);
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
