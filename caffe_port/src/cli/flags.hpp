// taihu-caffe's command-line flags, parsed as Caffe's tools/caffe.cpp gets them from
// gflags: Caffe's flags (--gpu, --solver, --model, --phase, --level, --stage,
// --snapshot, --weights, --iterations, --sigint_effect, --sighup_effect) are known to
// every command, as gflags' flags are global; taihu's own (--compress, --first, ...)
// only to the commands that read them.
// Contract: an unknown flag, an int32 flag with a non-int32 value, or a flag without
// its value throws FlagError with gflags' message, which main prints as gflags does
// ("ERROR: unknown command line flag 'foo'") and exits 1; a Caffe flag a command does
// not read is accepted (Caffe ignores it) with a warning.
#pragma once
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"

namespace taihu::caffe::cli {

// An error gflags itself reports, before any command runs.
class FlagError : public Error {
 public:
  using Error::Error;
};

struct Args {
  std::map<std::string, std::string> flags;  // name -> value (the last one given wins, as in gflags)
  std::vector<std::string> positional;
  bool has(const std::string& name) const { return flags.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  long get_int(const std::string& name, long fallback) const;  // throws naming the flag
  // get_int, and throws naming the flag and value when a given value is outside [lo, hi].
  long get_int(const std::string& name, long fallback, long lo, long hi) const;
  // Checks the flags against what `command` reads: `used` (Caffe's flags it reads and
  // taihu's flags it takes). A taihu flag it does not take is unknown (FlagError); a
  // Caffe flag it does not read is logged as ignored. Without `takes_positional`, a
  // positional argument is an error naming it.
  void allow(const char* command, std::initializer_list<const char*> used, bool takes_positional = false) const;
};

// gflags' syntax: --name=value, -name=value, --name value, -name value; "--" ends the
// flags; --help (-h) takes no value. Throws FlagError as described above.
Args parse_args(int argc, char** argv, int first);

// --stage's comma-separated list (empty items dropped).
std::vector<std::string> split_list(const std::string& list);

}  // namespace taihu::caffe::cli
