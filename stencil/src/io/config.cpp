// INI-style run configuration (see config.hpp).
#include "taihu/stencil/config.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "taihu/arch/error.hpp"

namespace taihu::stencil {
namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool parse_number(const std::string& text, double& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(t.c_str(), &end);
  return errno == 0 && end == t.c_str() + t.size() && std::isfinite(out);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string p;
  while (std::getline(ss, p, sep)) parts.push_back(trim(p));
  return parts;
}

}  // namespace

Config Config::parse_text(const std::string& text, const std::string& origin) {
  Config c;
  c.origin_ = origin;
  std::istringstream in(text);
  std::string line, section;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const auto hash = line.find_first_of("#;");
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string where = origin + ":" + std::to_string(lineno);
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3)
        throw Error("taihu: " + where + ": malformed section header '" + line + "' (expected [name])");
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos) throw Error("taihu: " + where + ": expected 'key = value', got '" + line + "'");
    const std::string key = trim(line.substr(0, eq));
    if (key.empty()) throw Error("taihu: " + where + ": missing key before '='");
    const std::string full = section.empty() ? key : section + "." + key;
    if (c.values_.count(full))
      throw Error("taihu: " + where + ": key '" + full + "' already set on line " + std::to_string(c.values_[full].line));
    c.values_[full] = {trim(line.substr(eq + 1)), lineno, ""};
  }
  return c;
}

Config Config::parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("taihu: cannot open config file '" + path + "': " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_text(ss.str(), path);
}

bool Config::has(const std::string& key) const { return values_.count(key) != 0; }

const Config::Entry& Config::entry(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) {
    const auto dot = key.find('.');
    throw Error("taihu: " + origin_ + ": missing key '" + key + "'" +
                (dot != std::string::npos ? " (section [" + key.substr(0, dot) + "], key " + key.substr(dot + 1) + ")" : ""));
  }
  return it->second;
}

std::string Config::where(const std::string& key) const {
  const Entry& e = entry(key);
  std::string out;
  if (e.line > 0) {
    out = origin_ + ':' + std::to_string(e.line);
  } else {
    out = "command line";
    if (!e.flag.empty()) out += ' ' + e.flag;
  }
  out += ": key '";
  out += key;
  out += '\'';
  return out;
}

std::string Config::get_string(const std::string& key) const {
  const Entry& e = entry(key);
  if (e.value.empty()) throw Error("taihu: " + where(key) + " is empty");
  return e.value;
}
std::string Config::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

double Config::get_double(const std::string& key) const {
  double v;
  if (!parse_number(entry(key).value, v))
    throw Error("taihu: " + where(key) + ": expected a finite number, got '" + entry(key).value + "'");
  return v;
}
double Config::get_double(const std::string& key, double fallback) const { return has(key) ? get_double(key) : fallback; }

long Config::get_long(const std::string& key) const {
  const double v = get_double(key);
  if (v != std::floor(v) || std::abs(v) > 1e15)
    throw Error("taihu: " + where(key) + ": expected an integer, got '" + entry(key).value + "'");
  return static_cast<long>(v);
}
long Config::get_long(const std::string& key, long fallback) const { return has(key) ? get_long(key) : fallback; }

bool Config::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const std::string v = entry(key).value;
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  throw Error("taihu: " + where(key) + ": expected true or false, got '" + v + "'");
}

std::vector<long> Config::get_shape(const std::string& key) const {
  std::string v = get_string(key);
  for (char& ch : v)
    if (ch == 'x' || ch == 'X') ch = ',';
  std::vector<long> out;
  for (const auto& p : split(v, ',')) {
    double d;
    if (!parse_number(p, d) || d < 1 || d != std::floor(d) || d > 1e15)  // 1e15: fits a long
      throw Error("taihu: " + where(key) + ": expected sizes like 1601x401, got '" + entry(key).value + "'");
    out.push_back(static_cast<long>(d));
  }
  return out;
}

std::vector<double> Config::get_doubles(const std::string& key) const {
  std::vector<double> out;
  for (const auto& p : split(get_string(key), ',')) {
    double d;
    if (!parse_number(p, d))
      throw Error("taihu: " + where(key) + ": expected numbers separated by commas, got '" + entry(key).value + "'");
    out.push_back(d);
  }
  return out;
}

std::vector<double> Config::get_range(const std::string& key) const {
  const std::string v = get_string(key);
  if (v.find(':') == std::string::npos) return get_doubles(key);
  const auto parts = split(v, ':');
  double a, b, s;
  if (parts.size() != 3 || !parse_number(parts[0], a) || !parse_number(parts[1], b) || !parse_number(parts[2], s) || !(s > 0) || b < a)
    throw Error("taihu: " + where(key) + ": expected first:last:step with step > 0, got '" + v + "'");
  // The count is checked before anything is allocated: '0:1e300:1e-300' is not a survey.
  constexpr double max_values = 1e7;
  const double count = std::floor((b - a) / s * (1 + 1e-12)) + 1;
  if (!std::isfinite(a) || !std::isfinite(b) || !(count <= max_values))
    throw Error("taihu: " + where(key) + ": '" + v + "' gives more than 10000000 values");
  std::vector<double> out;
  for (long i = 0; a + double(i) * s <= b + 1e-9 * s; ++i) out.push_back(a + double(i) * s);
  return out;
}

double Config::get_positive(const std::string& key) const {
  const double v = get_double(key);
  if (!(v > 0)) throw Error("taihu: " + where(key) + ": must be > 0, got '" + entry(key).value + "'");
  return v;
}
double Config::get_positive(const std::string& key, double fallback) const {
  return has(key) ? get_positive(key) : fallback;
}

std::vector<double> Config::get_positive_doubles(const std::string& key) const {
  std::vector<double> out = get_doubles(key);
  for (double v : out)
    if (!(v > 0)) throw Error("taihu: " + where(key) + ": every value must be > 0, got '" + entry(key).value + "'");
  return out;
}

void Config::set(const std::string& key, const std::string& value, const std::string& flag) {
  values_[key] = {trim(value), 0, flag};
}

void Config::check_known(const std::set<std::string>& known) const {
  for (const auto& [key, e] : values_)
    if (!known.count(key)) {
      std::string where = origin_;
      if (e.line) {
        where += ':';
        where += std::to_string(e.line);
      }
      throw Error("taihu: " + where + ": unknown key '" + key + "'" + (e.flag.empty() ? "" : " (" + e.flag + ")"));
    }
}

std::string Config::resolve_path(const std::string& path) const {
  if (path.empty() || path.front() == '/') return path;
  const auto slash = origin_.rfind('/');
  if (slash == std::string::npos || origin_.front() == '<') return path;
  return origin_.substr(0, slash + 1) + path;
}

}  // namespace taihu::stencil
