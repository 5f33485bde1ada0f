// taihu-caffe's flags as gflags parses Caffe's. See cli/flags.hpp.
#include "cli/flags.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "taihu/caffe/log.hpp"

namespace taihu::caffe::cli {
namespace {

enum class Kind { string, int32, boolean };

struct FlagSpec {
  const char* name;
  Kind kind;
  bool caffe;  // defined by Caffe's tools/caffe.cpp (known to every command)
  const char* help;
};

constexpr FlagSpec kFlags[] = {
    {"gpu", Kind::string, true, "Optional; run in GPU mode on the given device IDs separated by ',', or 'all'."},
    {"solver", Kind::string, true, "The solver definition protocol buffer text file."},
    {"model", Kind::string, true, "The model definition protocol buffer text file."},
    {"phase", Kind::string, true, "Optional; network phase (TRAIN or TEST). Only used for 'time'."},
    {"level", Kind::int32, true, "Optional; network level."},
    {"stage", Kind::string, true, "Optional; network stages (not to be confused with phase), separated by ','."},
    {"snapshot", Kind::string, true, "Optional; the snapshot solver state to resume training."},
    {"weights", Kind::string, true,
     "Optional; the pretrained weights to initialize finetuning, separated by ','. Cannot be set with snapshot."},
    {"iterations", Kind::int32, true, "The number of iterations to run."},
    {"sigint_effect", Kind::string, true, "Optional; action on SIGINT: snapshot, stop or none."},
    {"sighup_effect", Kind::string, true, "Optional; action on SIGHUP: snapshot, stop or none."},
    {"help", Kind::boolean, false, "Show the commands and flags."},
    // taihu's own
    {"compress", Kind::string, false, "Data-parallel gradient compression: none, topk:F or threshold:T."},
    {"bucket_mb", Kind::string, false, "Data-parallel allreduce bucket size in MiB."},
    {"allreduce", Kind::string, false, "Data-parallel allreduce algorithm."},
    {"first", Kind::string, false, "First image to convert."},
    {"count", Kind::string, false, "Number of images."},
    {"backend", Kind::string, false, "Database backend (lmdb)."},
    {"seed", Kind::string, false, "Random seed of the synthetic digits."},
};

const FlagSpec* find_flag(const std::string& name) {
  for (const FlagSpec& f : kFlags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// gflags' message, with the nearest of `candidates` as a hint for a likely typo.
template <typename Names>
std::string unknown_flag(const std::string& name, const Names& candidates) {
  std::string msg = "unknown command line flag '" + name + "'";
  std::string nearest;
  std::size_t best = 3;
  for (const auto& k : candidates) {
    const std::size_t d = edit_distance(name, k);
    if (d < best) best = d, nearest = k;
  }
  if (!nearest.empty()) msg += " (did you mean --" + nearest + "?)";
  return msg;
}

// gflags' integer syntax: base 10, or base 16 after a leading "0x" (a leading 0 is not octal).
bool parse_integer(const std::string& v, long long* out) {
  if (v.empty()) return false;
  const int base = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') ? 16 : 10;
  errno = 0;
  char* end = nullptr;
  *out = std::strtoll(v.c_str(), &end, base);
  return errno == 0 && *end == '\0';
}

bool parses_as_int32(const std::string& v) {
  long long x = 0;
  return parse_integer(v, &x) && x >= INT_MIN && x <= INT_MAX;
}

}  // namespace

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = flags.find(name);
  return it == flags.end() ? fallback : it->second;
}

long Args::get_int(const std::string& name, long fallback) const {
  auto it = flags.find(name);
  if (it == flags.end()) return fallback;
  long long v = 0;
  if (parse_integer(it->second, &v) && v >= std::numeric_limits<long>::min() && v <= std::numeric_limits<long>::max()) {
    return static_cast<long>(v);
  }
  throw Error("--" + name + "=" + it->second + ": not an integer");
}

long Args::get_int(const std::string& name, long fallback, long lo, long hi) const {
  if (!has(name)) return fallback;  // the command's own default
  const long v = get_int(name, fallback);
  if (v < lo || v > hi) {
    throw Error("--" + name + "=" + get(name) + ": must be " +
                (hi == std::numeric_limits<long>::max() ? ">= " + std::to_string(lo)
                                                        : "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"));
  }
  return v;
}

void Args::allow(const char* command, std::initializer_list<const char*> used, bool takes_positional) const {
  auto reads = [&](const std::string& name) {
    return std::any_of(used.begin(), used.end(), [&](const char* u) { return name == u; });
  };
  for (const auto& [name, value] : flags) {
    if (reads(name) || name == "help") continue;
    const FlagSpec* f = find_flag(name);
    if (f && f->caffe) {
      log_warning("--" + name + " is not used by " + command + " (ignored, as Caffe does)");
      continue;
    }
    std::vector<std::string> candidates;
    for (const FlagSpec& k : kFlags) {
      if (k.caffe || reads(k.name)) candidates.emplace_back(k.name);
    }
    std::string msg = unknown_flag(name, candidates);
    if (f) msg += " (--" + name + " belongs to another taihu-caffe command; `taihu-caffe help` lists them)";
    throw FlagError(msg);
  }
  if (!takes_positional && !positional.empty()) {
    throw Error(std::string(command) + " takes no positional arguments (got '" + positional.front() + "')");
  }
}

Args parse_args(int argc, char** argv, int first) {
  Args a;
  for (int i = first; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--") {  // gflags: everything after is positional
      for (++i; i < argc; ++i) a.positional.emplace_back(argv[i]);
      break;
    }
    if (s.size() < 2 || s[0] != '-') {
      a.positional.push_back(s);
      continue;
    }
    std::string name = s.substr(s[1] == '-' ? 2 : 1);
    std::string value;
    const auto eq = name.find('=');
    const bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "h") name = "help";
    const FlagSpec* f = find_flag(name);
    if (!f) {
      std::vector<std::string> all;
      for (const FlagSpec& k : kFlags) all.emplace_back(k.name);
      throw FlagError(unknown_flag(name, all));
    }
    if (f->kind == Kind::boolean) {
      if (!has_value) value = "true";
      if (value != "true" && value != "false" && value != "1" && value != "0") {
        throw FlagError("illegal value '" + value + "' specified for bool flag '" + name + "'");
      }
      if (value == "false" || value == "0") {
        a.flags.erase(name);
        continue;
      }
    } else if (!has_value) {
      // gflags takes the next argument as the value, whatever it looks like.
      if (i + 1 >= argc) throw FlagError("flag '" + name + "' is missing its argument; flag description: " + f->help);
      value = argv[++i];
    }
    if (f->kind == Kind::int32 && !parses_as_int32(value)) {
      throw FlagError("illegal value '" + value + "' specified for int32 flag '" + name + "'");
    }
    a.flags[name] = value;
  }
  return a;
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace taihu::caffe::cli
