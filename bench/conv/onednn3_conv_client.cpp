// oneDNN 3.x convolution anchor: the client side of onednn3_conv_server (see
// onednn3_conv_client.hpp).
#include "onednn3_conv_client.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "anchor_registry.hpp"

namespace taihu::bench {

namespace {

// <dir of the running binary>/onednn3_conv_server, or "" when it was not built.
std::string server_path() {
  std::array<char, 4096> exe{};
  const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0) return "";
  std::string path(exe.data(), static_cast<std::size_t>(n));
  path = path.substr(0, path.rfind('/') + 1) + "onednn3_conv_server";
  return access(path.c_str(), X_OK) == 0 ? path : std::string();
}

const char* direction_word(dnn::ConvDirection dir) {
  return dir == dnn::ConvDirection::forward         ? "fwd"
         : dir == dnn::ConvDirection::backward_data ? "bwd_d"
                                                    : "bwd_w";
}

}  // namespace

// One running server: a child process with a pipe each way, one request line and one
// reply line at a time.
class Onednn3Server {
 public:
  // Starts it, or leaves ok() false after saying why on stderr (once per process).
  Onednn3Server(int threads, bool cpu_clock) {
    if (anchor_setting("TAIHU_ANCHOR_DNNL").empty()) {
      missing_anchor("oneDNN 3", "oneDNN 2.x");
      return;
    }
    const std::string exe = server_path();
    if (exe.empty()) {
      say_once("oneDNN 3 is installed but onednn3_conv_server was not built: re-run cmake on the build "
               "directory and build it (falling back to oneDNN 2.x)");
      return;
    }
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0) return;
    if (pipe(from_child) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
      close(to_child[0]);
      close(to_child[1]);
      close(from_child[0]);
      close(from_child[1]);
      enter_anchor_child(threads);
      execl(exe.c_str(), exe.c_str(), cpu_clock ? "--clock=cpu" : "--clock=wall", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    if (pid_ < 0) {
      close(to_child[1]);
      close(from_child[0]);
      return;
    }
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
    version_ = request("version");
    if (version_.rfind("oneDNN ", 0) != 0) {
      say_once("oneDNN 3 server did not start (" + (version_.empty() ? "no reply" : version_) +
               "): falling back to oneDNN 2.x");
      version_.clear();
    }
  }

  ~Onednn3Server() {
    if (to_ != nullptr) {
      std::fputs("quit\n", to_);
      std::fclose(to_);
    }
    if (from_ != nullptr) std::fclose(from_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

  bool ok() const { return !version_.empty(); }
  const std::string& version() const { return version_; }

  // Sends one line, returns the reply line ("" when the server is gone).
  std::string request(const std::string& line) {
    if (to_ == nullptr || from_ == nullptr) return "";
    if (std::fputs((line + "\n").c_str(), to_) < 0 || std::fflush(to_) != 0) return dead();
    std::string reply;
    for (int ch; (ch = std::fgetc(from_)) != EOF && ch != '\n';) reply += static_cast<char>(ch);
    return std::feof(from_) ? dead() : reply;
  }

 private:
  static void say_once(const std::string& what) {
    static bool said = false;
    if (!said) std::fprintf(stderr, "%s\n", what.c_str());
    said = true;
  }
  std::string dead() {
    say_once("oneDNN 3 server exited: its columns are missing from here on");
    std::fclose(to_);
    std::fclose(from_);
    to_ = from_ = nullptr;
    version_.clear();
    return "";
  }

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string version_;
};

namespace {
Onednn3Server* server_for(int threads, bool cpu_clock) {
  // A write to a server that died must not kill the benchmark.
  static const bool ignore_sigpipe = [] { return signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)ignore_sigpipe;
  static std::map<std::pair<int, bool>, std::unique_ptr<Onednn3Server>> servers;
  auto& s = servers[{threads, cpu_clock}];
  if (!s) s = std::make_unique<Onednn3Server>(threads, cpu_clock);
  return s->ok() ? s.get() : nullptr;
}
}  // namespace

Onednn3Conv::Onednn3Conv(const dnn::ConvDesc& d, dnn::ConvDirection dir, const std::string& algo, int threads,
                         bool cpu_clock)
    : server_(server_for(threads, cpu_clock)) {
  if (server_ == nullptr) return;
  const std::string reply = server_->request("setup " + d.str() + " " + direction_word(dir) + " " + algo);
  std::istringstream in(reply);
  std::string word;
  in >> word;
  if (word != "ok") {
    if (word == "error") std::fprintf(stderr, "onednn3_conv_server: %s\n", reply.c_str());
    return;  // "unavailable": this algorithm is not offered for the problem here
  }
  int slot = -1;
  in >> slot >> impl_ >> layout_;
  if (in) slot_ = slot;
}

Onednn3Conv::~Onednn3Conv() {
  if (available()) server_->request("free " + std::to_string(slot_));
}

double Onednn3Conv::run(bool flush) {
  if (!available()) return 0;
  const std::string reply =
      server_->request("run " + std::to_string(slot_) + " 1 " + (flush ? "flush" : "noflush"));
  std::istringstream in(reply);
  std::string word;
  double seconds = 0;
  in >> word >> seconds;
  if (word != "times") {
    slot_ = -1;  // the server failed this call: stop using it
    return 0;
  }
  return seconds;
}

std::string onednn3_version(int threads) {
  const Onednn3Server* s = server_for(threads, false);
  return s != nullptr ? s->version() : std::string();
}

}  // namespace taihu::bench
