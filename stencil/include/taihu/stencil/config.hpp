// The run configuration file of taihu-seismic: INI style, documented in
// examples/seismic/README.md.
//
//   # comment
//   [model]
//   vp = ../shared/data/marmousi/vp_marmousi_bi
//   shape = 1601x401
//   ...
//
// Keys are "section.key". Every error names file:line (parse errors) or the key
// (missing or malformed values).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace taihu::stencil {

class Config {
 public:
  static Config parse_file(const std::string& path);
  static Config parse_text(const std::string& text, const std::string& origin = "<text>");

  bool has(const std::string& key) const;
  // Typed getters: throw taihu::Error "file:line: key 'model.dx': expected a number, got 'x'"
  // or "file: missing key 'model.vp'" (required forms) naming the key.
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  double get_double(const std::string& key) const;
  double get_double(const std::string& key, double fallback) const;
  long get_long(const std::string& key, long fallback) const;
  long get_long(const std::string& key) const;
  bool get_bool(const std::string& key, bool fallback) const;
  // "1601x401" or "1601,401" -> {1601, 401}
  std::vector<long> get_shape(const std::string& key) const;
  // "0:12000:500" -> 0, 500, ..., 12000; "100,200" -> {100, 200}; "300" -> {300}
  std::vector<double> get_range(const std::string& key) const;
  std::vector<double> get_doubles(const std::string& key) const;
  // Finite and > 0 (times, spacings, frequencies, scales): "... must be > 0, got '-1'".
  double get_positive(const std::string& key) const;
  double get_positive(const std::string& key, double fallback) const;
  std::vector<double> get_positive_doubles(const std::string& key) const;

  // Sets or overrides a value (command-line overrides): "section.key". `flag` is the
  // command-line option that set it ("--dt"), named in errors about the value.
  void set(const std::string& key, const std::string& value, const std::string& flag = "");
  // Where a key's value came from, for messages: "run.ini:12: key 'simulation.dt'" or
  // "command line --dt: key 'simulation.dt'".
  std::string where(const std::string& key) const;
  // Throws naming file:line for any key not in `known` (catches typos).
  void check_known(const std::set<std::string>& known) const;
  const std::string& origin() const { return origin_; }
  // The directory of the config file, for resolving relative paths.
  std::string resolve_path(const std::string& path) const;

 private:
  struct Entry {
    std::string value;
    int line = 0;
    std::string flag;
  };
  const Entry& entry(const std::string& key) const;
  std::string origin_;
  std::map<std::string, Entry> values_;
};

}  // namespace taihu::stencil
