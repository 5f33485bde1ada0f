// Log lines in glog's format, as Caffe writes them, so Caffe's tools
// (tools/extra/parse_log.py, plot_training_log.py) read taihu's logs unchanged:
//   I1121 13:15:00.123456  1234 solver.cpp:218] Iteration 100 (...), loss = 0.25
// Lines go to stderr (or a sink set by a test). When stderr is a terminal a progress
// bar may occupy its last line; log lines clear it first.
#pragma once
#include <functional>
#include <source_location>
#include <string>
#include <string_view>

namespace taihu::caffe {

enum class Severity { info, warning, error };

void log_line(Severity severity, std::string_view message,
              std::source_location where = std::source_location::current());
inline void log_info(std::string_view message,
                     std::source_location where = std::source_location::current()) {
  log_line(Severity::info, message, where);
}
inline void log_warning(std::string_view message,
                        std::source_location where = std::source_location::current()) {
  log_line(Severity::warning, message, where);
}

// Redirects the formatted lines (without trailing newline) to `sink`; an empty
// function restores stderr. For tests and embedding.
void set_log_sink(std::function<void(const std::string&)> sink);

// The glog prefix for `severity` at the current time ("I1121 13:15:00.123456  1234 file:line] ").
std::string glog_prefix(Severity severity, std::string_view file, unsigned line);

// A one-line progress bar on stderr, drawn only when stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar(std::string label, long total);
  ~ProgressBar();
  void update(long done, std::string_view note = {});
  void finish();
  static bool enabled();

 private:
  std::string label_;
  long total_;
  bool active_;
};

}  // namespace taihu::caffe
