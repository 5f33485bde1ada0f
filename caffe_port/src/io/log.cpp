// glog-format log lines and the terminal progress bar. See taihu/caffe/log.hpp.
#include "taihu/caffe/log.hpp"

#include <sys/time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>

namespace taihu::caffe {
namespace {

std::mutex g_mutex;
std::function<void(const std::string&)> g_sink;
bool g_bar_visible = false;

std::string_view basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void clear_bar_locked() {
  if (g_bar_visible) {
    std::fputs("\r\033[K", stderr);
    g_bar_visible = false;
  }
}

}  // namespace

std::string glog_prefix(Severity severity, std::string_view file, unsigned line) {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm tm{};
  ::localtime_r(&tv.tv_sec, &tm);
  const char level = severity == Severity::info ? 'I' : severity == Severity::warning ? 'W' : 'E';
  char buf[96];
  std::snprintf(buf, sizeof buf, "%c%02d%02d %02d:%02d:%02d.%06ld %5ld ", level, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long>(tv.tv_usec),
                static_cast<long>(::syscall(SYS_gettid)));
  std::string s(buf);
  s += basename(file);
  s += ':';
  s += std::to_string(line);
  s += "] ";
  return s;
}

void log_line(Severity severity, std::string_view message, std::source_location where) {
  std::string line = glog_prefix(severity, where.file_name(), where.line());
  line += message;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sink) {
    g_sink(line);
    return;
  }
  clear_bar_locked();
  line += '\n';
  std::fputs(line.c_str(), stderr);
}

void set_log_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_sink = std::move(sink);
}

bool ProgressBar::enabled() { return ::isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::string label, long total)
    : label_(std::move(label)), total_(total > 0 ? total : 1), active_(enabled()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(long done, std::string_view note) {
  if (!active_) return;
  constexpr int kWidth = 30;
  const double frac = static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(frac * kWidth + 0.5);
  std::string bar = "\r\033[K" + label_ + " [";
  for (int i = 0; i < kWidth; ++i) bar += i < filled ? '#' : '.';
  char tail[64];
  std::snprintf(tail, sizeof tail, "] %ld/%ld %3.0f%% ", done, total_, 100 * frac);
  bar += tail;
  bar += note;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sink) return;
  std::fputs(bar.c_str(), stderr);
  std::fflush(stderr);
  g_bar_visible = true;
}

void ProgressBar::finish() {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  clear_bar_locked();
  active_ = false;
}

}  // namespace taihu::caffe
