// taihu-caffe's commands (mirroring the `caffe` tool) and their flag parsing.
#pragma once
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace taihu::caffe::cli {

// gflags-style arguments: --name=value, -name=value, --name value; the rest are positional.
struct Args {
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;
  bool has(const std::string& name) const { return flags.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  long get_int(const std::string& name, long fallback) const;  // throws naming the flag
  // get_int, and throws naming the flag and value when a given value is outside [lo, hi].
  long get_int(const std::string& name, long fallback, long lo, long hi) const;
  // gflags rejects a flag it does not define: throws "unknown command line flag
  // 'NAME'" (with the nearest known flag as a hint) for a flag not in `known`, and
  // names the first positional argument when the command takes none.
  void allow(const char* command, std::initializer_list<const char*> known, bool positional = false) const;
};
// Flags taking no value ("--help").
Args parse_args(int argc, char** argv, int first);

int train(const Args& a);
int test(const Args& a);
int time(const Args& a);
int convert_mnist(const Args& a);
int make_digits(const Args& a);
int device_query(const Args& a);

}  // namespace taihu::caffe::cli
